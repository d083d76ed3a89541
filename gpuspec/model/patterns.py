"""Patterns of spec names that modules other than the spec models check too (without building the models)."""

#: A DNS-1123 label: what Kubernetes accepts as a namespace or object name, and safe as a file name.
DNS_LABEL_PATTERN = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
