"""The handover package: per-cluster operations documents derived from the spec, the matrix and the render plan."""
