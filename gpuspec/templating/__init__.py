"""Documents people read (handover, plan comment): Jinja2 templates, Markdown escaping, fleet-repo overrides."""
