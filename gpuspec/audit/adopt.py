"""The policy pack of accepted deviations an imported cluster needs to validate as it runs (`gpuspec import --output`).

The exceptions name the findings and the cluster, and are bound to the release and Kubernetes minor the cluster
runs (``values``), so an upgrade to another state outside the matrix is not accepted by them; owner, reason and
expiry stay ``TODO: review`` so that validate reports GS009 until a person fills them in.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from gpuspec.findings import Finding, Severity
from gpuspec.policy.acceptance import refusal

TODO = "TODO: review"


def pack_name(cluster: str) -> str:
    """Name of the pack that holds an adopted cluster's exceptions."""
    return f"adopted-{cluster}"[:63].rstrip("-")


#: The findings an adoption accepts: the support matrix's, about the release and the platform the cluster runs
#: (GS2xx) and its MIG and sharing facts (GS3xx).  Air-gap, security and every other finding of the draft is
#: fixed in the draft (import carries what runs), never accepted.
ADOPTED_RULES = re.compile(r"^GS[23][0-9]{2}$")


def needed_rules(findings: Sequence[Finding], cluster_file: str) -> dict[str, list[str]]:
    """Rule id → messages of the error findings in ``cluster_file`` an adoption accepts (release and support-matrix
    findings, :data:`ADOPTED_RULES`)."""
    out: dict[str, list[str]] = {}
    for finding in findings:
        if finding.severity is not Severity.ERROR or refusal(finding.rule_id) is not None:
            continue
        if not ADOPTED_RULES.match(finding.rule_id):
            continue
        if finding.file is not None and not finding.file.replace("\\", "/").endswith(cluster_file):
            continue
        messages = out.setdefault(finding.rule_id, [])
        if finding.message not in messages:
            messages.append(finding.message)
    return dict(sorted(out.items()))


def adopted_values(draft: str) -> dict[str, str]:
    """What the drafted cluster runs that its exceptions are bound to: the operator release and the Kubernetes
    minor (the ``values`` of an exception, see :class:`gpuspec.policy.pack_models.AcceptedValues`)."""
    import yaml

    try:
        docs = [d for d in yaml.safe_load_all(draft) if isinstance(d, dict)]
    except yaml.YAMLError:
        return {}
    doc: dict[str, Any] = docs[0] if docs else {}
    operator = doc.get("operator") if isinstance(doc.get("operator"), dict) else {}
    kubernetes = doc.get("kubernetes") if isinstance(doc.get("kubernetes"), dict) else {}
    assert isinstance(operator, dict) and isinstance(kubernetes, dict)
    values = {"operator": operator.get("version"), "kubernetes": kubernetes.get("version")}
    return {key: str(value) for key, value in values.items() if isinstance(value, str | int | float) and value}


def adoption_pack(cluster: str, rules: dict[str, list[str]], extends: str = "default",
                  values: dict[str, str] | None = None) -> str:
    """The YAML text of the pack that accepts ``rules`` for ``cluster`` as it runs now (``values``: the release and
    Kubernetes minor the exception is bound to; owner, reason and expiry to fill in)."""
    doc = CommentedMap()
    doc["apiVersion"] = "gpuspec.io/v1alpha1"
    doc["kind"] = "PolicyPack"
    doc["metadata"] = CommentedMap([("name", pack_name(cluster)),
                                    ("description", f"Deviations cluster {cluster} runs with as adopted")])
    doc["extends"] = extends
    exceptions = CommentedSeq()
    if rules:
        exc = CommentedMap()
        exc["rules"] = CommentedSeq(rules)
        exc["rules"].fa.set_flow_style()
        exc["cluster"] = cluster
        exc["owner"] = TODO
        exc["reason"] = TODO
        exc["expires"] = TODO
        if values:  # bound to the adopted state: another release or minor outside the matrix is not accepted
            exc["values"] = CommentedMap(sorted(values.items()))
        exc.yaml_set_start_comment("\n".join(f"{rule}: {message}" for rule, messages in rules.items()
                                             for message in messages[:3]), indent=4)
        exceptions.append(exc)
    doc["exceptions"] = exceptions
    doc.yaml_set_start_comment(
        f"Written by `gpuspec import` for cluster {cluster}: what it runs today is outside the support matrix.\n"
        "Fill in owner, reason and expires (YYYY-MM-DD); validate reports GS009 until then.")
    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096
    stream = io.StringIO()
    yaml.dump(doc, stream)
    return stream.getvalue()
