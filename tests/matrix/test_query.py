"""Unit tests of the support-matrix query API, including its "unknown" (None) answers."""

from __future__ import annotations

import datetime as dt

import pytest

from gpuspec.matrix import component_query as cq
from gpuspec.matrix import mig_query as mq
from gpuspec.matrix import query as q
from gpuspec.matrix.data_models import Image

# ---------------------------------------------------------------- versions and lifecycle


def test_release_accepts_both_spellings_and_rejects_unknown() -> None:
    a, b = q.release("v25.10.1"), q.release("25.10.1")
    assert a is not None and a is b and a.line == "25.10"
    assert q.release("25.10.2") is None
    assert q.release("garbage") is None


def test_parse_and_normalize_version() -> None:
    assert q.parse_version("v26.3.1") == (26, 3, 1)
    assert q.parse_version("26.3") == (26, 3)
    assert q.parse_version("26.x") is None
    assert q.normalize_version("v24.9.0") == "24.9.0"
    assert q.normalize_version("latest") is None


@pytest.mark.parametrize(
    ("asked", "nearest"),
    [("25.10.1", "25.10.1"), ("v25.10.7", "25.10.1"), ("26.3.9", "26.3.3"), ("25.3.5", "25.3.4"),
     ("27.1.0", "26.7.0"), ("23.6.0", "23.9.0"), ("25.4.0", "25.3.4"), ("26.6.0", "26.3.3")],
)  # fmt: skip
def test_nearest_release(asked: str, nearest: str) -> None:
    rel = q.nearest_release(asked)
    assert rel is not None and rel.version == nearest


def test_nearest_release_of_non_version_is_none() -> None:
    assert q.nearest_release("stable") is None


def test_line_of() -> None:
    assert q.line_of("v25.10.1") == "25.10"
    assert q.line_of("25.10") == "25.10"
    assert q.line_of("25.11.0") is None
    assert q.line_of("nope") is None


def test_latest_release() -> None:
    assert q.latest_release().version == "26.7.0"  # type: ignore[union-attr]
    assert q.latest_release("25.3").version == "25.3.4"  # type: ignore[union-attr]
    assert q.latest_release("22.9") is None


@pytest.mark.parametrize(
    ("line", "status"),
    [("26.7", "supported"), ("26.3", "deprecated"), ("v26.3.1", "deprecated"), ("25.10", "end-of-support"),
     ("23.9", "end-of-support"), ("22.9", "unknown")],
)  # fmt: skip
def test_line_status_at_data_date(line: str, status: str) -> None:
    assert q.line_status(line) == status


def test_line_status_follows_the_policy_over_time() -> None:
    assert q.line_status("24.3", dt.date(2024, 6, 1)) == "supported"
    assert q.line_status("23.9", dt.date(2024, 6, 1)) == "deprecated"
    assert q.line_status("23.9", dt.date(2024, 8, 1)) == "end-of-support"
    assert q.line_status("26.3", dt.date(2026, 5, 1)) == "supported"


def test_line_status_is_unknown_outside_what_the_data_can_tell() -> None:
    assert q.line_status("26.7", dt.date(2026, 1, 1)) == "unknown"  # not yet released
    assert q.line_status("26.7", dt.date(2026, 9, 1)) == "unknown"  # after the data date
    assert q.line_status("24.9", dt.date(2030, 1, 1)) == "end-of-support"  # ended stays ended


@pytest.mark.parametrize(
    ("a", "b", "ok", "word"),
    [("25.3.4", "25.10.1", True, "next line"), ("26.3.0", "26.3.3", True, "within"),
     ("25.3.4", "26.3.0", False, "skips line(s) 25.10"), ("26.3.0", "25.10.1", False, "downgrade"),
     ("26.3.3", "26.3.0", False, "downgrade"), ("v26.7.0", "26.7.0", True, "same")],
)  # fmt: skip
def test_upgrade_supported(a: str, b: str, ok: bool, word: str) -> None:
    verdict, reason = q.upgrade_supported(a, b)
    assert verdict is ok and word in reason


def test_upgrade_supported_unknown() -> None:
    assert q.upgrade_supported("22.9.0", "23.9.0")[0] is None
    assert q.upgrade_supported("26.7.0", "x")[0] is None


