"""The layers a writer or a collector puts before a log line, read both ways: what the prefix layer peels (and the
host it names) and the stamp the time parser finds behind them.

Layered lines are real output: of the program named (run here, around a log line of the thread named), or of
the thread named.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from firstfault.extract.prefix import PrefixLayer, split_prefixes
from firstfault.timeparse import TimeParser, parse_rfc3339, progress_bar_end

# illinois-scicomp/machine-shop-maintenance#80
XID79 = "NVRM: Xid (PCI:0000:02:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
# hiyouga/LlamaFactory#6269
WATCHDOG = ("[rank0]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
            "timeout: WorkNCCL(SeqNum=7753, OpType=_REDUCE_SCATTER_BASE, NumelIn=544997376, NumelOut=68124672, "
            "Timeout(ms)=600000) ran for 600061 milliseconds before timing out.")


def stamp(line: str, start: str = "2026-12-03T15:00:00Z", end: str = "2026-12-03T16:00:00Z") -> datetime | None:
    st = TimeParser(UTC, parse_rfc3339(start), parse_rfc3339(end)).parse(line)
    return st.wall if st is not None else None


def at(text: str) -> datetime:
    return parse_rfc3339(text)


@pytest.mark.parametrize(
    ("line", "body", "host", "rank", "when"),
    [
        # util-linux 2.38.1 `logger --rfc5424 -s -t kernel`, run here
        (f'<11>1 2026-12-03T15:58:03.158260+00:00 vm kernel - - [timeQuality tzKnown="1" isSynced="0"] {XID79}',
         XID79, "vm", None, "2026-12-03T15:58:03.158260Z"),
        # ... `--rfc5424=notq`, no structured data
        (f"<11>1 2026-12-03T15:54:42.513181+00:00 vm kernel - - - {XID79}", XID79, "vm", None,
         "2026-12-03T15:54:42.513181Z"),
        # ... `--rfc3164`: a PRI before the classic header
        (f"<11>Dec  3 15:54:42 vm kernel: {XID79}", XID79, "vm", None, "2026-12-03T15:54:42Z"),
        # rsyslog's RSYSLOG_ForwardFormat (`<%PRI%>%TIMESTAMP:::date-rfc3339% %HOSTNAME% %syslogtag%%msg%`; synthetic
        # host and time around the thread's line)
        (f"<4>2026-12-03T15:31:35.123456+00:00 node-02 kernel: [ 817.312044] {XID79}", f"[ 817.312044] {XID79}",
         "node-02", None, "2026-12-03T15:31:35.123456Z"),
        # rsyslog/rsyslog#1120: rsyslogd's own RFC 5424 line (its "[origin ...]" is the message, not structured data)
        ('<46>1 2016-08-18T10:35:20.662120+00:00 MYHOSTNAME rsyslogd - - - [origin software="rsyslogd" '
         'swVersion="8.20.0" x-pid="21741" x-info="http://www.rsyslog.com"] start',
         '[origin software="rsyslogd" swVersion="8.20.0" x-pid="21741" x-info="http://www.rsyslog.com"] start',
         "MYHOSTNAME", None, None),
        # leptonai/gpud#870: `dmesg --decode --time-format=iso`
        ("syslog:err   : 2025-05-27T04:18:56,089671+00:00 NVRM: Xid (PCI:0000:04:00): 79, GPU has fallen off the bus",
         "NVRM: Xid (PCI:0000:04:00): 79, GPU has fallen off the bus", None, None, None),
        # GNU grep 3.8 `grep -H`, `grep -Hn`, `grep -H -B1` over a kern.log holding the thread's line, run here
        (f"logs/kern.log:Dec  3 15:31:35 node-a kernel: [ 817.312044] {XID79}",
         f"Dec  3 15:31:35 node-a kernel: [ 817.312044] {XID79}", None, None, "2026-12-03T15:31:35Z"),
        (f"kern.log:1:Dec  3 15:31:35 node-a kernel: [ 817.312044] {XID79}",
         f"Dec  3 15:31:35 node-a kernel: [ 817.312044] {XID79}", None, None, "2026-12-03T15:31:35Z"),
        ("logs/kern.log-Dec  3 15:31:30 node-a kernel: [ 812.100001] nvidia-modeset: loading",
         "Dec  3 15:31:30 node-a kernel: [ 812.100001] nvidia-modeset: loading", None, None, "2026-12-03T15:31:30Z"),
        # tqdm 4.70.1's bar overwritten in place, another process's line glued to it (two writers on one
        # stderr, run here; the line is the thread's)
        (f"\r  0%|          | 0/801 [00:00<?, ?it/s]\r  0%|          | 1/801 [00:00<06:40,  2.00it/s]{WATCHDOG}",
         WATCHDOG[len("[rank0]:"):], None, 0, "2026-12-06T18:44:12.715298Z"),
        # aws/aws-ofi-nccl#1020: NCCL_DEBUG_TIMESTAMP_FORMAT's bracket
        ("[2025-10-16 22:16:08] ip-172-31-3-90:1929:1937 [0] nccl_net_ofi_rdma_init:7978 NCCL WARN NET/OFI OFI "
         "fi_getinfo() call failed: No data available", None, None, None, None),
        # vllm-project/vllm#7800 (https://github.com/vllm-project/vllm/issues/7800): vLLM 0.5's worker tag and logger
        # before a traceback's frame, whose own indentation stays
        ('(VllmWorkerProcess pid=232) ERROR 08-23 08:25:25 multiproc_worker_utils.py:226]   File "/usr/local/lib/'
         'python3.10/dist-packages/vllm/worker/worker.py", line 132, in init_device',
         '  File "/usr/local/lib/python3.10/dist-packages/vllm/worker/worker.py", line 132, in init_device', None,
         None, None),
        # vllm-project/vllm#17756 (https://github.com/vllm-project/vllm/issues/17756): vLLM 0.9's, with the rank
        ("(VllmWorker rank=3 pid=406) ERROR 07-23 19:34:51 [multiproc_executor.py:487] RuntimeError: NCCL error: "
         "unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
         "RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)", None, 3, None),
        # openucx/ucx#4182 (https://github.com/openucx/ucx/issues/4182): MTT's banner glued to UCX's first line
        ("=============================================================[clx-orion-084:24830:0:24830]    "
         "ud_iface.c:761  Fatal: transport error: Endpoint timeout",
         "[clx-orion-084:24830:0:24830]    ud_iface.c:761  Fatal: transport error: Endpoint timeout", None, None, None),
        # openucx/ucx#2684: the banner, then Open MPI's ctime and tag
        ("=============================================================Tue Jun 12 18:14:48 2018[1,15]<stderr>:"
         "[clx-orion-097:26451:0:26451] rc_verbs_iface.c:63   FATAL: send completion with error: transport retry "
         "counter exceeded", "[clx-orion-097:26451:0:26451] rc_verbs_iface.c:63   FATAL: send completion with error: "
         "transport retry counter exceeded", None, 15, None),
        # real output: torchrun (PyTorch 2.13) with TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE='[${role_name}${local_rank}|
        # ${rank}]:' and --role trainer --tee 3, run here: the template's tag, with a number after the bar
        ("[trainer1|1]:ValueError: bad shape", "ValueError: bad shape", None, None, None),
        # real output: Ray Train's driver, run here (tests/lab/captured/ray_completed): Ray's colour codes around its
        # worker tag and its deduplication after the line
        ("\x1b[36m(RayTrainWorker pid=6806)\x1b[0m step 5 loss 0.6745\x1b[32m [repeated 14x across cluster] (Ray "
         "deduplicates logs by default. Set RAY_DEDUP_LOGS=0 to disable log deduplication, or see https://docs.ray.io/"
         "en/master/ray-observability/user-guides/configure-logging.html#log-deduplication for more options.)\x1b[0m",
         "step 5 loss 0.6745", None, None, None),
        ("\x1b[36m(RayTrainWorker pid=6806)\x1b[0m training finished after 6 steps (pid 6806)\x1b[32m [repeated 2x "
         "across cluster]\x1b[0m", "training finished after 6 steps (pid 6806)", None, None, None),
        # vllm-project/vllm#6042 (tests/wild's unk-vllm-ray-gather-watchdog-6042): the colour code pasted without
        # its escape character, before Ray's tag and PyTorch's rank
        ("[36m(RayWorkerWrapper pid=4009) [rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective "
         "operation timeout", "[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective operation timeout",
         None, 1, None),
        # sgl-project/sglang#4978 (https://github.com/sgl-project/sglang/issues/4978): SGLang's scheduler process,
        # its stamp and tensor-parallel rank
        ("[2025-04-01 09:58:02 TP0] Custom allreduce is disabled because this process group spans across nodes.",
         "Custom allreduce is disabled because this process group spans across nodes.", None, None,
         "2025-04-01T09:58:02Z"),
        # sgl-project/sglang#23603 (https://github.com/sgl-project/sglang/issues/23603): without the stamp
        ("[TP0] Scheduler hit an exception:", "Scheduler hit an exception:", None, None, None),
    ],
)
def test_layers_are_peeled_and_the_stamp_behind_them_read(line: str, body: str | None, host: str | None,
                                                          rank: int | None, when: str | None) -> None:
    p, settled = PrefixLayer().split_settled(line)
    if body is not None:
        assert (p.body, p.host, p.rank) == (body, host, rank)
    # what the scanner proves settled is what a fresh split of the body gives
    if settled:
        again = split_prefixes(p.body)
        assert (again.body, again.host, again.rank) == (p.body, None, None)
    if when is not None:
        assert stamp(line) == at(when)


@pytest.mark.parametrize(
    ("line", "when"),
    [
        ("syslog:err   : 2025-05-27T04:18:56,089671+00:00 NVRM: Xid", "2025-05-27T04:18:56.089671Z"),
        ("[2025-10-16 22:16:08] ip-172-31-3-90:1929:1937 [0] nccl_net_ofi_rdma_init:7978 NCCL WARN NET/OFI OFI",
         "2025-10-16T22:16:08Z"),
        # openucx/ucx#1881: Open MPI's ctime glued to its tag, and UCX's own Unix time behind the tag
        ("Sun Oct  1 17:18:44 2017[1,7]<stdout>:[1506867524.064665] [clx-hercules-012:26727:0]     ucp_worker.c:373  "
         "UCX  ERROR Error Endpoint timeout was not handled for ep 0xac1510", "2017-10-01T17:18:44Z"),
        ("[1,7]<stdout>:[1506867524.064665] [clx-hercules-012:26727:0]     ucp_worker.c:373  UCX  ERROR Error Endpoint "
         "timeout was not handled for ep 0xac1510", "2017-10-01T14:18:44.064665Z"),
        # openucx/ucx#2684: the ctime behind a glued banner
        ("=============================================================Tue Jun 12 18:14:48 2018[1,15]<stderr>:"
         "[clx-orion-097:26451:0:26451] rc_verbs_iface.c:63   FATAL: send completion with error",
         "2018-06-12T18:14:48Z"),
        # aws/aws-ofi-nccl#346: libfabric's header holds the Unix time
        ("libfabric:451707:1708520807::efa:cq:efa_rdm_txe_handle_error():737<warn> err: 5, message: Invalid address",
         "2024-02-21T13:06:47Z"),
    ],
)
def test_stamps_behind_layers_and_libraries_unix_times(line: str, when: str) -> None:
    assert stamp(line, "2017-01-01T00:00:00Z", "2026-12-31T00:00:00Z") == at(when)


@pytest.mark.parametrize(
    ("line", "when"),
    [
        # vllm-project/vllm#17756, #7800: vLLM's yearless stamp behind its worker tag and level (the year is the
        # window's)
        ("(VllmWorker rank=3 pid=406) ERROR 07-23 19:34:51 [multiproc_executor.py:487] RuntimeError: NCCL error",
         "2025-07-23T19:34:51Z"),
        ("(VllmWorkerProcess pid=232) ERROR 08-23 08:25:25 multiproc_worker_utils.py:226] Exception in worker",
         "2025-08-23T08:25:25Z"),
        # vllm-project/vllm#2084: the main process's line, with no worker tag (its first letter is cut in the
        # stored copy of the thread)
        ("INFO 12-13 13:07:31 llm_engine.py:72] Initializing an LLM engine with config", "2025-12-13T13:07:31Z"),
    ],
)
def test_vllms_logger_stamp_has_no_year(line: str, when: str) -> None:
    assert stamp(line, "2025-01-01T00:00:00Z", "2025-12-31T00:00:00Z") == at(when)


@pytest.mark.parametrize(
    ("line", "body"),
    [
        # a Python warning's source path is not grep's file name (nothing of a log, no stamp behind it)
        ("/usr/lib/python3/dist-packages/torch/cuda/__init__.py:118: UserWarning: CUDA initialization: CUDA unknown "
         "error", None),
        # an angle bracket that opens no syslog header
        ("<12> is not a priority here", "<12> is not a priority here"),
        # a word and a colon before a stamp is not grep's file name unless the word is a log file's or a path
        ("Start: 2026-11-02 09:00:00", "Start: 2026-11-02 09:00:00"),
        # a progress bar alone, with nothing glued to it, stays
        ("  0%|          | 0/801 [00:00<?, ?it/s]", "0%|          | 0/801 [00:00<?, ?it/s]"),
        # openucx/ucx#4182: a rule a space follows is the line's own (UCX's backtrace header), and so is a rule alone
        # (Open MPI's help-text border)
        ("==== backtrace (tid:  24830) ====", None),
        ("--------------------------------------------------------------------------", None),
        # a level and a time that are not vLLM's logger (no source file and line after them) are the line's own
        # (uvicorn's access log, which vLLM's API server prints)
        ('INFO:     10.0.0.1:5000 - "GET /health HTTP/1.1" 200 OK', None),
        ("WARNING 08-23 08:25:25 the rest is prose", None),
        # fewer than 8 before a word are the line's own (openssl's PEM armour)
        ("-----BEGIN CERTIFICATE-----", None),
        # a colour code's residue before no Ray tag, and Ray's deduplication words inside a message, stay
        ("[36m is a colour", None),
        ("the note [repeated 3x across cluster] is quoted here", None),
        # a bracketed word and number that is no parallel rank of SGLang's (a TPU's index)
        ("[TPU0] device ready", None),
    ],
)
def test_look_alikes_keep_their_text(line: str, body: str | None) -> None:
    p = split_prefixes(line)
    assert p.body == (body if body is not None else line) and p.host is None


def test_times_that_are_not_a_lines_stamp() -> None:
    # a clock time inside a sentence, a word and a colon before a date: no stamp
    assert stamp("step 100 at 10:03:07 loss 2.0") is None
    assert stamp("Start: 2026-11-02 09:00:00") is None
    # a Unix time in brackets is no uptime (UCX's, with no header to say so): neither a wall nor an uptime
    assert TimeParser(UTC, None, None).parse("[1506867524.064665] something") is None
    # a real uptime still is one
    st = TimeParser(UTC, None, None).parse("[12345.678901] NVRM: Xid (PCI:0000:3b:00): 79")
    assert st is not None and st.uptime == pytest.approx(12345.678901)


@pytest.mark.parametrize(
    ("text", "glued"),
    [
        # tqdm 4.70.1, run here (see above); with a description and a bar drawn in blocks, the form of SGLang's
        # DeepGEMM warmup in posted logs (synthetic counts)
        (f"  0%|          | 1/801 [00:00<06:40,  2.00it/s]{WATCHDOG}", WATCHDOG),
        (f"DeepGEMM warmup:  45%|████▍     | 7361/16384 [05:43<06:50, 21.99it/s]{WATCHDOG}", WATCHDOG),
        # a slow bar's rate is seconds per item
        (f" 10%|█         | 1/10 [00:12<01:48, 12.03s/it]{WATCHDOG}", WATCHDOG),
        # look-alikes: a rate in a log line, pipes of a table: no bar
        (f"throughput 2.00it/s] {WATCHDOG}", None),
        (f"| rank | 3/8 | [ok, 2.00it/s] {WATCHDOG}", None),
    ],
)
def test_a_progress_bar_is_read_by_position(text: str, glued: str | None) -> None:
    end = progress_bar_end(text)
    assert (text[end:] if end > 0 else None) == glued


# A syslog file's own header (rsyslog's and syslog-ng's /var/log/messages: RFC 3164's layout without the PRI, with
# a BSD stamp or RSYSLOG_FileFormat's RFC 3339 one). The first line is tests/scenarios/hw-pcie-aer-fatal-then-xid79's
# kern.log (a constructed scenario, in /var/log/kern.log's layout); the second RSYSLOG_FileFormat's (rsyslog's
# documented template: timestamp, hostname, syslogtag, msg); the third an FQDN in another case.
@pytest.mark.parametrize(
    ("line", "host", "body"),
    [
        ("Jun 11 16:40:03 c-gpu-022 kernel: [83354.101297] NVRM: Xid (PCI:0000:bb:00): 79, pid='<unknown>', "
         "name=<unknown>, GPU has fallen off the bus.", "c-gpu-022",
         "[83354.101297] NVRM: Xid (PCI:0000:bb:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."),
        ("2026-11-02T10:10:00.140891+00:00 node-02 kernel: NVRM: Xid (PCI:0000:1b:00): 13, pid=7, name=python",
         "node-02", "NVRM: Xid (PCI:0000:1b:00): 13, pid=7, name=python"),
        ("Nov  2 10:10:00 NODE-02.cluster.local slurmd[311]: error: Node configuration differs from hardware",
         "NODE-02.cluster.local", "error: Node configuration differs from hardware"),
    ],
)
def test_a_syslog_files_header_names_the_node_of_the_allocation(line: str, host: str, body: str) -> None:
    p = PrefixLayer(["c-gpu-022", "node-01", "node-02"]).split(line)
    assert (p.host, p.body) == (host, body)


@pytest.mark.parametrize(
    "line",
    [
        # a host that is not a node of the allocation: no layer (a per-node file's own spelling changes nothing)
        "Jun 11 16:40:03 login-7 kernel: NVRM: Xid (PCI:0000:bb:00): 79, GPU has fallen off the bus.",
        # an application's own stamp and level, then a logger's name: no host, no layer
        "2026-11-02T10:03:07Z INFO trainer: step 10",
        "2026-11-02T10:03:07.123+00:00 node-02",
        # spectrocloud/CanvOS#700: a journal posted with its host and tag redacted to one word (`edge-...:`): no
        # node named, no layer; the readers find their words anywhere in the line (catalog/platform.yaml
        # `fabric_manager_messages`)
        "Jul 20 16:15:36 edge-...:  Kernel module \"ib_umad\" has not been loaded, fabric manager cannot be started",
    ],
)
def test_a_syslog_header_of_another_host_or_none_is_no_layer(line: str) -> None:
    assert PrefixLayer(["node-01", "node-02"]).split(line).host is None
    assert PrefixLayer().split(line).host is None


# `talosctl logs <service>` puts the node's address before each line of the service (siderolabs/docs#581:
# `10.0.0.101: nvlsm: ibwarn: ...`, Talos' fabric manager extension): the address is a host's tag and peels; the
# program's own name after it (`nvlsm: `, like err(3)'s progname) stays on the line, and without an address before it
# names no host.
@pytest.mark.parametrize(
    ("line", "host", "body_starts"),
    [
        ("10.0.0.101: nvlsm: ibwarn: [15] umad_init: can't read ABI version from /sys/class/infiniband_mad/"
         "abi_version (No such file or directory): is ib_umad module loaded?", "10.0.0.101", "nvlsm: ibwarn: [15]"),
        ("nvlsm: ibwarn: [15] umad_init: can't read ABI version from /sys/class/infiniband_mad/abi_version (No such "
         "file or directory): is ib_umad module loaded?", None, "nvlsm: ibwarn: [15]"),
    ],
)
def test_talosctl_logs_address_is_a_host_and_the_service_name_stays(line: str, host: str | None,
                                                                    body_starts: str) -> None:
    p = split_prefixes(line)
    assert p.host == host
    assert p.body.startswith(body_starts)
