"""Mechanisms behind the first-run misses of wild batches b38 and b39 (the operators' stack and the harnesses around a
job), each tested on lines from other public threads or the programs' own sources than the bundles', through the real
extractors (and the whole analysis where the verdict depends on more than one line).

Each block names the mechanism, where its lines come from, and the look-alikes that must not match.
"""

from __future__ import annotations

import copy

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.extract import gpu
from firstfault.extract.container import container_report
from firstfault.extract.gpu import nvml_report
from firstfault.model import Verdict
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract.helpers import scan

FM = gpu.FabricManagerExtractor()


def _analyze(make_bundle: BundleMaker, text: str) -> Verdict:
    wl = copy.deepcopy(WORKLOAD)
    return Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": text}, wl)))


def _cause(v: Verdict) -> str | None:
    return v.root_cause.category if v.root_cause is not None else None


# ---------------------------------------------------------------- Fabric Manager refusing to start in its own words
# catalog/platform.yaml `fabric_manager_messages` (fm_failed): its version not the driver's, a config value refused.


@pytest.mark.parametrize(
    "line",
    [
        # NVIDIA/gpu-operator#544 (the journal's line)
        "nv-fabricmanager[3228]: fabric manager NVIDIA GPU driver interface version 530.30.02 don't match with driver "
        "version 530.41.03. Please update with matching NVIDIA driver package.",
        # NVIDIA/nvtrust#55 (a typographic apostrophe)
        "fabric manager NVIDIA GPU driver interface version 550.90.07 don\u2019t match with driver version 550.107.02. "
        "Please update with matching NVIDIA driver package",
        # akash-network/website#632 (releases of 2025)
        "Nov 05 13:55:26 node1 nv-fabricmanager[104230]: fabric manager NVIDIA GPU driver interface version "
        "550.127.05 doesn't match with driver version 550.120. Please update with the matching NVIDIA driver package.",
        # siderolabs/extensions#511's later release refusing DATABASE_PATH, and tinfoilsh/cvmimage#241's LOG_FILE_NAME
        "fabric manager config file item: DATABASE_PATH has an invalid value",
        "fabric manager config file item: LOG_FILE_NAME has an invalid value",
    ],
)
def test_fabric_manager_refusing_to_start_is_fm_failed(line: str) -> None:
    drafts = scan(FM, [line], source="syslog")
    assert [d.fields["fm_event"] for d in drafts] == ["fm_failed"]


@pytest.mark.parametrize(
    "line",
    [
        # another program's words about a config item (a widget config reader's log line)
        "Unknown PDF_ReaderWidget Config file item: MaxPages",
        # synthetic near-misses: the same words with no refusal in them
        "fabric manager config file item: LOG_LEVEL=4",
        "fabric manager NVIDIA GPU driver interface version 550.127.05",
    ],
)
def test_fabric_manager_words_without_a_refusal_are_nothing(line: str) -> None:
    assert scan(FM, [line], source="syslog") == []


# ---------------------------------------------------------------- the Neuron runtime refusing the node's driver
# catalog/platform.yaml `nvml_errors` 1011-1013: the runtime's words at nrt_init (aws-neuron-sdk's troubleshooting
# guide, nrt-troubleshoot.rst) are the node's accelerator driver install (node.driver).


@pytest.mark.parametrize(
    ("line", "name"),
    [
        # aws-neuron-sdk nrt-troubleshoot.rst "Application fails to start"
        ("2021-Aug-11 18:38:27.0917 13713:13713 ERROR   NRT:nrt_init      Unable to determine Neuron Driver version. "
         "Please check aws-neuron-dkms package is installed.", "NEURON_DRIVER_NOT_FOUND"),
        ("2021-Aug-11 19:18:21.0661 24616:24616 ERROR   NRT:nrt_init      This runtime requires Neuron Driver version "
         "2.0 or greater. Please upgrade aws-neuron-dkms package.", "NEURON_DRIVER_INCOMPATIBLE"),
        # aws-neuron/aws-neuron-sdk#415 (behind TorchServe's MODEL_LOG relay) and #655
        ("2022-04-02 18:19:58,646 [WARN ] MODEL_LOG - 2022-Apr-02 18:19:58.0646    28:28    ERROR   NRT:nrt_init"
         "                                Unable to read compatible Driver version.", "NEURON_DRIVER_NOT_FOUND"),
        ("2023-Apr-21 11:17:54.0589  8816:8816  ERROR   NRT:nrt_init                                This Neuron "
         "Runtime (compatibility id: 6) is not compatible with the installed aws-neuron-dkms package.",
         "NEURON_DRIVER_INCOMPATIBLE"),
        # nrt-troubleshoot.rst "Failure to initialize Neuron" (devices a previous run left running)
        ("2021-Nov-11 15:33:20.0161  7912:7912  ERROR   NRT:nrt_init                                Failed to "
         "initialize devices, error:1", "NEURON_DEVICES_NOT_INITIALIZED"),
    ],
)
def test_the_neuron_runtime_refusing_the_driver_is_the_nodes_driver(line: str, name: str) -> None:
    read = nvml_report(line)
    assert read is not None and read[0].cls == "driver" and read[0].name == name