# ---------------------------------------------------------------- platforms


def test_kubernetes_supported_ranges_and_patch_limits() -> None:
    assert q.kubernetes_supported("26.7", "kubernetes", "1.36") is True
    assert q.kubernetes_supported("26.7", "upstream", "1.31") is False
    assert q.kubernetes_supported("25.10", "kubernetes", "1.35") is True
    assert q.kubernetes_supported("25.10.0", "kubernetes", "1.35") is False  # 1.35 added in 25.10.1
    assert q.kubernetes_supported("25.10.1", "kubernetes", "1.35") is True
    assert q.kubernetes_supported("23.9.1", "kubernetes", "1.29") is False
    assert q.kubernetes_supported("23.9.2", "kubernetes", "1.29") is True
    assert q.kubernetes_supported("24.6.0", "kubernetes", "1.22") is True
    assert q.kubernetes_supported("24.6.2", "kubernetes", "1.22") is False


def test_kubernetes_supported_per_distribution() -> None:
    assert q.kubernetes_supported("26.7", "OpenShift", "4.18") is True
    assert q.kubernetes_supported("26.7", "ocp", "4.17") is False
    assert q.kubernetes_supported("23.9.0", "openshift", "4.9") is True
    assert q.kubernetes_supported("26.7", "EKS", "1.33") is True
    assert q.kubernetes_supported("24.9", "eks", "1.29") is False
    assert q.kubernetes_supported("25.3", "microk8s", "1.26") is True
    assert q.kubernetes_supported("25.3", "microk8s", "1.27") is False
    assert q.kubernetes_supported("26.7", "nkp", "2.16") is True


def test_kubernetes_supported_per_os_row() -> None:
    assert q.kubernetes_supported("26.7", "kubernetes", "1.32", os_id="ubuntu", os_version="24.04") is True
    assert q.kubernetes_supported("26.7", "kubernetes", "1.32", os_id="ubuntu", os_version="22.04") is False
    assert q.kubernetes_supported("26.7", "kubernetes", "1.33", os_id="ubuntu", os_version="20.04") is False


def test_kubernetes_supported_unknown() -> None:
    assert q.kubernetes_supported("26.7", "aks", "1.33") is None  # AKS column gone in 26.x docs
    assert q.kubernetes_supported("25.10", "k3s", "1.33") is None  # no K3s column in 25.10 docs
    assert q.kubernetes_supported("22.9", "kubernetes", "1.25") is None
    assert q.kubernetes_supported("26.7", "nomad", "1.0") is None
    assert q.kubernetes_supported("26.7", "kubernetes", "1.33", os_id="plan9") is None


def test_kubernetes_ranges() -> None:
    ranges = q.kubernetes_ranges("26.7")
    assert ranges is not None and "1.32-1.36" in ranges["kubernetes"] and ranges["openshift"] == ["4.18-4.22"]
    assert q.kubernetes_ranges("1.0") is None


def test_os_supported() -> None:
    assert q.os_supported("26.7", "ubuntu", "24.04") is True
    assert q.os_supported("26.7", "ubuntu", "20.04") is False
    assert q.os_supported("25.10", "ubuntu", "20.04") is True
    assert q.os_supported("26.7", "RHEL", "9.4") is True
    assert q.os_supported("26.7", "rhel", "9.5") is False
    assert q.os_supported("25.3", "rhel", "9.5") is True
    assert q.os_supported("24.9", "rhel", "9.4") is False
    assert q.os_supported("23.9", "rhel", "8.7") is True  # "RHEL 8.4 / 8.6-8.9"
    assert q.os_supported("26.7", "rhcos", "4.18") is True
    assert q.os_supported("26.7", "rocky", "10.1") is True
    assert q.os_supported("26.7", "sles", "15") is False


def test_os_supported_unknown() -> None:
    assert q.os_supported("22.9", "ubuntu", "22.04") is None
    assert q.os_supported("26.7", "haiku", "1") is None


def test_operating_systems_keep_original_text() -> None:
    oses = q.operating_systems("26.7")
    assert oses is not None and ("rhel", ["8.8", "8.10"], "RHEL 8.8 / 8.10") in oses
    assert q.operating_systems("9.9") is None


