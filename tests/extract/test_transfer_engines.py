"""The KV-cache transfer engines of disaggregated serving in their own words (catalog/transport.yaml, stacks nixl and
mooncake; UCX's `Request canceled`; NIXL's binding's exception classes): NIXL's status of a peer's loss, NIXL's agent
refusing what the job asked of it, Mooncake's Transfer Engine left with no RDMA device it could open.

Lines marked with a thread are verbatim from that public report; the ones marked synthetic follow the format string of
the source named (glog's head, which both engines print through: `E0508 00:47:57.974497  611 file.cpp:N] msg`).
"""

from __future__ import annotations

import copy

from firstfault.analysis.analyze import Analyzer
from firstfault.collect.scan import Extraction, all_line_extractors
from firstfault.extract.base import Candidate
from firstfault.extract.traceback import exception_shape
from firstfault.model import Event
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract import helpers


def feed(lines: list[str]) -> list[Event]:
    return helpers.events(lines, "application")


def claimed(lines: list[str]) -> list[bool]:
    """Whether each line was understood (an event, or claimed without one)."""
    ex = Extraction(all_line_extractors())
    out = []
    for i, text in enumerate(lines, 1):
        drafts, ctx = ex.drafts(Candidate("application", "app.log", i, None, None, None, text))
        out.append(bool(drafts) or (ctx is not None and ctx.claimed))
    return out


def setups(events: list[Event]) -> list[tuple[object, object]]:
    return [(e.fields["stack"], e.fields["local_status"]) for e in events
            if e.kind == "nccl.error" and e.fields.get("setup")]


# ---------------------------------------------------------------- Mooncake: a device left out, then none left

# kvcache-ai/Mooncake#3538 (a comment quoting a user's log, as quoted there): the GPU mapped to the NIC has neither
# dma-buf nor nvidia-peermem, the device is left out, and no other device is left.
MOONCAKE_NO_PEERMEM = [
    "E20260821 12:30:19.433391 rdma_context.cpp:1343] DMA BUF supported required for GPU RDMA without nvidia-peermem",
    "E20260821 12:30:19.435154 rdma_context.cpp:209] Failed to open device mlx5_3 on port  with GID 3",
    "E20260821 12:30:19.448818 rdma_transport.cpp:827] RdmaTransport: No available RNIC",
]
# synthetic (mooncake-transfer-engine src/transport/rdma_transport/rdma_context.cpp openRdmaDevice, rdma_transport.cpp
# initializeRdmaResources, transfer_engine_impl.cpp)
MOONCAKE_NO_GID = [
    "W1104 08:12:01.204410  3171 rdma_context.cpp:1369] No suitable GID found on mlx5_1/1",
    "E1104 08:12:01.204522  3171 rdma_context.cpp:211] Failed to open device mlx5_1 on port 1 with GID -1",
    "W1104 08:12:01.204530  3171 rdma_transport.cpp:1123] Disable device mlx5_1",
    "E1104 08:12:01.204533  3171 rdma_transport.cpp:1139] RdmaTransport: No available RNIC",
    "E1104 08:12:01.204540  3171 transfer_engine_impl.cpp:293] Failed to install RDMA transport, type=rdma",
]


def test_mooncake_with_no_device_left_is_the_set_up_with_the_first_reason_held() -> None:
    (e,) = [e for e in feed(MOONCAKE_NO_PEERMEM) if e.kind == "nccl.error"]
    assert setups([e]) == [("mooncake", "gpudirect_unavailable")]
    assert "nvidia-peermem" in str(e.fields["detail"])
    events = feed(MOONCAKE_NO_GID)
    assert setups(events) == [("mooncake", "no_suitable_gid")]  # once, though two lines confirm it
    assert "No suitable GID found on mlx5_1/1" in str(events[0].fields["detail"])


