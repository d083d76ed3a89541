"""Validation of the fleet spec: schema errors and reference checks (GS1xx)."""
