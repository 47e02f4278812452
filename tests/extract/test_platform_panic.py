"""A platform program's own uncaught error (extract/exceptions.py `_platform_crash`): a Go panic in the log of a
program of catalog/platform.yaml `platform_programs` is that program failing on the node, `platform.error` with its
`part`; the device plugin's is node-device-plugin's (the node's GPUs advertised by no one). The workload's own panic
stays the workload's exception; a platform program of a part no rule reads gives an event and no cause.
"""

from __future__ import annotations

from firstfault.analysis.analyze import analyze
from tests.conftest import BundleMaker, workload_ending
from tests.extract.helpers import events

# NVIDIA/k8s-device-plugin#338 (https://github.com/NVIDIA/k8s-device-plugin/issues/338): the plugin fails at start
# on NVML's answer for a device, one of its many restarts
PLUGIN_LOG = (
    "2022/10/19 18:51:07 Retreiving plugins.\n"
    "panic: Unable to load resource managers to manage plugin devices: error building device map: error building "
    "device map from config.resources: error building GPU device map: error getting device handle for index '0': "
    "Unknown Error\n"
    "\n"
    "goroutine 1 [running]:\n"
    "main.(*migStrategyNone).GetPlugins(0xc00011c278)\n"
    "        /build/cmd/nvidia-device-plugin/mig-strategy.go:57 +0x1a5\n"
)
PANIC = PLUGIN_LOG.splitlines()[1]


def test_the_device_plugins_panic_in_its_containers_log_is_that_program_failing() -> None:
    (e,) = [e for e in events([PANIC], file="pods/nvidia-device-plugin-daemonset-x7k2p/nvidia-device-plugin-ctr.log")
            if e.kind.startswith(("platform.", "app."))]
    assert e.kind == "platform.error"
    assert (e.fields["program"], e.fields["part"], e.fields["text"]) == ("nvidia-device-plugin", "device_plugin",
                                                                          "panic")


def test_the_panic_in_the_workloads_own_log_stays_its_exception() -> None:
    # near miss: the same words in a log that names no platform program (the workload's own Go program)
    kinds = [e.kind for e in events([PANIC], file="app/worker-0.log")]
    assert "platform.error" not in kinds and "app.exception" in kinds


def test_a_monitors_panic_gives_no_cause(make_bundle: BundleMaker) -> None:
    # near miss: DCGM's exporter (part monitor) panicking stops no job; understood, no cause
    panic = "panic: runtime error: invalid memory address or nil pointer dereference\n"
    wl = workload_ending("FAILED")
    wl["sources"] = [*wl["sources"], {"kind": "application", "path": "nodes/{node}/dcgm-exporter.log"}]
    path = "nodes/node-02/dcgm-exporter.log"
    (e,) = [e for e in events([panic.strip()], file=path) if e.kind.startswith(("platform.", "app."))]
    assert (e.kind, e.fields["part"]) == ("platform.error", "monitor")
    v = analyze(str(make_bundle({path: panic}, wl)))
    assert v.root_cause is None


def test_the_device_plugin_crashing_on_a_node_is_its_plumbing(make_bundle: BundleMaker) -> None:
    wl = workload_ending("FAILED")
    wl["sources"] = [*wl["sources"], {"kind": "application", "path": "nodes/{node}/nvidia-device-plugin-ctr.log"}]
    v = analyze(str(make_bundle({"nodes/node-02/nvidia-device-plugin-ctr.log": PLUGIN_LOG}, wl)))
    assert v.root_cause is not None and v.root_cause.category.startswith("node.driver")
    assert v.root_cause.nodes == ["node-02"]
