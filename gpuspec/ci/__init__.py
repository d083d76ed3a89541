"""Glue for CI systems that have no action of their own: small programs a CI job runs beside gpuspec."""
