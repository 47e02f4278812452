"""The GPU node's software stack under Kubernetes in its own programs' words (catalog/platform.yaml): the GPU operator's
validator, driver container and driver manager, the device plugin, the container toolkit's CLI, read by the tables
`platform_words`, `nvml_errors` and `container_errors`; and the lines of the same programs that decide nothing.

Provenance of the lines: each program's source, the format filled in (NVIDIA/gpu-operator a22dbf67
cmd/nvidia-validator/main.go, NVIDIA/k8s-driver-manager bd62ca7d cmd/driver-manager/main.go, NVIDIA/gpu-driver-container
06a208ca ubuntu22.04/nvidia-driver, NVIDIA/k8s-device-plugin 1b826acc, NVIDIA/libnvidia-container src/cli/common.c and
dsl.c), or the public thread named beside it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from firstfault.catalog.tables import platform_program_table, platform_words
from tests.extract import helpers


def platform_errors(line: str) -> list[tuple[object, object]]:
    return [(e.fields.get("program"), e.fields.get("part"))
            for e in helpers.events([line], "application", node="gpu-7") if e.kind == "platform.error"]


def nvml(line: str) -> list[tuple[object, object]]:
    return [(e.fields.get("error"), e.fields.get("nvml_error"))
            for e in helpers.events([line], "application", node="gpu-7") if e.kind == "gpu.nvml_error"]


def containers(line: str) -> list[tuple[object, object]]:
    return [(e.fields.get("runtime"), e.fields.get("error"))
            for e in helpers.events([line], "syslog", node="gpu-7") if e.kind == "container.error"]


_PART = {row.program: row.part for row in platform_program_table()}


# ---------------------------------------------------------------- every row of platform_words in its line forms


@pytest.mark.parametrize("row", platform_words(), ids=lambda r: r.text)
@pytest.mark.parametrize("form", [
    # logrus's text formatter (the validator, k8s-driver-manager): `msg="..."`, the text inside a quoted message
    'time="2026-03-06T20:37:58Z" level=error msg="{text} (details)"',
    # klog's prefix (the device plugin and the kubelet-side programs)
    "E1204 10:04:59.000000       1 main.go:297] {text} (details)",
    # a shell script's echo to stderr as the container's log holds it, and a Go program's `Error: %v` at exit
    "{text}",
    "Error: {text} (details)",
], ids=["logrus", "klog", "echo", "exit"])
def test_each_programs_own_failure_words_in_each_line_form(row: object, form: str) -> None:
    text = row.text  # type: ignore[attr-defined]
    if row.code_after is not None:  # type: ignore[attr-defined]
        text += "step" + row.code_after + "1"  # type: ignore[attr-defined]  # a step's status other than 0
    program = row.program  # type: ignore[attr-defined]
    got = platform_errors(form.format(text=text))
    assert got[:1] == [(program, _PART[program])]


@pytest.mark.parametrize(("line", "read"), [
    # NVIDIA/k8s-driver-manager#166 (the PR's log block of node ipp2-2153)
    ("time=2026-03-06T20:37:58Z level=fatal msg=failed to uninstall nvidia driver components: failed to unload driver: "
     "resource temporarily unavailable", ("k8s-driver-manager", "driver")),
    ("time=2026-03-06T20:37:58Z level=error msg=Failed to uninstall nvidia driver components",
     ("k8s-driver-manager", "driver")),
    # the validator's exit (main: `log.Printf("Error: %v", err)`) for each component its init containers check
    ('time="2026-03-06T20:37:58Z" level=info msg="Error: error validating toolkit installation: exit status 1"',
     ("nvidia-container-toolkit", "toolkit")),
    ('time="2026-03-06T20:37:58Z" level=info msg="Error: error validating plugin installation: GPU resources are not '
     'discovered by the node"', ("plugin-validation", "device_plugin")),
    ('time="2026-03-06T20:37:58Z" level=info msg="Error: error validating cuda workload: gave up waiting for pod '
     'nvidia-cuda-validator-x7k2p to be available"', ("cuda-validation", "driver")),
    # the device plugin's gRPC server crashing past its restarts (server.go Serve, klog.Fatalf)
    ("F1204 10:04:59.000000       1 server.go:195] GRPC server for 'nvidia.com/gpu' has repeatedly crashed recently. "
     "Quitting", ("nvidia-device-plugin", "device_plugin")),
])
def test_the_operators_programs_say_which_part_failed(line: str, read: tuple[str, str]) -> None:
    assert platform_errors(line) == [read]


@pytest.mark.parametrize("line", [
    # the validator waiting for what is not up yet, and going on (driver.runValidation with --wait,
    # Plugin.validateGPUResource's retries)
    'time="2026-03-06T20:37:58Z" level=warning msg="failed to validate the driver, retrying after 5 seconds"',
    'time="2026-03-06T20:37:58Z" level=info msg="GPU resources are not yet discovered by the node, retry: 3"',
    'time="2026-03-06T20:37:58Z" level=info msg="Attempting to validate a driver container installation"',
    # the driver manager's steps before it gives up, and the bash manager's retry with a drain
    "time=2026-03-06T20:37:58Z level=info msg=Auto drain of the node is disabled by the upgrade policy",
    "time=2026-03-06T20:37:58Z level=info msg=Auto eviction of GPU pods on node ipp2-2153 is disabled by the upgrade "
    "policy",
    "Unable to cleanup driver modules, attempting again with node drain...",
    # the device plugin's one crash it restarts, and its retry of the plugins (server.go, main.go)
    "I1204 10:04:59.000000       1 server.go:204] GRPC server for 'nvidia.com/gpu' crashed with error: "
    "transport is closing",
    "I1204 10:04:59.000000       1 main.go:302] Failed to start one or more plugins. Retrying in 30s...",
    # the driver container unloading a driver that was not in use (the same function's progress)
    "Unloading NVIDIA driver kernel modules...",
])
def test_a_step_the_program_retries_or_goes_on_from_decides_nothing(line: str) -> None:
    assert platform_errors(line) == []
    assert nvml(line) == []


# ---------------------------------------------------------------- the driver's install in nvml_errors


@pytest.mark.parametrize(("line", "read"), [
    # GoogleCloudPlatform/container-engine-accelerators#107: nvidia-installer's message wrapped at 80 columns, its
    # first line as GKE's installer printed it
    ("ERROR: An NVIDIA kernel module 'nvidia-uvm' appears to already be loaded in",
     ("driver", "NVIDIA_KERNEL_MODULE_IN_USE")),
    # ... and unwrapped (nvidia-installer kernel.c check_for_loaded_kernel_module)
    ("ERROR: An NVIDIA kernel module 'nvidia-drm' appears to already be loaded in your kernel.  This may be because "
     "it is in use", ("driver", "NVIDIA_KERNEL_MODULE_IN_USE")),
    # NVIDIA/gpu-driver-container ubuntu22.04/nvidia-driver _unload_driver and _resolve_kernel_version
    ("Could not unload NVIDIA driver kernel modules, driver is in use", ("driver", "NVIDIA_KERNEL_MODULE_IN_USE")),
    ("Could not locate Linux kernel version string", ("driver", "DRIVER_CONTAINER_NO_KERNEL")),
    # awsdocs/amazon-eks-user-guide#22: the node's CLI unable to evaluate the image's requirement, in runc's hook error
    ('running prestart hook 0 caused \\\\\\"error running hook: exit status 1, stdout: , stderr: exec command: '
     '[/usr/bin/nvidia-container-cli --load-kmods configure]\\\\nnvidia-container-cli: requirement error: invalid '
     'expression\\\\n\\\\\\"\\""', ("driver", "NVIDIA_CONTAINER_REQUIRE_CUDA")),
])
def test_the_driver_install_in_its_programs_words(line: str, read: tuple[str, str]) -> None:
    assert nvml(line) == [read]


def test_the_toolkits_cli_under_its_installed_name() -> None:
    # NVIDIA/gpu-operator#133: the toolkit container's nvidia-container-cli.real behind its wrapper
    line = ("stderr: nvidia-container-cli.real: initialization error: driver error: failed to process request: "
            "unknown")
    assert [e for e, _ in nvml(line)] == ["unknown"]


def test_gkes_installer_failing_on_the_fallback_driver_is_the_drivers() -> None:
    # substratusai/runbooks#37 (the thread's `kubectl logs ... -c nvidia-driver-installer`): cos_gpu_installer's E
    # record after the default driver did not support the node's L4 GPUs
    line = ("E0625 05:36:32.767916    5389 install.go:452] failed to check driver compatibility: failed to get "
            "fallback driver: failed to get R525 GPU driver version: failed to download artifact "
            "gpu_R525_version: failed to download gpu_R525_version from "
            "gs://cos-tools/17412.101.13/gpu_R525_version : failed to download gpu_R525_version, status: 404 Not Found")
    assert platform_errors(line) == [("cos-gpu-installer", "driver")]


@pytest.mark.parametrize("line", [
    # the device plugin's info line on a node without GPUs (main.go: klog.Info), and its hint beside it
    "I1204 10:04:59.000000       1 main.go:416] No devices found. Waiting indefinitely.",
    "E1204 10:04:59.000000       1 factory.go:103] If this is not a GPU node, you should set up a toleration or "
    "nodeSelector to only deploy this plugin on GPU nodes",
    # prose about the installer's check, not its report
    "the installer checks whether a module is loaded in your kernel before it starts",
])
def test_near_misses_of_the_driver_install(line: str) -> None:
    assert nvml(line) == []
    assert platform_errors(line) == []


def test_the_device_plugin_waiting_on_a_cpu_node_of_a_failed_job_is_no_cause() -> None:
    from firstfault.analysis.analyze import Analyzer

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        (tmp / "nodes" / "cpu-1").mkdir(parents=True)
        (tmp / "nodes" / "cpu-1" / "journal.log").write_text(
            "Dec  4 10:05:00 cpu-1 nvidia-device-plugin[99]: I1204 10:05:00.000000       1 main.go:416] No devices "
            "found. Waiting indefinitely.\n")
        (tmp / "workload.yaml").write_text(
            "apiVersion: firstfault/v1\nworkload:\n  id: '7'\n  scheduler: static\n"
            "  window: {start: '2026-12-04T10:00:00Z', end: '2026-12-04T11:00:00Z'}\n  nodes: [cpu-1, gpu-7]\n"
            "  terminal_state: FAILED\n  timezone: UTC\n"
            "sources:\n  - {kind: syslog, path: 'nodes/{node}/journal.log'}\n")
        verdict = Analyzer().analyze_path(str(tmp))
    assert verdict.root_cause is None


# ---------------------------------------------------------------- the container CLI's device selection


@pytest.mark.parametrize("line", [
    # AliyunContainerService/gpushare-scheduler-extender#85 (libnvidia-container before 1.3), as Docker quotes it
    'Error response from daemon: OCI runtime create failed: container_linux.go:346: starting container process caused '
    '"process_linux.go:449: container init caused \\"process_linux.go:432: running prestart hook 0 caused \\\\\\"error '
    'running hook: exit status 1, stdout: , stderr: nvidia-container-cli: device error: unknown device id: '
    'GPU-a1ff9376-0ecf-ac4f-68df-6ab38be012b3\\\\\\\\n\\\\\\"\\"": unknown',
    # today's format (src/cli/common.c select_devices: `%s: %s` with `unknown device`)
    "stderr: nvidia-container-cli: device error: GPU-a1ff9376-0ecf-ac4f-68df-6ab38be012b3: unknown device: unknown",
    "stderr: nvidia-container-cli: device error: MIG-8b1c7e1e-0a3f-5e3d-9c43-1f6b0f3d2a11: unknown device: unknown",
])
def test_a_gpu_the_node_does_not_have_handed_by_uuid(line: str) -> None:
    assert ("nvidia-container-cli", "node") in containers(line)


@pytest.mark.parametrize("line", [
    # an index the job asked for that the node does not have (docker run --gpus device=3 on a two-GPU host)
    "stderr: nvidia-container-cli: device error: 3: unknown device: unknown",
    # the words in prose
    "the hook reports an unknown device id: GPU-... when the UUID is stale",
])
def test_a_device_by_index_or_in_prose_is_not_the_nodes(line: str) -> None:
    assert ("nvidia-container-cli", "node") not in containers(line)
