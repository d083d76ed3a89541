"""The promotion gate: does the exported cluster (or one pool) really run the spec of the rendered revision?"""
