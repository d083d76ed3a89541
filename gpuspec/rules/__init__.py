"""Lint rules: one small unit each, with id, title, rationale, default severity and parameters."""
