"""The fleet spec: typed models and effective-value resolution."""