def test_runtime_supported() -> None:
    assert q.runtime_supported("26.7", "containerd") is True
    assert q.runtime_supported("26.7", "cri-o", os_id="rhcos") is True
    assert q.runtime_supported("26.7", "containerd", os_id="rhcos") is False
    assert q.runtime_supported("24.9", "crio", os_id="centos", os_version="7") is False
    assert q.runtime_supported("26.7", "containerd", os_id="rhel", os_version="9.4") is True
    assert q.runtime_supported("26.7", "docker") is False
    assert q.runtime_supported("26.7", "containerd", runtime_version="2.3.1") is True
    assert q.runtime_supported("26.7", "containerd", runtime_version="1.7.30") is False
    assert q.runtime_supported("26.3", "containerd", runtime_version="v1.7.30") is True


def test_runtime_supported_unknown() -> None:
    assert q.runtime_supported("26.7", "cri-o", os_id="ubuntu", os_version="26.04") is None  # cell "--"
    assert q.runtime_supported("26.7", "containerd", os_id="rocky", os_version="9.7") is None  # no row
    assert q.runtime_supported("26.7", "podman") is None
    assert q.runtime_supported("21.1", "containerd") is None


# ---------------------------------------------------------------- drivers


def test_driver_branch_supported() -> None:
    assert q.driver_branch_supported("25.10.1", "580") is True
    assert q.driver_branch_supported("25.10.1", "R610") is True
    assert q.driver_branch_supported("26.7.0", "570") is False
    assert q.driver_branch_supported("23.9.0", "470") is True
    assert q.driver_branch_supported("99.1.0", "580") is None


def test_driver_version_known() -> None:
    assert q.driver_version_known("26.7.0", "595.91.07") is True
    assert q.driver_version_known("25.3.0", "570.124.06") is True  # chart default at the tag, not in the docs column
    assert q.driver_version_known("26.7.0", "595.91.08") is False
    assert q.driver_version_known("1.0.0", "595.91.07") is None


def test_default_driver() -> None:
    assert q.default_driver("v25.10.1") == "580.105.08"
    assert q.default_driver("25.10.9") is None


# ---------------------------------------------------------------- GPUs


def test_gpu_product_lookup_and_aliases() -> None:
    p = q.gpu_product("h100-sxm5-80gb")
    assert p is not None and p.architecture == "Hopper" and p.mig_capable is True and p.memory_gb == 80
    assert q.gpu_product("A30") is q.gpu_product("A30-24GB")
    assert q.gpu_product("GH200").id == "GH200-96GB"  # type: ignore[union-attr]
    assert q.gpu_product("H100 NVL").id == "H100-NVL-94GB"  # type: ignore[union-attr]
    assert q.gpu_product("RTX-9090") is None


def test_gpu_product_unknown_facts_stay_unknown() -> None:
    a100x = q.gpu_product("A100X")
    assert a100x is not None and a100x.mig_capable == "unknown" and a100x.memory_gb == "unknown"
    b200 = q.gpu_product("B200")
    assert b200 is not None and b200.memory_gb == "unknown" and b200.mig_capable is True


def test_gpu_listed() -> None:
    assert q.gpu_listed("26.7", "B200") is True
    assert q.gpu_listed("24.9", "B200") is False
    assert q.gpu_listed("26.7", "GB200", "aarch64") is True
    assert q.gpu_listed("25.3", "GB200", "arm64") is False
    assert q.gpu_listed("23.9", "QUADRO-RTX-8000") is True  # listed as "NVIDIA RTX A8000" then
    assert q.gpu_listed("26.7", "PG506-96GB") is False


def test_gpu_listed_unknown() -> None:
    assert q.gpu_listed("26.7", "RTX-9090") is None
    assert q.gpu_listed("20.1", "T4") is None
    assert q.gpu_listed("26.7", "T4", "riscv") is None


