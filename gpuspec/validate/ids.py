"""The GS1xx finding ids of `gpuspec validate`: title, severity and help of each, as reporter data."""

from __future__ import annotations

from gpuspec.report.base import RuleDoc

_E = "error"

#: GS1xx id → what reporters, `gpuspec rules` and `gpuspec explain` show about it.
VALIDATE_RULES: dict[str, RuleDoc] = {d.rule_id: d for d in (
    RuleDoc("GS100", "YAML cannot be read as fleet data", _E,
            "A YAML syntax error, a custom or language tag (!Ref, !!python/...), more than one document in a file, "
            "an anchor/alias expansion past 200,000 nodes or nesting deeper than 64 levels. The input is unusable "
            "(exit 2)."),
    RuleDoc("GS101", "File is unusable", _E,
            "The file is empty, larger than 1 MiB, not UTF-8, a directory or a broken link, or the fleet has no "
            "cluster files. The input is unusable (exit 2)."),
    RuleDoc("GS102", "Duplicate key", _E,
            "A mapping names the same key twice; YAML parsers disagree on which value wins, so gpuspec refuses it "
            "(exit 2)."),
    RuleDoc("GS103", "Unknown key", _E,
            "Every spec object forbids keys it does not define, so a typo is an error and never a silently ignored "
            "setting. The hint names the closest known key (exit 2)."),
    RuleDoc("GS104", "Wrong type or value", _E,
            "A value has the wrong type or breaks a pattern, enumeration or range: names must be DNS-1123 labels, "
            "Kubernetes versions look like \"1.31\", operator releases like \"v25.10.1\" (exit 2)."),
    RuleDoc("GS105", "Missing required key", _E, "A required key is absent (exit 2)."),
    RuleDoc("GS106", "Unsupported apiVersion or kind", _E,
            "The file is not a gpuspec.io/v1alpha1 Fleet or Cluster (exit 2)."),
    RuleDoc("GS110", "Cluster name differs from its file name", _E,
            "fleet/clusters/<name>.yaml must hold metadata.name <name>, so a cluster is found where its name says."),
    RuleDoc("GS111", "Duplicate name", _E,
            "Pools, tenants, mirrors, channels, PriorityClasses and tenant namespaces must be unique: they become "
            "object and file names."),
    RuleDoc("GS112", "Unresolved reference", _E,
            "A mirror, channel, canary pool, tenant pool, PriorityClass or policy pack that is referenced does not "
            "exist."),
    RuleDoc("GS113", "Both or neither of operator.version and operator.channel", _E,
            "A cluster pins an operator release or follows a channel, exactly one of the two."),
    RuleDoc("GS114", "MIG strategy and layout disagree", _E,
            "A MIG layout needs strategy single or mixed, and a MIG strategy needs exactly one of layout/custom."),
    RuleDoc("GS115", "Sharing mode and replicas disagree", _E,
            "time-slicing and MPS need replicas of 2 or more; replicas without a sharing mode mean nothing."),
)}
