"""Orchestration of the stages: validate, lint, render and verify, each above the parts it runs."""
