"""NVIDIA's bug report (nvidia-bug-report.sh's nvidia-bug-report.log[.gz]) read section by section
(collect/bugreport.py, catalog/platform.yaml `bug_report_sections`).

The sections are built from real reports and their script:
- the layout (a line of 44 underscores, an empty line, the header; `*** FILE` then `*** ls: ...`; `dmesg:`; the
  kernel-message scan's `  journalctl -b N:` blocks; nvidia-smi's commands one after another) is nvidia-bug-report.sh's
  (NVIDIA's Linux driver, `$Change: 37062940 $` and its 2019-2022 versions);
- the opening, `*** /etc/issue`, the X server's `journalctl -b -0 _COMM=Xorg` and its `coredumpctl info` core dump
  (`Signal: 6 (ABRT)`) are a report posted whole on GitHub (nvidia-bug-report.sh Version: 31831145, an RTX 3060
  Laptop GPU under Arch Linux, 2022-10-27: the public file that find_string "Start of NVIDIA bug report log file"
  finds beside the script's versions), its date and host moved to the test's window and node;
- the Xid 79 lines are NVIDIA/open-gpu-kernel-modules#425's (`NVRM: Xid (PCI:0000:2d:00): 79, pid='<unknown>',
  name=<unknown>, GPU has fallen off the bus.`, posted from "the previous boot logs"), in dmesg's uptime form as
  NVIDIA/NVSentinel#155 posts dmesg (`[ 1843.308145] NVRM: ...`) or in the journal's, the PCI address and the
  time moved to the test's GPU and window;
- nvidia-smi --query's head is NVIDIA/open-gpu-kernel-modules#489's (`==============NVSMI LOG==============`,
  `Driver Version : 530.41.03`, `Attached GPUs : 1`), its Remapped Rows those of tests/extract/test_memory_printers.py
  (SMI_H100_UE).
"""

from __future__ import annotations

import copy
import gzip
import time
from datetime import UTC, datetime
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firstfault import records
from firstfault.analysis import parallel
from firstfault.analysis.analyze import Analyzer
from firstfault.bundle import load_bundle
from firstfault.collect import scan
from firstfault.collect.bugreport import Splitter, opens_report
from firstfault.collect.scan import LineScanner, all_line_extractors, feed_lines
from firstfault.extract.base import Candidate
from firstfault.model import Event
from firstfault.timeparse import TimeParser
from tests import tier
from tests.conftest import WORKLOAD, BundleMaker

SEP = "_" * 44
SP = " "  # (the report's own trailing blanks)
PAD = " " * 16
XORG_ARGS = "-background none -noreset -keeptty -novtswitch -verbose 3"
BUILT = "#1 SMP PREEMPT_DYNAMIC Thu, 13 Oct 2022 18:58:49 +0000"

OPENING = f"""{SEP}

Start of NVIDIA bug report log file.  Please include this file, along
with a detailed description of your problem, when reporting a graphics
driver bug via the NVIDIA Linux forum (see forums.developer.nvidia.com)
or by sending email to 'linux-bugs@nvidia.com'.

nvidia-bug-report.sh Version: 31831145

Date: Mon Nov  2 10:20:11 AM UTC 2026
uname: Linux node-02 6.0.1-arch2-1 #1 SMP PREEMPT_DYNAMIC Thu, 13 Oct 2022 18:58:49 +0000 x86_64 GNU/Linux
command line flags:{SP}

{SEP}

*** /etc/issue
*** ls: -rw-r--r-- 1 root root 20 2026-11-02 10:07:28.000000000 +0000 /etc/issue
Arch Linux \\r (\\l)

"""