def test_gpu_driver_requirement() -> None:
    assert q.gpu_driver_requirement("B200", "570.133.20") == (True, "B200 needs driver 570.133.20 or later")
    ok, reason = q.gpu_driver_requirement("B200", "570.124.06")  # type: ignore[misc]
    assert ok is False and "570.133.20" in reason
    assert q.gpu_driver_requirement("T4", "535.1.1") is None


# ---------------------------------------------------------------- MIG


def test_parse_mig_profile() -> None:
    p = mq.parse_mig_profile("1g.24gb+me.all")
    assert p is not None and (p.compute_slices, p.memory_gb, p.suffix) == (1, 24, "+me.all")
    assert mq.parse_mig_profile("big") is None


def test_mig_strategies() -> None:
    assert mq.mig_strategies() == ["none", "single", "mixed"]


def test_mig_profiles() -> None:
    a30 = mq.mig_profiles("A30-24GB")
    assert a30 is not None and {p.name: p.max_instances for p in a30}["1g.6gb"] == 4
    h100 = mq.mig_profiles("H100-SXM5-80GB")
    assert h100 is not None and {p.name for p in h100} >= {"1g.10gb", "3g.40gb", "7g.80gb"}


def test_mig_profiles_history_for_gb200() -> None:
    old = mq.mig_profiles("GB200", "25.3.1")
    new = mq.mig_profiles("GB200", "25.3.3")
    assert old is not None and "7g.189gb" in {p.name for p in old}
    assert new is not None and "7g.186gb" in {p.name for p in new}


def test_mig_profiles_unknown() -> None:
    assert mq.mig_profiles("A100X") is None
    assert mq.mig_profiles("H20") is None  # MIG capable, profiles unknown
    assert mq.mig_profiles("RTX-9090") is None


def test_mig_group() -> None:
    g = mq.mig_group("A30")
    assert g is not None and g.compute_slices_total == 4
    assert mq.mig_group("a100-40gb") is not None
    assert mq.mig_group("T4") is None


def test_mig_layout_and_availability() -> None:
    lay = mq.mig_layout("all-1g.10gb")
    assert lay is not None and lay.first_seen == "23.9.0"
    assert mq.mig_layout("all-2g.7gb") is None
    names_2390 = {lay.name for lay in mq.mig_layouts("23.9.0")}
    assert "all-enabled" not in names_2390 and "all-balanced" in names_2390
    assert "all-enabled" in {lay.name for lay in mq.mig_layouts("v24.3.0")}
    assert len(mq.mig_layouts()) == 81


@pytest.mark.parametrize(
    ("product", "devices", "ok"),
    [("A100-SXM4-40GB", {"3g.20gb": 1, "4g.20gb": 1}, True),
     ("A100-SXM4-40GB", {"1g.5gb": 7}, True),
     ("A100-SXM4-40GB", {"3g.20gb": 2, "2g.10gb": 1}, False),  # 8 slices of 7
     ("A100-SXM4-40GB", {"1g.10gb": 5}, False),  # limit 4
     ("A100-SXM4-40GB", {"1g.10gb": 2, "3g.40gb": 1}, False),  # 3g.40gb is an 80GB profile
     ("A30-24GB", {"2g.12gb": 2}, True),
     ("A30-24GB", {"4g.24gb": 1, "1g.6gb": 1}, False),
     ("T4", {"1g.5gb": 1}, False),  # Turing has no MIG
     ("A100X", {"1g.5gb": 1}, None)],
)  # fmt: skip
def test_check_mig_layout(product: str, devices: dict[str, int], ok: bool | None) -> None:
    result = mq.check_mig_layout(product, devices)
    assert result.ok is ok
    assert bool(result.problems) is (ok is not True)


def test_check_named_layout() -> None:
    r = mq.check_named_layout("all-1g.10gb", "A100-SXM4-40GB")
    assert r.ok is True and r.devices == {"1g.10gb": 4}
    r = mq.check_named_layout("all-1g.10gb", "H100-SXM5-80GB")
    assert r.ok is True and r.devices == {"1g.10gb": 7}
    assert mq.check_named_layout("all-1g.10gb", "A30-24GB").ok is False
    assert mq.check_named_layout("all-1g.6gb", "A100-SXM4-40GB").ok is False  # unfiltered but invalid profile
    assert mq.check_named_layout("all-balanced", "H200-141GB").devices == {"1g.18gb": 2, "2g.35gb": 1, "3g.71gb": 1}
    assert mq.check_named_layout("all-disabled", "A30").ok is True
    assert mq.check_named_layout("all-1g.23gb", "B200", "24.9.0").ok is False  # appears in 25.3.0
    assert mq.check_named_layout("no-such-layout", "A30").ok is False


