"""Compile a validated fleet into pinned Helm values, Kustomize overlays and GitOps objects, and write them.

Stages: :mod:`~gpuspec.render.compile` (Fleet + support matrix → :class:`~gpuspec.render.filetree.RenderPlan`,
pure data), :mod:`~gpuspec.render.serialize` (plan → bytes, deterministic YAML) and
:mod:`~gpuspec.render.writer` (bytes → ``rendered/``, atomic, only changed files rewritten).
"""
