"""`nvidia-smi nvlink -e` / `-s` in a job's output (extract/gpu.py NvlinkExtractor over catalog/accel.yaml
`nvidia_smi_nvlink`): a link's corrected-error counts are a symptom, a link down beside its GPU's links that are up is
the GPU's NVLink, zeros and a GPU with no NVLink in use are nothing."""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.catalog import tables
from tests.conftest import BundleMaker
from tests.extract import helpers

# stas00/ml-engineering (compute/accelerator/nvidia/debug.md): an H100's `nvidia-smi nvlink -e`, all zeros
_H100 = "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-abcdefab-cdef-abdc-abcd-abababababab)"
# NVIDIA/k8s-test-infra#371: a GB200's `nvidia-smi nvlink -s`
_GB200 = "GPU 0: NVIDIA GB200 (UUID: GPU-d1b93026-6d5b-03bd-3a71-f85b47a61bde)"


def read(lines: list[str]) -> list[tuple[str, str, object]]:
    return [(str(e.fields["accel_class"]), str(e.fields["reason"]), e.fields.get("link"))
            for e in helpers.events(lines, "application") if e.kind == "gpu.accel_error"]


@pytest.mark.parametrize(("lines", "expected"), [
    # a posted V100 run after a stress test (the counts as posted, the layout nvidia-smi's)
    (["GPU 0: Tesla V100-SXM2-32GB-LS (UUID: GPU-5261e3df-82f6-67b4-9953-4e63527e0e9d)",
      "         Link 3: Replay Errors: 2353"], [("link_info", "nvlink_replay", 3)]),
    (["GPU 2: Tesla V100-SXM2-32GB-LS (UUID: GPU-d9eeee97-c180-66de-23e0-d995387934dc)",
      "         Link 0: Replay Errors: 148", "         Link 0: CRC Errors: 65535"],
     [("link_info", "nvlink_replay", 0), ("link_info", "nvlink_crc", 0)]),
    # the lines without their GPU's (a snippet posted alone), indentation lost on the way
    (["Link 5: Recovery Errors: 2"], [("link_info", "nvlink_recovery", 5)]),
    # -s: one link down while the others are up, the down one before or after them
    ([_GB200, "         Link 0: 53.125 GB/s", "         Link 1: <inactive>", "         Link 2: 53.125 GB/s"],
     [("link", "nvlink_inactive", 1)]),
    ([_GB200, "         Link 0: <inactive>", "         Link 1: 53.125 GB/s"], [("link", "nvlink_inactive", 0)]),
])
def test_nvlink_counts_and_a_link_down(lines: list[str], expected: list[tuple[str, str, object]]) -> None:
    assert read(lines) == expected


@pytest.mark.parametrize("lines", [
    # every count 0: a healthy GPU (stas00/ml-engineering's H100)
    [_H100, "         Link 0: Replay Errors: 0", "         Link 0: Recovery Errors: 0",
     "         Link 0: CRC Errors: 0"],
    # every link inactive: a GPU with no NVLink in use (an L4; a PCIe card without its bridge)
    ["GPU 0: NVIDIA L4 (UUID: GPU-0000feed-0000-4000-8000-000000000300)", "\t Link 0: <inactive>",
     "\t Link 1: <inactive>"],
    # every link up
    [_GB200, "         Link 0: 53.125 GB/s", "         Link 1: 53.125 GB/s"],
    # the down link was another GPU's: each GPU's block is its own
    ["GPU 0: NVIDIA L4 (UUID: GPU-0000feed-0000-4000-8000-000000000300)", "\t Link 0: <inactive>",
     _GB200, "         Link 0: 53.125 GB/s"],
    # counts the table does not hold, and words that only look like a link's line
    ["Link 0: Tx Throughput: 1234", "Link training complete: 4 lanes"],
])
def test_near_miss_nvlink_lines_that_name_no_fault(lines: list[str]) -> None:
    assert read(lines) == []


def test_a_ranks_nvlink_status_with_a_link_down_is_the_gpus_nvlink(make_bundle: BundleMaker) -> None:
    steps = ["step 1 loss 2.31", "step 2 loss 2.29"]
    timeout = ("[rank{r}]:[E ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective operation timeout: "
               "WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 "
               "milliseconds before timing out.")
    status = [_GB200, "         Link 0: 53.125 GB/s", "         Link 1: <inactive>", "         Link 2: 53.125 GB/s"]
    files = {f"app/rank-{r}.log": "".join(s + "\n" for s in [*steps, *(status if r == 2 else []),
                                                                timeout.format(r=r)]) for r in range(6)}
    v = Analyzer().analyze_path(str(make_bundle(files, name="nvlink-smi")))
    helpers.assert_cause_with_collective_fallout(v, "hardware", "gpu.nvlink", "node-02")


