"""Exports under the 256 MiB cap are read within about four times their size; past a count no cluster reaches
they are a clean exit 2 naming the file (issue 43: a 240 MB `kubectl get nodes -o json` used to end in
MemoryError at 4 GiB, 182 MB took 2.9 GB and a minute).

Each command runs in a process of its own, whose peak resident memory (``ru_maxrss`` of that one child, from
``os.wait4``) is compared with a run of the same command on a small export: the interpreter and gpuspec's own
baseline.  The exports are realistic, as `kubectl` prints them (indented, sorted keys): GPU nodes with their
NFD, GFD and operator labels and the 50 images the kubelet reports; acceptance Jobs and Pods with the spec and
status the Job controller and kubelet leave.  One item's JSON is written many times over, each with a name of
its own, so a 250 MB export takes well under a second to make.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gpuspec.acceptance.expected import read_rendered
from gpuspec.loader.exportread import MAX_NODES
from tests.audit.audit_fixtures import FLEET_DIR as AUDIT_FLEET
from tests.audit.audit_fixtures import NODES_DIR, h100
from tests.gate.gate_fixtures import job_list, passing_runs, pod, render_fleet

REPO = Path(__file__).resolve().parents[2]
MB = 1_000_000
#: Peak resident memory a run may add to the baseline, per byte of export.
BUDGET = 4

CPUID = ("ADX", "AESNI", "AMXBF16", "AMXINT8", "AMXTILE", "AVX", "AVX2", "AVX512BF16", "AVX512BITALG", "AVX512BW",
         "AVX512CD", "AVX512DQ", "AVX512F", "AVX512FP16", "AVX512IFMA", "AVX512VBMI", "AVX512VBMI2", "AVX512VL",
         "AVX512VNNI", "AVX512VPOPCNTDQ", "AVXVNNI", "CETIBT", "CETSS", "CLDEMOTE", "CMPXCHG8", "FMA3", "FSRM",
         "FXSR", "FXSROPT", "GFNI", "HYPERVISOR", "IA32_ARCH_CAP", "IBPB", "LAHF", "MOVBE", "MOVDIR64B", "MOVDIRI",
         "OSXSAVE", "PCONFIG", "SERIALIZE", "SHA", "SPEC_CTRL_SSBD", "STIBP", "SYSCALL", "SYSEE", "TSXLDTRK", "VAES",
         "VMX", "VPCLMULQDQ", "WAITPKG", "WBNOINVD", "X87", "XGETBV1", "XSAVE", "XSAVEC", "XSAVEOPT", "XSAVES")
NAME = "NAME-PLACEHOLDER"


def realistic_node() -> dict[str, Any]:
    """An H100 node of the audit fixtures as a real cluster shows it: NFD's full label set, cloud labels,
    the annotations NFD and the CSI driver write, and the 50 images the kubelet reports (about 30 KB)."""
    node = h100(NAME)
    labels = node["metadata"]["labels"]
    labels.update({f"feature.node.kubernetes.io/cpu-cpuid.{flag}": "true" for flag in CPUID})
    labels.update({"feature.node.kubernetes.io/cpu-hardware_multithreading": "true",
                   "feature.node.kubernetes.io/cpu-model.family": "6", "feature.node.kubernetes.io/cpu-model.id": "143",
                   "feature.node.kubernetes.io/memory-numa": "true",
                   "feature.node.kubernetes.io/network-sriov.capable": "true",
                   "feature.node.kubernetes.io/pci-1d0f.present": "true",
                   "feature.node.kubernetes.io/storage-nonrotationaldisk": "true",
                   "eks.amazonaws.com/nodegroup": "gpu-h100", "eks.amazonaws.com/capacityType": "ON_DEMAND",
                   "k8s.amazonaws.com/accelerator": "nvidia-tesla-h100"})
    node["metadata"]["annotations"].update({
        "nfd.node.kubernetes.io/feature-labels": ",".join(k.split("/", 1)[1] for k in labels
                                                          if k.startswith("feature.node")),
        "nfd.node.kubernetes.io/extended-resources": "", "nfd.node.kubernetes.io/master.version": "v0.17.3",
        "csi.volume.kubernetes.io/nodeid": json.dumps({"ebs.csi.aws.com": "i-0abc0123456789def"}),
        "alpha.kubernetes.io/provided-node-ip": "10.0.12.34"})
    node["status"]["images"] = [{"names": [f"nvcr.io/nvidia/k8s/image-{i}@sha256:" + f"{i:02d}" * 32,
                                           f"nvcr.io/nvidia/k8s/image-{i}:v25.3.{i}-ubuntu22.04"],
                                 "sizeBytes": 123456789 + i} for i in range(50)]
    node["status"]["daemonEndpoints"] = {"kubeletEndpoint": {"Port": 10250}}
    node["status"]["addresses"] += [{"type": "InternalIP", "address": "10.0.12.34"},
                                    {"type": "InternalDNS", "address": f"{NAME}.ec2.internal"}]
    return node


def realistic_pod(job_name: str, namespace: str) -> dict[str, Any]:
    """A passed acceptance Pod of ``job_name`` as the kubelet leaves it: the spec the Job controller fills in
    (service account token volume, default tolerations) and the full status (about 6 KB)."""
    item = pod(job_name, "h100", "gpu-h100-0", "passed", message=json.dumps({"busbw_gbps": 410.0}))
    item["metadata"].update({"name": NAME, "namespace": namespace, "uid": "6c0a9d1e-4a8e-4d7c-9a7b-3c2e1f0d9b8a",
                             "resourceVersion": "123456789", "generateName": f"{job_name}-"})
    container = {
        "name": "gpu", "image": "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubuntu22.04",
        "imagePullPolicy": "IfNotPresent", "command": ["/bin/sh", "-c", "nvidia-smi -L && /cuda-samples/vectorAdd"],
        "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}, {"name": "JOB_COMPLETION_INDEX", "valueFrom": {
            "fieldRef": {"apiVersion": "v1",
                         "fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}],
        "resources": {"limits": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "8"},
                      "requests": {"cpu": "100m", "memory": "128Mi", "nvidia.com/gpu": "8"}},
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]},
                            "runAsNonRoot": True, "runAsUser": 65534, "seccompProfile": {"type": "RuntimeDefault"}},
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "FallbackToLogsOnError",
        "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                          "name": "kube-api-access-x7k2p", "readOnly": True}]}
    item["spec"].update({
        "containers": [container], "dnsPolicy": "ClusterFirst", "enableServiceLinks": True,
        "nodeSelector": {"acme.example/gpu-pool": "h100"}, "preemptionPolicy": "PreemptLowerPriority", "priority": 0,
        "schedulerName": "default-scheduler", "securityContext": {}, "serviceAccount": "default",
        "serviceAccountName": "default", "terminationGracePeriodSeconds": 30,
        "tolerations": [{"effect": "NoSchedule", "key": "acme.example/gpu", "operator": "Equal", "value": "h100"},
                        {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists",
                         "tolerationSeconds": 300},
                        {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists",
                         "tolerationSeconds": 300}],
        "volumes": [{"name": "kube-api-access-x7k2p", "projected": {"defaultMode": 420, "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
            {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                        "path": "namespace"}]}}]}}]})
    status = item["status"]
    status.update({"hostIP": "10.0.12.34", "hostIPs": [{"ip": "10.0.12.34"}], "podIP": "10.0.77.12",
                   "podIPs": [{"ip": "10.0.77.12"}], "qosClass": "Burstable"})
    status["conditions"] += [{"type": "PodReadyToStartContainers", "status": "False", "lastProbeTime": None,
                              "lastTransitionTime": "2026-08-20T04:00:45Z"},
                             {"type": "Initialized", "status": "True", "lastProbeTime": None,
                              "lastTransitionTime": "2026-08-20T04:00:01Z"},
                             {"type": "ContainersReady", "status": "False", "reason": "PodCompleted",
                              "lastProbeTime": None, "lastTransitionTime": "2026-08-20T04:00:45Z"}]
    status["containerStatuses"][0].update({
        "containerID": "containerd://" + "3f" * 32, "image": container["image"],
        "imageID": "nvcr.io/nvidia/k8s/cuda-sample@sha256:" + "9c" * 32, "lastState": {},
        "volumeMounts": [{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                          "name": "kube-api-access-x7k2p", "readOnly": True, "recursiveReadOnly": "Disabled"}]})
    return item


def write_list(path: Path, items: Iterator[str], size: int) -> int:
    """Write a `kubectl`-shaped List of ``items`` (JSON texts, indented one level) until it holds ``size`` bytes;
    the number of items."""
    count = 0
    with path.open("w", encoding="utf-8") as out:
        written = out.write('{\n    "apiVersion": "v1",\n    "items": [\n')
        for text in items:
            written += out.write((",\n" if count else "") + text)
            count += 1
            if written >= size:
                break
        out.write('\n    ],\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n')
    return count


def indented(item: dict[str, Any]) -> str:
    """``item`` as kubectl prints it inside a List's items."""
    return "\n".join("        " + line for line in json.dumps(item, indent=4, sort_keys=True).splitlines())


