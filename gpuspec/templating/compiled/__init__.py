"""Jinja2's Python modules of gpuspec's templates (see :mod:`gpuspec.templating.precompiled`); generated, do not edit."""
