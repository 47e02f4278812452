"""HPE Slingshot's CXI stack in its own words: a job that found no CXI service on its node (catalog/transport.yaml
`cxi_service_failures`, extract/slingshot.py; rule node-scheduler-cxi-service), and Slurm's Slingshot plugin saying the
same (catalog/slurm.yaml).

Lines are the public threads' (cited beside each) or the printing program's format strings filled in: libfabric's CXI
provider (ofiwg/libfabric af8ddbe9 prov/cxi/src/cxip_dom.c cxip_domain: `cxip_gen_auth_key failed: %d:%s`, behind
ofi_log's header), GASNet's ofi-conduit (BerkeleyLab/gasnet ofi-conduit/gasnet_ofi.h gasnetc_ofi_fatalerror: `%s:
%d(%s)`), MPICH's OFI netmod (`OFI call opendomain failed (default nic=...: ...)`), flux-coral2's prolog helper
(flux-framework/flux-coral2 3d97f8d0 src/cmd/flux-slingshot.c: `flux-slingshot: cxi%u: cxil_alloc_svc: %s`), Slurm's
switch/hpe_slingshot (SchedMD/slurm src/plugins/switch/hpe_slingshot/setup_nic.c slingshot_create_services). Each
reading has its near misses: the same call on another provider, the provider's other errnos, the CXI stack out of reach.
"""

from __future__ import annotations

import pytest

from firstfault.catalog.tables import cxi_service_failures
from firstfault.extract.slingshot import CXI_STACK, CxiServiceExtractor, service_failure
from firstfault.model import Event
from tests.extract.helpers import events

# uiuc-hpc/lci#110 (https://github.com/uiuc-hpc/lci/issues/110): the two posted lines, verbatim
LCI = ["err : Function not implemented", "cxip_gen_auth_key failed: -38"]
# StanfordLegion/gasnet#22 (https://github.com/StanfordLegion/gasnet/issues/22): the one posted line, verbatim
GASNET = ("*** FATAL ERROR (proc 0): in gasnetc_ofi_init() at .../gasnet_ofi.c:946: fi_domain failed: "
          "-38(Function not implemented)")
# flux-framework/flux-coral2#407 (https://github.com/flux-framework/flux-coral2/issues/407): verbatim
FLUX = "flux-slingshot: cxi0: cxil_alloc_svc: Invalid argument"
# today's provider record of the same (cxip_dom.c cxip_domain, behind ofi_log's header as FI_LOG_LEVEL=warn prints it)
PROVIDER = ("libfabric:53673:1693359811::cxi:core:cxip_domain():1984<warn> nid001234: cxip_gen_auth_key failed: "
            "-38:Function not implemented")


def service(lines: list[str]) -> list[Event]:
    return [e for e in events(lines) if e.kind == "sched.error" and e.fields.get("name") == "cxi_service"]


def read(lines: list[str]) -> list[tuple[object, object, object]]:
    return [(e.fields.get("printer"), e.fields.get("program"), e.fields.get("errno")) for e in service(lines)]


# ---------------------------------------------------------------- the provider's own words: read wherever they stand

@pytest.mark.parametrize("lines", [LCI, [PROVIDER], [LCI[1]]])
def test_the_providers_enosys_is_no_service_for_the_job(lines: list[str]) -> None:
    assert read(lines) == [("provider", "libfabric", "ENOSYS")]
    ev = service(lines)[0]
    assert ev.fields["side"] == "node" and ev.fields["text"] == "cxip_gen_auth_key failed"


@pytest.mark.parametrize("line", [
    # an auth key the program passed (cxip_info.c cxip_gen_auth_key: `Domain auth_key not NULL`, -FI_EINVAL)
    "libfabric:53673:1693359811::cxi:core:cxip_domain():1984<warn> cxip_gen_auth_key failed: -22:Invalid argument",
    "cxip_gen_auth_key failed: -22",
    # the number is no errno at all, or the words are another's
    "cxip_gen_auth_key failed: -9999",
    "cxip_gen_auth_key failed: Cannot allocate memory",
])
def test_the_providers_other_errnos_are_not_the_scheduler(line: str) -> None:
    assert service([line]) == []