XORG = f"""{SEP}

journalctl -b -0 _COMM=Xorg

-- No entries --

{SEP}

/sbin/coredumpctl info COREDUMP_COMM=Xorg COREDUMP_COMM=Xorg.bin COREDUMP_COMM=X
           PID: 853 (Xorg)
           UID: 120 (gdm)
           GID: 120 (gdm)
        Signal: 6 (ABRT)
     Timestamp: Mon 2026-11-02 10:05:55 UTC (15min ago)
  Command Line: /usr/lib/Xorg vt1 -displayfd 3 -auth /run/user/120/gdm/Xauthority -nolisten tcp {XORG_ARGS}
    Executable: /usr/lib/Xorg
 Control Group: /user.slice/user-120.slice/session-1.scope
          Unit: session-1.scope
       Message: Process 853 (Xorg) of user 120 dumped core.
{PAD}
                Stack trace of thread 853:
                #0  0x00007f6567f9a34c __pthread_kill_implementation (libc.so.6 + 0x8f34c)
                #1  0x00007f6567f4d4b8 raise (libc.so.6 + 0x424b8)
                #2  0x00007f6567f37534 abort (libc.so.6 + 0x2c534)
                #3  0x0000555dc3673a00 OsAbort (Xorg + 0x153a00)
                #4  0x0000555dc3675545 FatalError (Xorg + 0x155545)

"""

XID79_JOURNAL = ("Nov 02 10:01:44 node-02 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, "
                 "GPU has fallen off the bus.")


def kernel_scan(boot: str) -> str:
    """The kernel-message scan's section with the Xid 79 in the journal of boot `boot` (-0, -1, -2)."""
    return f"""{SEP}

Scanning kernel log files for NVIDIA kernel messages:

  journalctl -b {boot}:
{XID79_JOURNAL}
Nov 02 10:01:44 node-02 kernel: NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.

"""


DMESG = f"""{SEP}

dmesg:

[    0.000000] Linux version 6.0.1-arch2-1 (linux@archlinux) (gcc (GCC) 12.2.0, GNU ld (GNU Binutils) 2.39.0) {BUILT}
[ 1843.308145] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
[ 1843.308150] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.

"""

SMI = f"""{SEP}

/usr/bin/nvidia-smi --query

==============NVSMI LOG==============

Timestamp                                 : Mon Nov  2 10:20:42 2026
Driver Version                            : 530.41.03
CUDA Version                              : 12.1

Attached GPUs                             : 1
GPU 00000000:3B:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    ECC Errors
        Volatile
            SRAM Correctable              : 0
            SRAM Uncorrectable Parity     : 0
            SRAM Uncorrectable SEC-DED    : 0
            DRAM Correctable              : 0
            DRAM Uncorrectable            : 3
    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : 1
        Pending                           : Yes
        Remapping Failure Occurred        : Yes

/usr/bin/nvidia-smi --query --unit

==============NVSMI LOG==============

Timestamp                                 : Mon Nov  2 10:20:43 2026
Driver Version                            : 530.41.03

Attached Units                            : 0

"""

CLOSING = f"""{SEP}

End of NVIDIA bug report log file.
"""

REPORT = OPENING + XORG + kernel_scan("-1") + DMESG + SMI + CLOSING

REPORT_WORKLOAD = copy.deepcopy(WORKLOAD)
REPORT_WORKLOAD["sources"] = [{"kind": "kernel", "path": "nodes/{node}/nvidia-bug-report.log.gz"}]
PLAIN_WORKLOAD = copy.deepcopy(WORKLOAD)
PLAIN_WORKLOAD["sources"] = [{"kind": "kernel", "path": "nodes/{node}/nvidia-bug-report.log"}]


def gz(text: str) -> bytes:
    return gzip.compress(text.encode(), mtime=0)


def read_file(path: Path, rel: str, kind: str = "kernel") -> tuple[list[Candidate], scan.FileStats]:
    """A file's candidates as the bundle's scanner of `kind` finds them (a bug report's sections by their own)."""
    out: list[Candidate] = []
    tp = TimeParser(UTC, datetime(2026, 11, 2, 10, tzinfo=UTC), datetime(2026, 11, 2, 11, tzinfo=UTC))
    stats = LineScanner(kind, all_line_extractors()).scan_file(str(path), rel, node="node-02", rank=None,
                                                               srun_prefix=False, tp=tp, emit=out.append)
    return out, stats


def events_of(path: Path, rel: str, kind: str = "kernel") -> list[Event]:
    return feed_lines(read_file(path, rel, kind)[0])