def nodes_export(path: Path, size: int) -> int:
    """An export of realistic H100 nodes gpu-h100-000000, gpu-h100-000001, ... of ``size`` bytes."""
    text = indented(realistic_node())
    return write_list(path, (text.replace(NAME, f"gpu-h100-{i:06d}") for i in range(10**7)), size)


def jobs_export(path: Path, size: int, rendered_dir: Path) -> int:
    """An export in which every acceptance Job of the rendered revision passed, padded to ``size`` bytes with more
    realistic pods: the first 15,000 of the first Job, the rest of other namespaces (an export with ``-A``)."""
    expected = list(read_rendered(rendered_dir, "lab").jobs)
    own = [indented(item) for item in job_list(passing_runs(expected))["items"]]
    first = expected[0].name
    mine = indented(realistic_pod(first, "gpuspec-acceptance"))
    theirs = indented(realistic_pod("batch-training", "team-ml"))

    def items() -> Iterator[str]:
        yield from own
        for i in range(10**7):
            yield (mine if i < 15_000 else theirs).replace(NAME, f"{first}-{i:06d}")

    return write_list(path, items(), size)


@dataclass(frozen=True)
class Run:
    """Exit code, output and peak resident memory (bytes) of one gpuspec process."""

    code: int
    out: str
    err: str
    peak: int


