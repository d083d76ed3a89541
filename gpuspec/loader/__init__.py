"""Reading fleet files: fast YAML with limits, typed fleet building, lazy source positions."""