# ---------------------------------------------------------------- through the engine

def test_a_reports_dmesg_xid_and_nvidia_smis_failed_remap_name_the_gpu_on_that_node(make_bundle: BundleMaker) -> None:
    root = make_bundle({"nodes/node-02/nvidia-bug-report.log.gz": gz(REPORT)}, REPORT_WORKLOAD)
    v = Analyzer().analyze_path(str(root))
    assert v.root_cause is not None
    assert v.root_cause.category == "gpu.fallen_off_bus"
    assert v.root_cause.nodes == ["node-02"] and v.root_cause.devices == ["node-02/pci:0000:3b:00"]
    cause = [e for e in v.evidence if e.role == "cause"]
    assert [(e.source, e.line) for e in cause] == [("kernel", REPORT.splitlines().index(DMESG.splitlines()[5]) + 1)]
    # nvidia-smi --query's records read as they are in an application source: the GPU's memory failing
    assert {(e.source, e.event) for e in v.evidence if e.role == "symptom"} == {("application", "gpu.accel_error")}
    smi = [(e.evidence.source, e.fields["reason"], e.device)
           for e in events_of(root / "nodes/node-02/nvidia-bug-report.log.gz", "r.gz") if e.kind == "gpu.accel_error"]
    assert ("application", "row_remap_failure", "pci:0000:3b:00") in smi
    assert ("application", "volatile_uncorrectable", "pci:0000:3b:00") in smi
    kernel = next(c for c in v.coverage if c.source == "kernel")
    assert kernel.note is not None and "an NVIDIA bug report: 2 section(s) read" in kernel.note
    assert "journalctl -b -1: (an earlier boot)" in kernel.note
    assert "coredumpctl info COREDUMP_COMM=Xorg COREDUMP_COMM=Xorg.bin COREDUMP_COMM=X (the display server's core " \
           "dumps)" in kernel.note


def test_the_plain_report_and_its_gz_give_the_same_verdict(make_bundle: BundleMaker) -> None:
    a = Analyzer().analyze_path(str(make_bundle({"nodes/node-02/nvidia-bug-report.log.gz": gz(REPORT)},
                                                REPORT_WORKLOAD, name="gz")))
    b = Analyzer().analyze_path(str(make_bundle({"nodes/node-02/nvidia-bug-report.log": REPORT}, PLAIN_WORKLOAD,
                                                name="plain")))
    assert a.root_cause is not None and b.root_cause is not None
    # the same cause, whose `why` names the line it was read from in each one's own file
    assert a.root_cause.why is not None and a.root_cause.why.endswith("(nodes/node-02/nvidia-bug-report.log.gz:60)")
    assert a.root_cause.why.replace(".log.gz:", ".log:") == b.root_cause.why
    assert msgspec.structs.replace(a.root_cause, why=None) == msgspec.structs.replace(b.root_cause, why=None)
    assert [(e.event, e.line, e.text) for e in a.evidence] == [(e.event, e.line, e.text) for e in b.evidence]


def test_two_workers_read_a_report_as_one_process_does(make_bundle: BundleMaker,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "MIN_BYTES", 0)  # (a small bundle: the workers started all the same)
    other = "Nov  2 10:30:00 node-01 kernel: usb 1-1: new high-speed USB device number 2 using xhci_hcd\n"
    root = make_bundle({"nodes/node-02/nvidia-bug-report.log.gz": gz(REPORT),
                        "nodes/node-01/nvidia-bug-report.log.gz": gz(other)}, REPORT_WORKLOAD)
    now = datetime(2026, 11, 3, 12, tzinfo=UTC)
    one, two = (records.dumps(Analyzer().analyze_bundle(load_bundle(str(root)), now=now, workers=n)) for n in (1, 2))
    assert one == two and "an NVIDIA bug report: 2 section(s) read" in one