def test_check_named_layout_unknown() -> None:
    assert mq.check_named_layout("all-1g.10gb", "A100X").ok is None
    assert mq.check_named_layout("all-balanced", "RTX-9090").ok is None
    assert mq.check_named_layout("all-disabled", "A100X").ok is None


def test_mig_capability_derives_from_architecture() -> None:
    for product in ("L4", "L40S", "T4", "V100", "P100", "A10", "A40", "RTX-A6000"):
        prod = q.gpu_product(product)
        assert prod is not None and prod.mig_capable is False, product
        assert mq.mig_profiles(product) == []
        assert mq.check_named_layout("all-1g.10gb", product).ok is False
    assert q.gpu_product("A100X").mig_capable == "unknown"  # Ampere, no MIG group, not listed as MIG-less


def test_mig_memory_slices() -> None:
    total, per = mq.mig_memory_slices("A100-SXM4-40GB") or (0, {})
    assert total == 8 and per["3g.20gb"] == 4 and per["1g.5gb"] == 1 and per["7g.40gb"] == 8
    total, per = mq.mig_memory_slices("A30-24GB") or (0, {})
    assert total == 4 and per["2g.12gb"] == 2
    check = mq.check_mig_layout("A100-SXM4-40GB", {"3g.20gb": 2, "1g.5gb": 1})
    assert check.ok is False and "9 memory slices" in check.problems[0]
    assert mq.check_mig_layout("A100-SXM4-40GB", {"4g.20gb": 1, "3g.20gb": 1}).ok is True


def test_sharing_with_mig_supported() -> None:
    assert mq.sharing_with_mig_supported("time-slicing") is True
    assert mq.sharing_with_mig_supported("mps") is False  # k8s-device-plugin README
    assert "k8s-device-plugin README" in (mq.sharing_with_mig_source("mps") or "")
    assert mq.sharing_with_mig_supported("vgpu") is None


# ---------------------------------------------------------------- precompiled


def test_parse_kernel() -> None:
    assert cq.parse_kernel("5.15.0-1060-nvidia") == ("5.15", "nvidia")
    assert cq.parse_kernel("6.8.0-1015-azure-fde") == ("6.8", "azure-fde")
    assert cq.parse_kernel("6.8") == ("6.8", None)
    assert cq.parse_kernel("linux") is None


def test_precompiled_available() -> None:
    assert cq.precompiled_available("26.3", "ubuntu", "22.04", "5.15.0-1060-nvidia", "R535") is True
    assert cq.precompiled_available("26.7", "ubuntu", "22.04", "5.15.0-1060-nvidia", "535") is False
    assert cq.precompiled_available("26.7", "ubuntu", "26.04", "7.0.0-10-generic", "595") is True
    assert cq.precompiled_available("26.7", "ubuntu", "24.04", "6.8.0-45-azure-fde", "580") is True
    assert cq.precompiled_available("26.3", "ubuntu", "24.04", "6.8.0-45-azure-fde", "580") is False
    assert cq.precompiled_available("26.7", "rhel", "9.4", "5.14.0-1-generic", "580") is False
    assert cq.precompiled_available("24.9", "ubuntu", "22.04", "5.15.0-1-oracle", "550") is True
    assert cq.precompiled_available("23.9", "ubuntu", "22.04", "5.15.0-69-generic", "535") is False


def test_precompiled_available_unknown() -> None:
    assert cq.precompiled_available("24.6", "ubuntu", "22.04", "5.15.0-116-generic", "535") is None  # branch rule only
    assert cq.precompiled_available("23.9", "ubuntu", "22.04", "5.15.0-69-generic", "525") is None  # kernel not stated
    assert cq.precompiled_available("26.7", "ubuntu", "22.04", "5.15", "580") is None  # flavour not given
    assert cq.precompiled_available("20.1", "ubuntu", "22.04", "5.15.0-1-generic", "535") is None


