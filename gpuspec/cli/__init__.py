"""The gpuspec command line."""