# ---------------------------------------------------------------- a program's report: only with the CXI stack in reach

# lines of the CXI stack that a job's output holds (each names it in another way)
STACK = [
    PROVIDER,
    "libfabric:1234:1700000000::cxi:core:cxip_nic_get_rgroup_vni():303<warn> Failed to find valid default rgroup and "
    "vni for cxi0",
    # GASNet's own warning, printed only where the provider is cxi (gasnet_ofi.c gasnetc_ofi_init)
    "*** WARNING (proc 0): ofi-conduit failed to configure FI_CXI_* envvars.  This may lead to unstable behavior",
    "export FI_PROVIDER=cxi",
    "provider: cxi",
    "Using OFI provider (cxi)",
]


@pytest.mark.parametrize("before", STACK)
def test_gasnets_fi_domain_enosys_with_the_cxi_stack_before_it(before: str) -> None:
    assert read([before, GASNET])[-1] == ("consumer", None, "ENOSYS")


@pytest.mark.parametrize("after", STACK)
def test_gasnets_fi_domain_enosys_waits_for_the_cxi_stack_after_it(after: str) -> None:
    got = read([GASNET, "*** Caught a fatal signal (proc 0): SIGABRT(6)", after])
    assert ("consumer", None, "ENOSYS") in got


@pytest.mark.parametrize("line", [
    # MPICH 5's spelling of its domain open (src/mpid/ch4/netmod/ofi/ofi_init.c), the device on the line itself
    "MPIDI_OFI_init_local(681): OFI call opendomain failed (default nic=cxi0: Function not implemented)",
    # a program that prints fi_strerror() alone, the provider on the line
    "libfabric:1:2::cxi:core:cxip_domain():1984<warn> fi_domain failed: Function not implemented",
    "fi_domain failed: -FI_ENOSYS (prov/cxi)",
])
def test_other_programs_domain_open_with_the_cxi_stack_on_the_line(line: str) -> None:
    assert [p for p, _, n in read([line]) if p == "consumer" and n == "ENOSYS"]


@pytest.mark.parametrize("lines", [
    [GASNET],  # the bundle's one line: no provider named anywhere (StanfordLegion/gasnet#22)
    # the same call failing on other providers
    ["export FI_PROVIDER='verbs;ofi_rxm'", GASNET, "mlx5_0: port 1 active"],
    ["libfabric:1234:1700000000::efa:core:efa_domain_open():300<warn> cannot open domain", GASNET],
    ["provider: psm2", GASNET],
    # cxi inside other words is no CXI stack
    ["device rcxi0 and mycxip_thing", GASNET, "toxicity cxil"],
    # the CXI stack too far after it
    [GASNET, *(f"rank {i} waiting" for i in range(25)), "export FI_PROVIDER=cxi"],
    # another errno of the same call, the CXI stack in reach
    ["export FI_PROVIDER=cxi", GASNET.replace("-38(Function not implemented)", "-22(Invalid argument)")],
    ["MPIDI_OFI_init_local(681): OFI call opendomain failed (default nic=cxi0: Invalid argument)"],
])
def test_a_domain_open_without_the_cxi_stack_or_enosys_is_not_this(lines: list[str]) -> None:
    assert service(lines) == []


def test_a_held_report_stays_unclaimed_until_the_stack_shows() -> None:
    """Held, the report is no event and not claimed (it stays an unrecognized line where nothing confirms it)."""
    from firstfault.extract.base import LineContext

    ex = CxiServiceExtractor()
    ctx = LineContext(source="application", file="a.log", lineno=1, node=None, rank=None, time=None, state={})
    assert list(ex.extract(GASNET, ctx)) == [] and not ctx.claimed


# ---------------------------------------------------------------- the scheduler's own helper and Slurm's plugin