def test_a_report_in_an_application_source_is_read_alike(make_bundle: BundleMaker) -> None:
    # known by its opening, whatever the kind it was put in: its dmesg is still the kernel's
    wl = copy.deepcopy(WORKLOAD)
    wl["sources"] = [{"kind": "application", "path": "nodes/{node}/nvidia-bug-report.log.gz"}]
    v = Analyzer().analyze_path(str(make_bundle({"nodes/node-02/nvidia-bug-report.log.gz": gz(REPORT)}, wl)))
    assert v.root_cause is not None and v.root_cause.category == "gpu.fallen_off_bus"


def test_near_miss_an_earlier_boots_xid_is_not_this_runs(make_bundle: BundleMaker) -> None:
    # the same Xid 79, stamped inside the window, in the journal of the boot before: not read
    report = OPENING + kernel_scan("-1") + CLOSING
    v = Analyzer().analyze_path(str(make_bundle({"nodes/node-02/nvidia-bug-report.log.gz": gz(report)},
                                                REPORT_WORKLOAD)))
    assert v.root_cause is None
    assert not any(e.event == "gpu.xid" for e in v.evidence)
    # and in this boot's journal it is read
    report = OPENING + kernel_scan("-0") + CLOSING
    v = Analyzer().analyze_path(str(make_bundle({"nodes/node-02/nvidia-bug-report.log.gz": gz(report)},
                                                REPORT_WORKLOAD, name="b0")))
    assert v.root_cause is not None and v.root_cause.category == "gpu.fallen_off_bus"
    assert str(v.root_cause.first_seen).startswith("2026-11-02T10:01:44")


def test_near_miss_the_x_servers_core_dump_is_not_the_jobs_crash(make_bundle: BundleMaker, tmp_path: Path) -> None:
    report = OPENING + XORG + CLOSING
    root = make_bundle({"nodes/node-02/nvidia-bug-report.log.gz": gz(report)}, REPORT_WORKLOAD)
    v = Analyzer().analyze_path(str(root))
    assert v.root_cause is None and v.evidence == [] and v.candidates == []
    assert events_of(root / "nodes/node-02/nvidia-bug-report.log.gz", "r.gz") == []
    kernel = next(c for c in v.coverage if c.source == "kernel")
    assert kernel.note is not None and "0 section(s) read" in kernel.note
    assert "journalctl -b -0 _COMM=Xorg (the display server's journal)" in kernel.note


def test_near_miss_a_log_that_quotes_the_opening_further_on_is_no_report(tmp_path: Path) -> None:
    # an application's log that prints the words in its middle: read as any log of its kind, every line
    lines = [f"2026-11-02 10:00:{i:02d},000 INFO step {i}" for i in range(12)]
    lines[6] = "2026-11-02 10:00:06,000 INFO Start of NVIDIA bug report log file.  Please include this file, along"
    text = "\n".join([*lines, "", SEP, "", "  journalctl -b -1:", XID79_JOURNAL, ""])
    path = tmp_path / "kern.log"
    path.write_text(text)
    assert not opens_report(text.encode())
    found, stats = read_file(path, "kern.log")
    assert stats.notes == []
    assert [e.kind for e in feed_lines(found) if e.kind == "gpu.xid"] == ["gpu.xid"]  # read as a kernel log's line
    # nor does a line that holds the words after something else open one
    assert not opens_report(b"x\nINFO: Start of NVIDIA bug report log file.\n")
    assert opens_report(b"\r\n\r\n  Start of NVIDIA bug report log file.  Please\r\n")


