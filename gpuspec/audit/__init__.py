"""`gpuspec audit` and `gpuspec import`: exported node state (`kubectl get nodes -o json`) against the fleet spec."""
