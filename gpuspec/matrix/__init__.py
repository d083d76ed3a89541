"""Support-matrix knowledge base: packaged data (``data/*.yaml``), its schema, loader and query API."""