def test_near_miss_a_device_left_out_while_another_opens_is_understood_and_no_failure() -> None:
    # The GID complaint on one device, then kvcache-ai/Mooncake#936's lines of another device that opens: the
    # transport goes on over it. No event; every line understood.
    lines = [MOONCAKE_NO_GID[0], MOONCAKE_NO_GID[2],
             "I20260203 17:42:09.445168 3720677 rdma_context.cpp:594] Using user-specified GID index: 3 on mlx5_3/ "
             "(with network device)",
             "I20260203 17:42:09.445906 3720677 rdma_context.cpp:140] RDMA device: mlx5_3, LID: 0, GID: (GID_Index 3) "
             "00:00:00:00:00:00:00:00:00:00:ff:ff:21:06:1e:14"]
    assert setups(feed(lines)) == []
    assert claimed(lines)[0] is True
    # older releases' per-slot query failures while searching the GID table (synthetic, their format): held alike
    flood = [f"E0302 08:32:30.36948{i} 57711 rdma_context.cpp:450] Failed to query GID {240 + i} on rocep1s0/: "
             "No data available [61]" for i in range(5)]
    assert feed(flood) == []
    assert claimed(flood) == [True] * 5


def test_near_miss_the_transports_end_far_below_or_alone_reaches_no_reason() -> None:
    far = [MOONCAKE_NO_GID[0], *["step"] * 40, MOONCAKE_NO_GID[3]]
    assert setups(feed(far)) == []
    assert setups(feed([MOONCAKE_NO_GID[3]])) == []  # no reason held: the words alone name none


# ---------------------------------------------------------------- NIXL's agent refusing the job's asks

# synthetic (ai-dynamo/nixl src/core/nixl_agent.cpp, NIXL_ERROR_FUNC: the method's name, then the words)
NIXL_SETUP = [
    ("E0508 00:47:57.974497   611 nixl_agent.cpp:357] createBackend: unsupported backend 'GDS'", "backend_unavailable"),
    ("E0508 00:47:58.101200   611 nixl_agent.cpp:458] registerMem: no available backends for mem type 'VRAM'",
     "no_backend_for_memory"),
    ("E0508 00:48:02.511093   611 nixl_agent.cpp:613] makeConnection: no common backend to connect with 'decode-0'",
     "no_common_backend"),
]


def test_nixls_refusals_are_the_set_up_on_the_node_that_printed_them() -> None:
    for line, name in NIXL_SETUP:
        assert setups(feed([line])) == [("nixl", name)]


# ai-dynamo/nixl#1628 (verbatim, the reporter's block): the UCX backend's refusal of VRAM, UCX without its CUDA modules
NIXL_VRAM_AS_HOST = [
    "E ucx_utils.cpp:592  VRAM memory is detected as host by UCX.",
    "                     UCX is likely not configured with CUDA support.",
    "                     VRAM registration cannot proceed.",
    "E nixl_agent.cpp:470 registerMem: registration failed for the specified or all potential backends",
    "nixl_cu13._bindings.nixlBackendError: NIXL_ERR_BACKEND",
]


def test_nixls_ucx_backend_refusing_vram_is_the_set_up(make_bundle: BundleMaker) -> None:
    assert setups(feed(NIXL_VRAM_AS_HOST)) == [("nixl", "no_backend_for_memory")]
    # glog's full head (synthetic, the same NIXL_ERROR), as NVIDIA/TensorRT-LLM#18373's workers print it
    assert setups(feed(["E0828 10:02:11.482113  9113 ucx_utils.cpp:585] VRAM memory is detected as host by UCX. "
                        "UCX is likely not configured with CUDA support. VRAM registration cannot proceed."])) == [
        ("nixl", "no_backend_for_memory")]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": "\n".join(NIXL_VRAM_AS_HOST) + "\n"},
                                                copy.deepcopy(WORKLOAD), "nixl-vram")))
    assert v.root_cause is not None and v.root_cause.category == "app.exception.setup"


def test_near_miss_nixls_later_warning_that_memory_looks_like_host_is_no_set_up() -> None:
    # later releases' NIXL_WARN, verbatim from a vLLM issue's log (vllm-openai v0.20.0): registration goes on
    lines = ["W0427 19:07:51.968335 60 ucx_utils.cpp:581] memory is detected as host, check that UCX is configured "
             "with CUDA support"]
    assert setups(feed(lines)) == []