@pytest.mark.parametrize("line", [
    FLUX,
    "flux-slingshot: cxi1: cxil_alloc_svc: No space left on device",
    "Sep 13 10:00:01 hetchy1003 flux[1234]: flux-slingshot: cxi0: cxil_alloc_svc: Resource temporarily unavailable",
])
def test_fluxs_prolog_unable_to_make_the_service_is_the_scheduler(line: str) -> None:
    assert read([line]) == [("prolog", "flux-slingshot", service([line])[0].fields.get("errno"))]
    # the NIC's resources in libcxi's errno are not the job's storage
    assert [e for e in events([line]) if e.kind == "storage.error"] == []


@pytest.mark.parametrize("line", [
    # the helper's warnings before its fatal and a device it goes on without (flux-slingshot.c)
    "flux-slingshot: cxi0: cannot reserve 512 txqs: only 256 available",
    "flux-slingshot: cxi0: cxil_open_device: No such device",
    # libcxi's call without the helper's tag: a program's own
    "cxi0: cxil_alloc_svc: Invalid argument",
])
def test_fluxs_other_lines_are_not_the_service(line: str) -> None:
    assert service([line]) == []


@pytest.mark.parametrize(("line", "source"), [
    ("slurmstepd: error: Slingshot service allocation failed on cxi0: Invalid argument", "application"),
    ("[2024-05-01T10:00:00.123] error: Slingshot service allocation failed on cxi0: No space left on device",
     "application"),
    ("May  1 10:00:00 nid001 slurmd[812]: error: Slingshot service allocation failed on cxi1: Invalid argument",
     "syslog"),
])
def test_slurms_slingshot_plugin_in_its_own_words_is_the_nodes_slurm(line: str, source: str) -> None:
    got = [e for e in events([line], source, node=None if source == "application" else "nid001")
           if e.kind in ("sched.error", "storage.error")]
    assert [(e.kind, e.fields.get("name"), e.fields.get("side")) for e in got] == [("sched.error", "message", "node")]


# ------------------------------------------------------------ a peer outside the job's VNI is no service of the node

@pytest.mark.parametrize("line", [
    # openpmix/prrte#2004 (https://github.com/openpmix/prrte/issues/2004), verbatim: PRRTE's daemons launched without
    # the job's VNI, the launcher's own bug
    "Request dest_addr: 32 caddr.nic: 0X19D1 caddr.pid: 1 rxc_id: 0  error: 0x26c450f0 (err: 5, VNI_NOT_FOUND)",
    "MPIDI_OFI_handle_cq_error(1075): OFI poll failed (ofi_events.c:1077:MPIDI_OFI_handle_cq_error:Input/output error"
    " - VNI_NOT_FOUND)",
])
def test_a_targets_vni_not_found_is_not_the_nodes_missing_service(line: str) -> None:
    assert service([line]) == []


# ---------------------------------------------------------------- the table and the reader agree

def test_every_row_reads_its_own_words_and_no_other_errno() -> None:
    for row in cxi_service_failures():
        tag = row.after or ""
        good = f"{tag}x{row.text}-38" if row.errnos else f"{tag}cxi0{row.text}Invalid argument"
        got = service_failure(good)
        assert got is not None and got[0] == row, row
        if row.errnos:
            assert service_failure(f"{tag}x{row.text}-22") is None, row


@pytest.mark.parametrize(("text", "found"), [
    ("libfabric:1:2:cxi:core:cxip_x():1<warn> y", True), ("libfabric:1:2::cxi:mr:cxip_do_map():90<warn> y", True),
    ("cxil_map: write error", True), ("default nic=cxi3", True), ("FI_CXI_RX_MATCH_MODE=software", True),
    ("FI_PROVIDER=\"cxi\"", True), ("prov/cxi/src/cxip_msg.c", True),
    ("libfabric:1:2::efa:core:f():1<warn> y", False), ("provider: cxixyz", False), ("rcxi0", False),
    ("excise the cxi", False),
])
def test_the_cxi_stack_words(text: str, found: bool) -> None:
    assert (CXI_STACK.search(text) is not None) is found