def test_a_truncated_report_keeps_what_was_read_and_is_partial(make_bundle: BundleMaker) -> None:
    data = gz(REPORT)
    # cut inside the deflate stream, after the dmesg section's bytes: the Xid is read, the coverage is partial
    cut = data[: len(data) * 3 // 4]
    v = Analyzer().analyze_path(str(make_bundle({"nodes/node-02/nvidia-bug-report.log.gz": cut}, REPORT_WORKLOAD)))
    kernel = next(c for c in v.coverage if c.source == "kernel")
    assert kernel.status == "partial"
    assert kernel.note is not None and "read stopped early" in kernel.note and "an NVIDIA bug report" in kernel.note
    # a report cut in the middle of a section's lines reads the lines it has
    cut_text = REPORT[: REPORT.index("[ 1843.308150]")]
    v = Analyzer().analyze_path(str(make_bundle({"nodes/node-02/nvidia-bug-report.log": cut_text}, PLAIN_WORKLOAD,
                                                name="cut")))
    assert v.root_cause is not None and v.root_cause.category == "gpu.fallen_off_bus"


# ---------------------------------------------------------------- the cut itself

def test_pieces_keep_the_files_line_numbers_across_small_chunks(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "nvidia-bug-report.log.gz"
    path.write_bytes(gz(REPORT))
    whole, _ = read_file(path, "r.gz")
    monkeypatch.setattr(scan, "CHUNK", 128)  # every section cut by a buffer's end, some headers too
    small, _ = read_file(path, "r.gz")
    key = [(c.source, c.line, c.text) for c in whole]
    assert key == [(c.source, c.line, c.text) for c in small]
    lines = REPORT.splitlines()
    assert all(lines[c.line - 1] == c.text for c in whole)
    assert {c.source for c in whole} == {"kernel", "application"}
    # no line of a header, a copied file's metadata, another boot or the X server's sections is a candidate
    assert not any("journalctl" in c.text or "*** ls:" in c.text or "Signal:" in c.text or "Xorg" in c.text
                   for c in whole)


def test_a_header_or_section_of_any_size_costs_its_lines() -> None:
    split = Splitter()
    long_header = "*** /var/log/" + "x" * 2_000_000
    body = "\n".join(f"[ {i}.000000] usb 1-1: new device" for i in range(50_000))
    text = (f"{SEP}\n\nStart of NVIDIA bug report log file.\n\n{SEP}\n\n{long_header}\n{body}\n"
            f"{SEP}\n\ndmesg:\n\n{body}\n")
    buf = text.encode()
    t0 = time.perf_counter()
    pieces = split.feed(buf, 0)
    took = time.perf_counter() - t0
    assert [(p.kind, buf[p.start:p.end].count(b"\n")) for p in pieces] == [("kernel", 50_001)]
    assert took < 2.0
    note = split.note("r")
    assert len(note) < 1000 and "1 section(s) read (dmesg: (kernel))" in note
    # many lines that start with underscores and are no separator: each looked at once
    buf = (f"{SEP}\n\nStart of NVIDIA bug report log file.\n{SEP}\n\ndmesg:\n" + "_" * 30 + "x\n" * 200_000).encode()
    t0 = time.perf_counter()
    pieces = Splitter().feed(buf, 0)
    assert time.perf_counter() - t0 < 2.0 and len(pieces) == 1


def test_a_copied_fabric_manager_log_is_read_as_fabric_managers(tmp_path: Path) -> None:
    # tests/extract/test_gpu.py FM_CASES' NVSwitch fatal error, its stamp moved into the window; and a copied X log
    fm = ("[Nov 02 2026 10:03:07] [ERROR] [tid 841] detected NVSwitch fatal error 20034 on fid 0 on NVSwitch pci bus "
          "id 00000000:86:00.0 physical id 3 port 33")
    report = (OPENING + f"{SEP}\n\n*** /var/log/fabricmanager.log\n*** ls: -rw-r--r-- 1 root root 1 2026-11-02 "
              f"10:20:00.000000000 +0000 /var/log/fabricmanager.log\n{fm}\n\n"
              f"{SEP}\n\n*** /var/log/Xorg.0.log\n{fm}\n\n" + CLOSING)
    path = tmp_path / "nvidia-bug-report.log"
    path.write_text(report)
    found, stats = read_file(path, "r")
    assert [(c.source, c.line) for c in found] == [("fabricmanager", report.splitlines().index(fm) + 1)]
    assert [e.evidence.source for e in feed_lines(found)] == ["fabricmanager"]
    assert "*** /var/log/fabricmanager.log (fabricmanager)" in stats.notes[0]


# ---------------------------------------------------------------- dmesg's uptimes dated by this boot's journal

def _report_with_boot(boot: str, at: str) -> str:
    """The report with its kernel-message scan's Xid in the journal of boot `boot` at `at` (HH:MM:SS, the day the
    window's), then dmesg with the same Xid at its uptime: nvidia-bug-report.sh prints them in this order (the
    `get any relevant kernel messages` block, then `append dmesg output`)."""
    return OPENING + kernel_scan(boot).replace("10:01:44", at) + DMESG + CLOSING


def test_dmesgs_xid_is_dated_by_the_same_message_in_this_boots_journal(make_bundle: BundleMaker) -> None:
    # the journal's Xid at 09:01:44, an hour before the job's window: dmesg's (uptime 1843.3 s) is the same message,
    # so the boot was at 08:31:00.7 and dmesg's Xid is of 09:01:44 too: no Xid of the job's, no cause
    root = make_bundle({"nodes/node-02/nvidia-bug-report.log.gz": gz(_report_with_boot("-0", "09:01:44"))},
                       REPORT_WORKLOAD)
    v = Analyzer().analyze_path(str(root))
    assert v.root_cause is None or v.root_cause.category != "gpu.fallen_off_bus", v.root_cause
    times = [str(e.time) for e in events_of(root / "nodes/node-02/nvidia-bug-report.log.gz", "r.gz")
             if e.kind == "gpu.xid"]
    assert times == ["2026-11-02 09:01:44+00:00"] * 2, times  # the journal's, and dmesg's at the boot plus its uptime
    # ... and one inside the window dates dmesg's inside it: the cause, first seen then
    v = Analyzer().analyze_path(str(make_bundle(
        {"nodes/node-02/nvidia-bug-report.log.gz": gz(_report_with_boot("-0", "10:31:44"))}, REPORT_WORKLOAD,
        name="b1")))
    assert v.root_cause is not None and v.root_cause.category == "gpu.fallen_off_bus"
    assert str(v.root_cause.first_seen).startswith("2026-11-02T10:31:44")
    kernel = next(c for c in v.coverage if c.source == "kernel")
    assert kernel.note is not None and "not dated" not in kernel.note


def test_near_miss_an_earlier_boots_journal_dates_no_dmesg_line(make_bundle: BundleMaker) -> None:
    # the same message in the journal of the boot before says nothing of this boot's: dmesg's Xid is not dated,
    # read as before, and the coverage says why
    root = make_bundle({"nodes/node-02/nvidia-bug-report.log.gz": gz(_report_with_boot("-1", "09:01:44"))},
                       REPORT_WORKLOAD)
    v = Analyzer().analyze_path(str(root))
    assert v.root_cause is not None and v.root_cause.category == "gpu.fallen_off_bus"
    assert {e.time for e in events_of(root / "nodes/node-02/nvidia-bug-report.log.gz", "r.gz")
            if e.kind == "gpu.xid"} == {None}
    kernel = next(c for c in v.coverage if c.source == "kernel")
    assert kernel.note is not None and "dmesg's uptime stamps not dated" in kernel.note


def _opens_report_walking(head: bytes) -> bool:
    """opens_report's rule, every line of the first OPENING_LINES looked at (the walk without its memmem first)."""
    from firstfault.collect import bugreport as br

    pos = 0
    for _ in range(br.OPENING_LINES):
        end = head.find(b"\n", pos)
        if head[pos:pos + br.HEADER_CLIP].lstrip(b" \t\r").startswith(br.OPENING):
            return True
        if end < 0:
            return False
        pos = end + 1
    return False


@settings(max_examples=tier.examples(400), deadline=None)
@given(st.lists(st.sampled_from(["Start of NVIDIA bug report log file.", "  ", "\r", "\n", "_" * 40, "x",
                                 "Start of NVIDIA", " bug report log file", "2026-11-02 INFO "]), max_size=20))
def test_a_head_without_the_opening_words_is_no_report_without_a_walk(parts: list[str]) -> None:
    """opens_report answers False at once where the head holds no opening words (one memmem): the walk's answer on
    any head of openings, blanks, separators, halves of the words (the near miss: split, they open nothing)."""
    head = "".join(parts).encode()
    assert opens_report(head) == _opens_report_walking(head)
