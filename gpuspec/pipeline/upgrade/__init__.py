"""`gpuspec upgrade`: plan and apply the pull requests that take clusters to a target release, driver branch or
Kubernetes minor, each step checked by the lint engine against the step before."""