def test_a_ranks_nonzero_nvlink_counts_name_no_cause(make_bundle: BundleMaker) -> None:
    counts = [_H100, "         Link 3: Replay Errors: 2353", "         Link 3: CRC Errors: 12"]
    files = {f"app/rank-{r}.log": "".join(s + "\n" for s in [*(counts if r == 2 else []), "step 1 loss 2.31"])
             for r in range(4)}
    v = Analyzer().analyze_path(str(make_bundle(files, name="nvlink-counts")))
    assert v.root_cause is None or v.root_cause.category != "gpu.nvlink"


# nvidia-smi -q's `Fabric` block (NVIDIA/gpu-operator#2511's layout, a GB200 node's; the values NVML's as
# leptonai/gpud fabric_state.go spells them), read by extract/gpu.py SmiQueryExtractor
def _fabric(summary: str, bandwidth: str, route: str) -> list[str]:
    return ["GPU 00000000:18:00.0",
            "    Fabric",
            "        State                                          : Completed",
            "        Status                                         : Success",
            "        CliqueId                                       : 1",
            "        Health",
            f"            Summary                                    : {summary}",
            f"            Bandwidth                                  : {bandwidth}",
            "            Route Recovery in progress                 : False",
            f"            Route Unhealthy                            : {route}"]


@pytest.mark.parametrize(("lines", "expected"), [
    (_fabric("Healthy", "Degraded", "False"), [("link", "fabric_bandwidth_degraded", None)]),
    (_fabric("Healthy", "Full", "True"), [("link", "fabric_route_unhealthy", None)]),
    (_fabric("Limited Capacity", "Full", "False"), [("link_info", "fabric_limited_capacity", None)]),
])
def test_a_gpus_fabric_health(lines: list[str], expected: list[tuple[str, str, object]]) -> None:
    assert read(lines) == expected


@pytest.mark.parametrize("lines", [
    _fabric("Healthy", "Full", "False"),
    # a GPU whose fabric is still forming, as gpu-operator#2511 posts it: every value N/A
    _fabric("N/A", "N/A", "N/A"),
    # the words without their block: a key of another report
    ["    Bandwidth                                  : Degraded"],
])
def test_near_miss_a_fabric_block_that_names_no_fault(lines: list[str]) -> None:
    assert read(lines) == []


def test_a_ranks_degraded_fabric_is_the_gpus_nvlink(make_bundle: BundleMaker) -> None:
    timeout = ("[rank{r}]:[E ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog caught collective operation timeout: "
               "WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 "
               "milliseconds before timing out.")
    files = {f"app/rank-{r}.log": "".join(s + "\n" for s in [*(_fabric("Unhealthy", "Degraded", "False")
                                                                 if r == 2 else []), timeout.format(r=r)])
             for r in range(6)}
    v = Analyzer().analyze_path(str(make_bundle(files, name="fabric-degraded")))
    helpers.assert_cause_with_collective_fallout(v, "hardware", "gpu.nvlink", "node-02")


# the Fabric block's registration (NVML nvmlGpuFabricInfo_t as nvidia-smi -q prints it; Azure/azhpc-images#506's GB
# node: State Completed, Status Insufficient Resources, CliqueId 0, an all-zero ClusterUUID)
def _registration(state: str, status: str, clique: str = "0",
                  cluster: str = "00000000-0000-0000-0000-000000000000") -> list[str]:
    return ["GPU 00000000:18:00.0",
            "    Fabric",
            f"        State                             : {state}",
            f"        Status                            : {status}",
            f"        CliqueId                          : {clique}",
            f"        ClusterUUID                       : {cluster}"]


@pytest.mark.parametrize(("status", "expected"), [
    (r.equals, (r.accel_class, r.reason, None))
    for r in tables.nvidia_smi_query() if r.section == "Fabric" and r.key == "Status"
])
def test_a_fabric_registration_status_that_names_a_fault(status: str, expected: tuple[str, str, None]) -> None:
    """Each `Status` row of catalog/accel.yaml `nvidia_smi_query` (NVML's nvmlErrorString words, as leptonai/gpud
    fabric_state.go FabricStatusToString@4a8de33a spells them), in azhpc-images#506's block."""
    assert read(_registration("Completed", status)) == [expected]


