"""The fabric's management daemons in their own words, read through one table (catalog/transport.yaml
`fabric_daemon_messages`; extract/fabricd.py): OpenSM's numbered errors by number and words, ibacm's endpoint errors.

Lines marked with a thread are verbatim from it; lines marked with a source file follow the format string there
(the values are this test's). The near misses: an OpenSM number the table does not name (a shutdown's `No previous
bind`, a healthy fabric's sweep errors), a number two of OpenSM's files print (ERR 5415: the vendor layer's and the
performance manager's), ibacm's record of an endpoint it is making, the words of a number without the number, and a
daemon's record in an attempt that did not fail (`standing`: nothing).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.catalog.tables import fabric_daemon_messages
from firstfault.extract import fabricd
from firstfault.model import Event, Verdict
from tests.extract import helpers


def feed(lines: list[str], source: str = "syslog") -> list[Event]:
    return [e for e in helpers.events(lines, source, file="opensm.log", node="sm-01") if e.kind == "fabric.daemon"]


def read(line: str, source: str = "syslog") -> list[tuple[object, ...]]:
    return [(e.fields.get("daemon"), e.fields.get("daemon_class"), e.fields.get("code"), e.fields.get("pkey"))
            for e in feed([line], source)]


@pytest.mark.parametrize(("line", "expected"), [
    # linux-rdma/opensm#37: OpenSM 3.3.23's log on Linux 6.11 (libvendor/osm_vendor_ibumad.c, osm_sm_mad_ctrl.c,
    # osm_sm.c)
    ("  165028 [F0D43740] 0x01 -> osm_vendor_bind: ERR 5426: Unable to register class 129 version 1",
     ("opensm", "sm_host", "5426", None)),
    ("  165157 [F0D43740] 0x01 -> osm_sm_mad_ctrl_bind: ERR 3118: Vendor specific bind failed",
     ("opensm", "sm_down", "3118", None)),
    ("  165162 [F0D43740] 0x01 -> osm_sm_bind: ERR 2E10: SM MAD Controller bind failed (IB_ERROR)",
     ("opensm", "sm_down", "2E10", None)),
    # the journal's form of the same record (opensm's syslog output: the function and message after the tag)
    ("Oct 21 08:13:38 sm-01 opensm[2187]: osm_sm_bind: ERR 2E10: SM MAD Controller bind failed (IB_ERROR)",
     ("opensm", "sm_down", "2E10", None)),
    # format: libvendor/osm_vendor_ibumad.c osm_vendor_open_port (`ERR 542C: umad_open_port() failed`)
    ("  140711 [F0D43740] 0x01 -> osm_vendor_open_port: ERR 542C: umad_open_port() failed",
     ("opensm", "sm_host", "542C", None)),
    # linux-rdma/rdma-core#413: ibacm on a limited partition (ibacm/src/acm.c acm_ep_up)
    ("acm_ep_up: ERROR - unable to assign EP name for pkey 0x123", ("ibacm", "partition", None, "0x123")),
    # linux-rdma/rdma-core#482: ibacm on a VM host, a P_Key kept for a guest
    ("acm_ep_up: ERROR - unable to assign EP name for pkey 0xA001", ("ibacm", "partition", None, "0xa001")),
])
def test_a_daemon_record_of_the_table_is_read(line: str, expected: tuple[object, ...]) -> None:
    assert read(line) == [expected]
    assert feed([line])[0].fields["standing"] is True


@pytest.mark.parametrize("line", [
    # linux-rdma/opensm#37: what OpenSM prints as it exits after a failed bind (perfmgr, congestion control, SA)
    "  165173 [F0D43740] 0x01 -> perfmgr_mad_unbind: ERR 5405: No previous bind",
    "  165176 [F0D43740] 0x01 -> osm_congestion_control_shutdown: ERR C108: No previous bind",
    "  165217 [F0D43740] 0x01 -> osm_sa_mad_ctrl_unbind: ERR 1A11: No previous bind",
    # format: opensm/osm_perfmgr.c perfmgr_mad_send_err_callback: ERR 5415 is the performance manager's too, in other
    # words than the vendor layer's `Error opening UMAD`
    "  165028 [F0D43740] 0x01 -> perfmgr_mad_send_err_callback: ERR 5415: GUID 0x0002c90300a1b2c3 not found in "
    "monitored map",
    # format: opensm/osm_state_mgr.c state_mgr_is_sm_port_down: a sweep meeting a port that did not answer (no row)
    "  165028 [F0D43740] 0x01 -> state_mgr_is_sm_port_down: ERR 3308: SM port GUID unknown",
    # the words of a row without OpenSM's number before them (another program's text)
    "bind: Unable to register class 129 version 1",
    # a number in another program's words: not OSM_LOG's `function: ERR XXXX: `
    "worker 3: ERR 5426 while loading shard",
    # rdma-core ibacm/src/acm.c acm_ep_up and acm_find_ep: the level-2 records before an endpoint is made
    "acm_ep_up: creating endpoint for pkey 0x123",
    "acm_find_ep: pkey 0x123",
])
def test_near_misses_are_not_read(line: str) -> None:
    assert feed([line]) == []


def test_literals_prefilter_every_row() -> None:
    ex = fabricd.EXTRACTORS[0]
    for row in fabric_daemon_messages():
        line = f"fn: ERR {row.code}: {row.words}" if row.code is not None else f"acm_ep_up: {row.words} 0x1"
        assert helpers.holds_literal(ex, line), row


def verdict(tmp: Path, text: str, state: str | None) -> Verdict:
    (tmp / "ibacm.log").write_text(text)
    end = f"  terminal_state: {state}\n" if state else ""
    (tmp / "workload.yaml").write_text(
        "apiVersion: firstfault/v1\nworkload:\n  id: '7'\n  scheduler: static\n" + end +
        "sources:\n  - {kind: syslog, path: ibacm.log}\n")
    return Analyzer().analyze_path(str(tmp))


# linux-rdma/rdma-core#413 and #482: the same record, in an attempt that failed and on a host where nothing did
IBACM = "acm_ep_up: creating endpoint for pkey 0x123\nacm_ep_up: ERROR - unable to assign EP name for pkey 0x123\n"


def test_a_daemon_record_names_a_cause_in_a_failed_attempt(tmp_path: Path) -> None:
    v = verdict(tmp_path, IBACM, "FAILED")
    assert v.attributed_domain == "infrastructure"
    assert v.root_cause is not None and v.root_cause.category == "node.driver.rdma"


@pytest.mark.parametrize("state", [None, "COMPLETED"])
def test_a_daemon_record_without_a_failure_is_nothing(tmp_path: Path, state: str | None) -> None:
    v = verdict(tmp_path, IBACM, state)
    assert v.attributed_domain == "none"
    assert v.root_cause is None and not v.candidates


# --- the subnet manager's crash, in apport's crash report (extract/signals.py ApportExtractor; catalog/platform.yaml
# `platform_programs`, part fabric)

def crashes(lines: list[str]) -> list[tuple[object, ...]]:
    return [(e.fields.get("signal"), e.fields.get("by"), e.fields.get("program"), e.fields.get("part"))
            for e in helpers.events(lines, "syslog", file="opensm-crash.txt", node="sm-01")
            if e.kind == "process.signal"]


def test_the_sm_crash_report_is_the_fabric_program_crashing() -> None:
    # linux-rdma/opensm#30: OpenSM 3.3.21's apport report (its keys as posted, then the stack's first frame)
    lines = ["Signal: 11", "SourcePackage: opensm", "Stacktrace:",
             " #0 0x00005636f04835a9 in get_next_switch (p_lash=0x1, link=<optimized out>, sw=0) at "
             "osm_ucast_lash.c:337"]
    assert crashes(lines) == [("SIGSEGV", "self", "opensm", "fabric")]


@pytest.mark.parametrize("lines", [
    # a package no row names: the workload's own program, whose crash its own output reports (apport's format)
    ["Signal: 11", "SourcePackage: python3.10"],
    # a signal that is no crash (apport's format: a report of a program killed from outside)
    ["Signal: 15", "SourcePackage: opensm"],
    # the keys of two reports, too far apart to be one
    ["Signal: 11", *(f"  {i:04x} filler" for i in range(12)), "SourcePackage: opensm"],
    # the words inside another record (a key of apport's is at the line's start)
    ["caught Signal: 11", "  SourcePackage: opensm"],
])
def test_near_misses_of_the_crash_report(lines: list[str]) -> None:
    assert crashes(lines) == []