# ---------------------------------------------------------------- NVIDIADriver CRD


@pytest.mark.parametrize(
    ("version", "status"),
    [("23.6.0", "absent"), ("23.9.0", "technology-preview"), ("25.10.1", "technology-preview"),
     ("v26.3.0", "supported"), ("26.7.0", "supported"), ("27.1.0", None), ("x", None)],
)  # fmt: skip
def test_nvidiadriver_crd_status(version: str, status: str | None) -> None:
    assert cq.nvidiadriver_crd_status(version) == status


def test_nvidiadriver_crd_supported() -> None:
    assert cq.nvidiadriver_crd_supported("26.3.0") is True
    assert cq.nvidiadriver_crd_supported("25.10.1") is False
    assert cq.nvidiadriver_crd_supported("25.10.1", allow_preview=True) is True
    assert cq.nvidiadriver_crd_supported("23.6.0", allow_preview=True) is False
    assert cq.nvidiadriver_crd_supported("27.1.0") is None


# ---------------------------------------------------------------- images


def test_component_images() -> None:
    imgs = cq.component_images("v25.10.1", include_nfd=True)
    assert imgs is not None
    assert imgs["validator"].repository == "nvcr.io/nvidia" and imgs["validator"].image == "gpu-operator"
    assert imgs["node-feature-discovery"].version == "v0.18.2"
    assert "node-feature-discovery" not in cq.component_images("25.10.1")  # type: ignore[operator]
    assert cq.component_images("25.10.5") is None


@pytest.mark.parametrize(
    ("release", "os_id", "version", "tag"),
    [("25.10.1", "ubuntu", "22.04", "ubuntu22.04"), ("25.10.1", "rhel", "9.4", "rhel9.4"),
     ("26.3.3", "rhel", "9.4", "rhel9.4"), ("26.3.3", "rhel", "10.1", "rhel10"), ("26.3.3", "rocky", "9.7", "rocky9"),
     ("26.7.0", "rhel", "9.4", "rhel9"), ("26.7.0", "ubuntu", "24.04", "ubuntu24.04"), ("v26.7.0", "ol", "9.4", "ol9")],
)  # fmt: skip
def test_os_tag(release: str, os_id: str, version: str, tag: str) -> None:
    assert cq.os_tag(release, os_id, version) == tag


def test_os_tag_unknown() -> None:
    assert cq.os_tag("x", "ubuntu", "22.04") is None
    assert cq.os_tag("26.7.0", "haiku", "1") is None


def test_image_ref() -> None:
    imgs = cq.component_images("26.7.0")
    assert imgs is not None
    assert cq.image_ref(imgs["operator"], "26.7.0") == "nvcr.io/nvidia/gpu-operator:v26.7.0"
    assert cq.image_ref(imgs["toolkit"], "26.7.0") == "nvcr.io/nvidia/k8s/container-toolkit:v1.20.0"
    assert cq.image_ref(imgs["driver"], "26.7.0", os_tag="ubuntu22.04") == "nvcr.io/nvidia/driver:595.91.07-ubuntu22.04"
    assert cq.image_ref(imgs["gdrcopy"], "26.7.0", os_tag="rhel9") == "nvcr.io/nvidia/cloud-native/gdrdrv:v2.6-rhel9"
    assert cq.image_ref(imgs["vgpuManager"], "26.7.0") is None
    assert cq.image_ref(imgs["kataManager"], "26.7.0") is None
    with pytest.raises(ValueError, match="OS tag"):
        cq.image_ref(imgs["gds"], "26.7.0")


def test_image_ref_pinned_operator_version_and_digest() -> None:
    imgs = cq.component_images("23.9.1")
    assert imgs is not None
    assert cq.image_ref(imgs["operator"], "23.9.1") == "nvcr.io/nvidia/gpu-operator:v23.9.0"  # pinned at that tag
    digest = Image(repository="r.example/nv", image="driver", version="sha256:abc", os_tag_suffix=True)
    assert cq.image_ref(digest, "26.7.0") == "r.example/nv/driver@sha256:abc"
