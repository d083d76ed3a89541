"""What the Kubernetes API server refuses, checked offline: names, labels, selectors, CEL rules, immutable fields."""