@pytest.mark.parametrize(
    "line",
    [
        # the runtime finding its cores taken by another process (nrt-troubleshoot.rst "Neuron Core is in use"): not
        # the driver
        "2021-Aug-27 23:22:12.0323 28078:28078 ERROR   NRT:nrt_allocate_neuron_cores               NeuronCore(s) not "
        "available - Requested:nc1-nc1 Available:0",
        # the runtime's own banner
        "nrtd[1]: [NRTD:nrtd_main] nrtd build using:1.1.1402.0",
    ],
)
def test_other_neuron_runtime_words_are_no_driver_failure(line: str) -> None:
    assert nvml_report(line) is None


# ---------------------------------------------------------------- MLNX_OFED's openibd failing to load the NIC driver
# catalog/platform.yaml `nvml_errors` 1014 (with `also`: FAILED): its steps' words with `[FAILED]` (echo_failure).

# skyao/learning-computer-hardware nic/cx4121a/driver/pve81: OFED's modules after a kernel upgrade
OPENIBD_FAILED = [
    "Unloading HCA driver:                                      [  OK  ]",
    "Failed loading kernel module mlx5_ib:                      [FAILED]",
    "Loading Mellanox MLX5_IB HCA driver:                       [FAILED]",
    "Failed loading kernel module mlx5_core:                    [FAILED]",
    "Loading Mellanox MLX5 HCA driver:                          [FAILED]",
    "Loading HCA driver and Access Layer:                       [FAILED]",
]


def test_openibd_failing_to_load_the_hca_driver_is_the_nodes_driver(make_bundle: BundleMaker) -> None:
    reads = [nvml_report(line) for line in OPENIBD_FAILED]
    assert reads[0] is None  # its unload worked
    assert all(r is not None and r[0].cls == "driver" for r in reads[1:])
    assert _cause(_analyze(make_bundle, "\n".join(OPENIBD_FAILED) + "\n")) == "node.driver"


@pytest.mark.parametrize(
    "line",
    [
        # the same steps when they worked (openibd's echo_success)
        "Loading HCA driver and Access Layer:                       [  OK  ]",
        "Loading Mellanox MLX5_IB HCA driver:                       [  OK  ]",
        # another script's words for its own module (a vRouter agent's entrypoint, `failed loading kernel module $?`)
        "failed loading kernel module 1",
    ],
)
def test_openibd_steps_that_worked_are_no_failure(line: str) -> None:
    assert nvml_report(line) is None


# ---------------------------------------------------------------- the container CLI unable to read a path it injects
# catalog/platform.yaml `nvml_not_reports` and container_errors' row (node): `detection error: path error: ...:
# permission denied` is the node's toolkit set-up, not the driver's answer.


@pytest.mark.parametrize(
    "line",
    [
        # NVIDIA/libnvidia-container#304 (its test before the fix: Fabric Manager's socket made 0600)
        "nvidia-container-cli: detection error: path error: ///var/run/nvidia-fabricmanager/socket: permission denied",
        # NVIDIA/libnvidia-container#178 (the toolkit's config.toml setting a user the driver's files do not allow)
        "stderr: nvidia-container-cli: detection error: path error: ///usr/local/nvidia/lib64/libvdpau_nvidia.so: "
        "permission denied",
    ],
)
def test_a_path_the_container_cli_may_not_read_is_the_nodes_container_set_up(line: str) -> None:
    assert nvml_report(line) is None
    read = container_report(line)
    assert read is not None and read.row.container_class == "node"


def test_a_detection_error_of_the_driver_stays_the_driver() -> None:
    # NVIDIA/nvidia-docker#1280: NVML itself failed at detection (the driver's answer)
    read = nvml_report("stderr: nvidia-container-cli: detection error: nvml error: unknown error: unknown.")
    assert read is not None and read[0].cls == "unknown"
    assert container_report("nvidia-container-cli: detection error: nvml error: unknown error: unknown.") is None