def run_measured(args: list[str], tmp_path: Path) -> Run:
    """Run `gpuspec ARGS` in a process of its own; its exit code, output and peak resident memory."""
    out_path, err_path = tmp_path / "run.out", tmp_path / "run.err"
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO)}
    env.pop("GPUSPEC_DEBUG", None)
    with out_path.open("wb") as out, err_path.open("wb") as err:
        child = subprocess.Popen([sys.executable, "-m", "gpuspec.cli.main", *args], stdin=subprocess.DEVNULL,
                                 stdout=out, stderr=err, cwd=REPO, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    result = Run(child.returncode, out_path.read_text(errors="replace"), err_path.read_text(errors="replace"),
                 usage.ru_maxrss * 1024)  # kilobytes on Linux
    assert "Traceback" not in result.err and "internal error" not in result.err, result.err[-2000:]
    assert result.code in (0, 1, 2), (result.code, result.err[-2000:])
    return result


@pytest.fixture(scope="module")
def rendered_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The gate fixture fleet rendered by the real `gpuspec render` (the acceptance Jobs of cluster lab)."""
    return render_fleet(tmp_path_factory.mktemp("rendered"))


def _audit(nodes: Path) -> list[str]:
    return ["audit", "--cluster", "lab", "--nodes", str(nodes), str(AUDIT_FLEET)]


def _acceptance(jobs: Path, rendered_dir: Path) -> list[str]:
    return ["acceptance", "report", "--cluster", "lab", "--jobs", str(jobs), "--rendered", str(rendered_dir)]


def _within_budget(big: Run, base: Run, size: int) -> None:
    grown = big.peak - base.peak
    print(f"export {size / MB:.0f} MB: peak {big.peak / MB:.0f} MB, baseline {base.peak / MB:.0f} MB, "
          f"{grown / size:.2f} times its size")
    assert grown <= BUDGET * size, f"peak {big.peak / MB:.0f} MB, baseline {base.peak / MB:.0f} MB, export " \
                                   f"{size / MB:.0f} MB: {grown / size:.1f} times its size"


@pytest.mark.parametrize("megabytes", [100, 250])
def test_node_exports_are_read_within_four_times_their_size(megabytes: int, tmp_path: Path) -> None:
    base = run_measured(_audit(NODES_DIR / "healthy.json"), tmp_path)
    assert base.code == 0, base.err
    export = tmp_path / "nodes.json"
    try:
        count = nodes_export(export, megabytes * MB)
        assert count < MAX_NODES
        size = export.stat().st_size
        result = run_measured(_audit(export), tmp_path)
        assert result.code in (0, 1) and f"nodeSelector matches {count}" in result.out, result.err[-2000:]
        _within_budget(result, base, size)
        if megabytes == 100:  # import reads the same nodes (and drafts a pool of them)
            drafted = run_measured(["import", "--name", "lab", "--nodes", str(export)], tmp_path)
            assert drafted.code == 0, drafted.err[-2000:]
            _within_budget(drafted, base, size)
    finally:
        export.unlink(missing_ok=True)


@pytest.mark.parametrize("megabytes", [100, 250])
def test_job_exports_are_read_within_four_times_their_size(megabytes: int, rendered_dir: Path,
                                                           tmp_path: Path) -> None:
    small = tmp_path / "small.json"
    small.write_text(json.dumps(job_list(passing_runs(list(read_rendered(rendered_dir, "lab").jobs))), indent=4))
    base = run_measured(_acceptance(small, rendered_dir), tmp_path)
    assert base.code == 0, base.err
    export = tmp_path / "jobs.json"
    try:
        jobs_export(export, megabytes * MB, rendered_dir)
        size = export.stat().st_size
        result = run_measured(_acceptance(export, rendered_dir), tmp_path)
        assert result.code == 0, result.err[-2000:]
        _within_budget(result, base, size)
    finally:
        export.unlink(missing_ok=True)


def test_more_nodes_than_any_cluster_has_is_a_clean_error(tmp_path: Path) -> None:
    export = tmp_path / "nodes.json"
    text = indented({"kind": "Node", "metadata": {"name": NAME, "labels": {"nvidia.com/gpu.present": "true"}}})
    write_list(export, (text.replace(NAME, f"n{i:08d}") for i in range(MAX_NODES + 1)), 10**9)
    result = run_measured(_audit(export), tmp_path)
    assert result.code == 2 and result.out == ""
    assert f"{export}: more than {MAX_NODES:,} nodes" in result.err and "5,000 nodes per cluster" in result.err


def test_more_acceptance_objects_than_a_namespace_holds_is_a_clean_error(rendered_dir: Path,
                                                                         tmp_path: Path) -> None:
    from gpuspec.loader.exportread import MAX_NAMESPACE_OBJECTS

    export = tmp_path / "jobs.json"
    text = indented({"kind": "Pod", "metadata": {"name": NAME, "namespace": "gpuspec-acceptance"}})
    write_list(export, (text.replace(NAME, f"p{i:08d}") for i in range(MAX_NAMESPACE_OBJECTS + 1)), 10**9)
    result = run_measured(_acceptance(export, rendered_dir), tmp_path)
    assert result.code == 2 and f"{export}: more than {MAX_NAMESPACE_OBJECTS:,} Jobs and Pods" in result.err


# --- the reader itself: pieces cut anywhere --------------------------------------------------------------------

@pytest.mark.parametrize("piece", [1, 7, 4096])
def test_items_cut_anywhere_read_as_json_reads_them(piece: int, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuspec.loader import exportread

    monkeypatch.setattr(exportread, "_PIECE", piece)
    document = json.loads((NODES_DIR / "healthy.json").read_text())
    document["items"][0]["metadata"]["labels"]["ünïcode/ключ"] = "値 ✓"
    document["items"][1]["status"]["numbers"] = [12345678901234567890, -1.5e-300, 0, True, None]
    for indent in (None, 4):
        path = tmp_path / "nodes.json"
        path.write_text(json.dumps(document, indent=indent, ensure_ascii=False), encoding="utf-8")
        reading = exportread.ListReader(exportread.open_export(str(path)), str(path))
        assert list(reading.items()) == document["items"]
        assert reading.streamed and reading.document == {k: v for k, v in document.items() if k != "items"}


@pytest.mark.parametrize("piece", [1, 5, 4096])
@pytest.mark.parametrize("text", [
    '{\n  "kind": "List",\n  "items": [\n    {"metadata": {"name": "a"}}\n    {"metadata": {}}\n  ]\n}\n',
    '{"items": [}',
    '{"items": [{"a": 1}, {"a": tru}]}',
    '{"items": []} x',
    '\n\n  {"a": "unterminated',
    '{"items": [1,]}',
    '{"kind": "List", "items": [{"a": 1}]',
    '{"items": [{"a": 1}] "kind": "List"}',
    '{"items": [{"a": 1}], 5: 1}',
    '\ufeff{"items": []}',
    '',
])
def test_syntax_errors_name_line_and_column_as_json_does_wherever_the_pieces_end(
        piece: int, text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuspec.errors import GpuspecError
    from gpuspec.loader import exportread

    monkeypatch.setattr(exportread, "_PIECE", piece)
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    path = tmp_path / "x.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(GpuspecError) as info:
        list(exportread.ListReader(exportread.open_export(str(path)), "x.json").items())
    assert str(info.value).startswith(f"x.json:{expected.value.lineno}:{expected.value.colno}: invalid JSON: "
                                      f"{expected.value.msg}"), str(info.value)


def test_an_object_larger_than_any_the_api_stores_is_refused(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from gpuspec.audit.inventory import parse_nodes
    from gpuspec.errors import GpuspecError
    from gpuspec.loader.exportread import MAX_OBJECT_CHARS, open_export

    path = tmp_path / "nodes.json"
    long_name = "b" * MAX_OBJECT_CHARS
    path.write_text('{"items": [{"metadata": {"name": "a"}}, {"metadata": {"name": "' + long_name + '"}}]}')
    with pytest.raises(GpuspecError, match=r"nodes\.json: items\[1\] is larger than 8 MiB"):
        parse_nodes(open_export(str(path)), str(path))
    path.write_text("[" + "1," * (MAX_OBJECT_CHARS // 2) + "1]")
    with pytest.raises(GpuspecError, match=r"nodes\.json: the document is larger than 8 MiB"):
        parse_nodes(open_export(str(path)), str(path))


def test_nodes_packed_with_conditions_stop_before_they_fill_memory(tmp_path: Path) -> None:
    """Thousands of tiny conditions per node (13 bytes of JSON each, a model of some 600 bytes kept)."""
    export = tmp_path / "nodes.json"
    conditions = ",".join(f'{{"type":"c{j}"}}' for j in range(2000))
    text = '{"metadata":{"name":"NAME-PLACEHOLDER"},"status":{"conditions":[' + conditions + "]}}"
    write_list(export, (text.replace(NAME, f"n{i:06d}") for i in range(5000)), 10**9)
    result = run_measured(_audit(export), tmp_path)
    assert result.code == 2 and "keep more labels, conditions, taints and statuses" in result.err
    assert result.peak < 400 * MB


def test_helm_exports_are_bounded(tmp_path: Path) -> None:
    from gpuspec.audit.running import read_helm_values
    from gpuspec.errors import GpuspecError
    from gpuspec.loader.exportread import MAX_HELM_BYTES, MAX_YAML_BYTES, open_export

    values = {f"key{i}": {"enabled": True} for i in range(MAX_YAML_BYTES // 20)}
    path = tmp_path / "values.json"
    path.write_text(json.dumps(values))
    assert read_helm_values(open_export(str(path)), "values.json") == values  # JSON past the YAML bound
    path.write_text(json.dumps({"a": "x" * MAX_HELM_BYTES}))
    with pytest.raises(GpuspecError, match=r"values\.json: is .* bytes, larger than the 4194304-byte limit"):
        read_helm_values(open_export(str(path)), str(path).replace(str(tmp_path) + "/", ""))
    path.write_text("\n".join(f"key{i}: {{enabled: true}}" for i in range(MAX_YAML_BYTES // 20)))
    with pytest.raises(GpuspecError, match="a YAML export larger than 1 MiB"):
        read_helm_values(open_export(str(path)), "values.yaml")