@pytest.mark.parametrize("lines", [
    # a registered GPU (gpu-operator#2511's GB200)
    _registration("Completed", "Success", "1", "5b9e6c77-4a2b-4a1e-9b7e-2f0c1d2e3f40"),
    # still registering, and a GPU with no fabric: the Status N/A or Not Supported, CliqueId 0 and a zero
    # ClusterUUID beside them decide nothing
    _registration("In Progress", "N/A"),
    _registration("Not Started", "N/A"),
    _registration("Not Supported", "Not Supported"),
    # the words of a fault under another section's key
    ["    Processes", "        Status                            : Insufficient Resources"],
])
def test_near_miss_a_fabric_registration_that_names_no_fault(lines: list[str]) -> None:
    assert read(lines) == []


# nvidia-smi's own words when no link of the GPU is up (leptonai/gpud#1085's B200, the UUID as posted, redacted)
_ALL_INACTIVE = "NVML: Unable to retrieve NVLink information as all links are inActive"


@pytest.mark.parametrize("model", [r.word for r in tables.nvlink_gpu_models() if r.fabric])
def test_every_link_inactive_on_a_gpu_of_an_nvlink_fabric(model: str) -> None:
    """Each `fabric: true` word of catalog/accel.yaml `nvlink_gpu_models` (leptonai/gpud
    pkg/nvidia/product/capabilities.go@4a8de33a, NVIDIA's product names) in a GPU's name: every link inactive, in
    nvidia-smi's words or link by link, is that GPU's NVLink down."""
    gpu = f"GPU 2: NVIDIA {model.upper()} (UUID: GPU-xxx)"
    assert read([gpu, _ALL_INACTIVE]) == [("link", "nvlink_all_inactive", None)]
    assert read([gpu, "         Link 0: <inactive>", "         Link 1: <inactive>"]) == [
        ("link", "nvlink_inactive", 0)]


@pytest.mark.parametrize("lines", [
    # the GPUs with no NVLink they must use (each `fabric: false` word: a PCIe card, an NVL card, a GH200), and a
    # model the table does not know (an L4)
    *[[f"GPU 0: NVIDIA {w.upper()} 80GB (UUID: GPU-0000feed-0000-4000-8000-000000000300)", _ALL_INACTIVE]
      for w in (r.word for r in tables.nvlink_gpu_models() if not r.fabric)],
    ["GPU 0: NVIDIA H100 PCIe (UUID: GPU-0000feed-0000-4000-8000-000000000300)", _ALL_INACTIVE],
    ["GPU 0: NVIDIA A100-PCIE-40GB (UUID: GPU-0000feed-0000-4000-8000-000000000300)", "\t Link 0: <inactive>"],
    ["GPU 0: NVIDIA L4 (UUID: GPU-0000feed-0000-4000-8000-000000000300)", _ALL_INACTIVE],
    # the words without a GPU's line above them: whose links, the line does not say
    [_ALL_INACTIVE],
])
def test_near_miss_every_link_inactive_on_a_gpu_without_an_nvlink_fabric(lines: list[str]) -> None:
    assert read(lines) == []


# nvidia-smi -q's `vGPU Software Licensed Product` block on a vGPU guest (NVIDIA/gpu-operator#220's OKD VM, as posted;
# the layout NVIDIA's Virtual GPU Client Licensing User Guide shows): a vGPU without its licence is the node's driver
# stack (catalog/accel.yaml `nvidia_smi_query`, class driver)
_VGPU = ["    vGPU Software Licensed Product",
         "        Product Name                      : NVIDIA Virtual Compute Server"]


@pytest.mark.parametrize("status", ["Unlicensed", "Unlicensed (Restricted)"])
def test_a_vgpu_without_its_licence(status: str) -> None:
    lines = [*_VGPU, f"        License Status                    : {status}"]
    assert read(lines) == [("driver", "vgpu_unlicensed", None)]


@pytest.mark.parametrize("lines", [
    [*_VGPU, "        License Status                    : Licensed (Expiry: 2025-6-18 16:49:9 GMT)"],
    # the grace period: full performance, no fault yet
    [*_VGPU, "        License Status                    : Unlicensed (Unrestricted)"],
    # the words outside the block
    ["License Status : Unlicensed"],
])
def test_near_miss_a_vgpu_licence_that_names_no_fault(lines: list[str]) -> None:
    assert read(lines) == []


def test_an_unlicensed_vgpu_is_the_nodes_driver(make_bundle: BundleMaker) -> None:
    lines = [*_VGPU, "        License Status                    : Unlicensed"]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": "\n".join(lines) + "\n"}, name="vgpu")))
    assert v.root_cause is not None and v.root_cause.category == "node.driver"