def test_near_miss_nixls_statuses_and_its_plugin_search_are_no_set_up() -> None:
    # nixl_plugin_manager.cpp's INFO while it tries the next directory (synthetic), and the binding's exception of
    # a status alone (ai-dynamo/nixl#503's title): neither says what the node lacked.
    lines = ["I0508 00:47:57.900001   611 nixl_plugin_manager.cpp:527] Failed to load plugin 'GDS' from any directory",
             "nixl._bindings.nixlNotFoundError: NIXL_ERR_NOT_FOUND",
             "nixl._bindings.nixlBackendError: NIXL_ERR_BACKEND"]
    assert setups(feed(lines)) == []


# ---------------------------------------------------------------- a peer's loss: NIXL's status, UCX's cancels


def test_nixls_remote_disconnect_is_a_peers_loss() -> None:
    # wtdcode/vllm-backport#33: all four decode workers raised `nixlRemoteDisconnectError: NIXL_ERR_REMOTE_DISCONNECT`
    # (the binding's exception: its class is a peer's, catalog/exceptions.yaml), and the status logged in a line of
    # a connector's own (synthetic: vLLM's NixlConnector logs the exception's text after its own words)
    (e,) = feed(["nixl._bindings.nixlRemoteDisconnectError: NIXL_ERR_REMOTE_DISCONNECT"])
    assert (e.kind, e.fields.get("terminal")) == ("nccl.remote_error", True)
    (e,) = feed(["ERROR 08-19 03:12:44 [nixl_connector.py:1533] NIXL transfer failed for request cmpl-1: "
                 "NIXL_ERR_REMOTE_DISCONNECT"])
    assert (e.kind, e.fields["stack"], e.fields["peer_status"]) == ("nccl.remote_error", "nixl",
                                                                    "NIXL_ERR_REMOTE_DISCONNECT")
    # near miss: NIXL_ERR_BACKEND names no peer
    assert [e for e in feed(["nixl._bindings.nixlBackendError: NIXL_ERR_BACKEND"])
            if e.kind == "nccl.remote_error"] == []


# synthetic (ai-dynamo/nixl src/plugins/ucx/ucx_utils.cpp before ucx_enums.cpp: NIXL_WARN `Unexpected UCX error: `
# and ucs_status_string(UCS_ERR_CANCELED)); ai-dynamo/nixl#656 maps the status to NIXL_ERR_REMOTE_DISCONNECT
CANCELS = [f"W0904 10:52:53.04769{i}     51{i} ucx_utils.cpp:62] Unexpected UCX error: Request canceled"
           for i in range(6)]


def test_a_ucx_cancel_flood_is_one_peer_loss_and_only_on_a_ucx_line() -> None:
    events = feed(CANCELS)
    assert [(e.kind, e.fields["peer_status"]) for e in events] == [("nccl.remote_error", "UCS_ERR_CANCELED")]
    # near miss: the same words in an HTTP client's log are not UCX's
    assert feed(["2025-09-04 10:52:53 aiohttp.client WARNING Request canceled by the caller"]) == []


def test_a_cancel_flood_after_the_real_error_stays_its_symptom(make_bundle: BundleMaker) -> None:
    # The prefill side's own exception (a KeyError in vLLM's connector, as llm-d/llm-d#187's maintainer describes it;
    # the traceback's frames synthetic), then the decode side's cancels: the exception is the cause.
    prefill = "\n".join([
        "Traceback (most recent call last):",
        '  File "/opt/vllm/vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py", line 640, in '
        "get_finished",
        "    del self._reqs_to_send[req_id]",
        "KeyError: 'cmpl-7f3c1b2e-0'",
    ]) + "\n"
    decode = "\n".join(CANCELS) + "\n"
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": prefill, "app/rank-2.log": decode},
                                                copy.deepcopy(WORKLOAD), "pd-cancel")))
    assert v.root_cause is not None and v.root_cause.category.startswith("app.exception")
    assert "KeyError" in v.root_cause.summary


# ---------------------------------------------------------------- the binding's exception classes


def test_a_bindings_lower_camel_class_ends_a_traceback_when_qualified() -> None:
    exc = exception_shape("nixl._bindings.nixlBackendError: NIXL_ERR_BACKEND")
    assert exc is not None and exc.cls == "nixlBackendError"
    # near misses: unqualified, or a lower-case word that is no class
    assert exception_shape("nixlBackendError: NIXL_ERR_BACKEND") is None
    assert exception_shape("nixl.agent.created: ok") is None
    assert exception_shape("torch.cuda.error: x") is None
