"""A libfabric provider or launch environment the process was not given (catalog/transport.yaml `local_statuses`,
stacks ccl and ofi): oneCCL's ATL finding no provider or no local coordinates, libfabric's own fi_getinfo() result
of no provider at all. The job's own set-up (nccl.error with `setup`), on the node that printed it.

Lines marked with a thread are verbatim from that public report; the ones marked synthetic follow the format string of
the source named."""

from __future__ import annotations

from firstfault.model import Event
from tests.extract import helpers


def _setups(lines: list[str]) -> list[tuple[object, object]]:
    events: list[Event] = helpers.events(lines, "application")
    return [(e.fields["stack"], e.fields["local_status"]) for e in events
            if e.kind == "nccl.error" and e.fields.get("setup")]


# llm-d/llm-d#2270 (the decode pod's log as the PR quotes it): oneCCL's ATL over libfabric with no provider
CCL_NO_PROVIDER = [
    "  oneCCL: atl_ofi_comm.cpp:232 init_transport: EXCEPTION: failed to initialize ATL",
    "  CCL_ERROR| atl_ofi_helper.cpp:1118 fi_getinfo error: ret -61, providers 0",
]
# huggingface/accelerate#2340: oneCCL started by `accelerate launch` with no MPI launcher's variables
CCL_NO_COORD = [
    "2024:01:15-03:36:29:(1980058) |CCL_WARN| did not find MPI-launcher specific variables, switch to ATL/OFI, to "
    "force enable ATL/MPI set CCL_ATL_TRANSPORT=mpi",
    "2024:01:15-03:36:29:(1980058) |CCL_WARN| could not get local_idx/count from environment variables, trying to get "
    "them from ATL",
    "2024:01:15-03:36:29:(1980058) |CCL_ERROR| global.cpp:150 getenv_local_coord: condition "
    "global_data::env().ze_ipc_exchange == ccl::ze::ipc_exchange_mode::sockets failed",
    "to get local_idx/count from ATL, set CCL_ZE_IPC_EXCHANGE=sockets explicitly",
]
# ofiwg/libfabric#12708: the EFA provider's device list fails on a uverbs device the pod may not open, then no provider
OFI_NO_PROVIDER = [
    "libfabric:...:efa:ep_data:efa_device_construct_gid():47<warn> ibv_open_device failed! errno: 2",
    "libfabric:...:efa:fabric:efa_device_list_initialize():302<warn> efa_device_construct_gid failed for device_idx 0, "
    "err=-2",
    "libfabric:...:core:core:fi_getinfo_():1391<warn> fi_getinfo: provider efa output empty list",
    "fi_getinfo: -61 (No data available)",
]


def test_oneccl_without_a_provider_or_its_launchers_variables() -> None:
    assert _setups(CCL_NO_PROVIDER) == [("ccl", "no_provider")]
    assert _setups(CCL_NO_COORD) == [("ccl", "pmi_unavailable")]
    # the message whole on one line, as oneCCL prints it where the terminal does not wrap it (synthetic: the same
    # CCL_THROW_IF_NOT's words)
    assert _setups(["|CCL_ERROR| global.cpp:150 getenv_local_coord: condition global_data::env().ze_ipc_exchange == "
                    "ccl::ze::ipc_exchange_mode::sockets failed to get local_idx/count from ATL, set "
                    "CCL_ZE_IPC_EXCHANGE=sockets explicitly"]) == [("ccl", "pmi_unavailable")]


def test_libfabric_finding_no_provider() -> None:
    assert _setups(OFI_NO_PROVIDER) == [("ofi", "no_provider")]


def test_near_misses() -> None:
    # near miss: oneCCL's warnings alone (it goes on to get the coordinates from the ATL), and its fi_getinfo failing
    # with another code (synthetic, the same LOG_ERROR with ret -22)
    assert _setups(CCL_NO_COORD[:2]) == []
    assert _setups(["2024:01:15-03:36:29:(1980058) |CCL_ERROR| atl_ofi_helper.cpp:1118 fi_getinfo error: ret -22, "
                    "providers 0"]) == []
    # near miss: libfabric's per-provider warnings (another provider may fit: sw-intelmpi-ofi-addrinfo's log,
    # firemodels/fds#7868) are no provider missing
    assert _setups(OFI_NO_PROVIDER[:3]) == []
    assert _setups(["libfabric:core:core:fi_getinfo_():1002<warn> fi_getinfo: provider ofi_rxm returned -61 "
                    "(No data available)"]) == []
