"""Huawei Ascend's CANN reports and torch_npu's RuntimeErrors over them (catalog/cann.yaml, extract/cann.py; the
device's own faults: catalog/accel.yaml `cann_messages`, extract/gpu.py).

Lines marked with a thread are verbatim from that public report (a frame or the traceback's header added where the
post cut it); lines marked with a source file follow that file's format string, the values ours; lines marked with a
Huawei document follow the message the document gives for the code.
"""

from __future__ import annotations

from firstfault.analysis.analyze import Analyzer
from firstfault.catalog.tables import accel_table, cann_table
from firstfault.collect.scan import Extraction, all_line_extractors
from firstfault.extract.cann import literals
from firstfault.model import Event
from tests.conftest import BundleMaker
from tests.extract import helpers

TB = helpers.TB
FRAME = '  File "/usr/lib/python3/site-packages/torch/distributed/distributed_c10d.py", line 2501, in all_reduce'


def feed(lines: list[str]) -> list[Event]:
    """The lines' events, and what the stream's end gives (a held exception no report decided)."""
    ex = Extraction(all_line_extractors())
    return [*helpers.events(lines, "application", file="f.log", extraction=ex), *ex.open_ends()]


def kinds(events: list[Event]) -> list[str]:
    return [e.kind for e in events]


# vllm-project/vllm-ascend#486 (GRPO with vLLM on NPUs: an all_reduce fails, torch_npu's tag, then HCCL's EI0006)
OPS_486 = ("[rank1]: RuntimeError: InnerRunOpApi:torch_npu/csrc/framework/OpParamMaker.cpp:281 OPS function error: "
           "HcclAllreduce, error code is 6")
ERR_486 = "[rank1]: [ERROR] 2025-04-08-18:07:20 (PID:1292363, Device:1, RankID:1) ERR01100 OPS call acl api failed."
EI0006_486 = ("[rank1]: EI0006: [PID: 1292363] 2025-04-08-18:07:20.444.436 Getting socket times out. Reason: Remote "
              "Rank did not send the data in time. Please check the reason for the rank being stuck")
# vllm-project/vllm-ascend#5461 (a later CANN: the code after its name)
EI0006_5461 = ("[PID: 749] 2025-12-29-03:16:15.787.356 Get_Socket_Timeout(EI0006): Getting socket times out. Reason: "
               "1. The remote does not initiate a connect request. some NPUs in the cluster are abnormal.")
# vllm-project/vllm-ascend#2800 (the thread's title: torch_npu's aclError 507048, ACL_ERROR_RT_FFTS_PLUS_TIMEOUT)
FFTS_2800 = ("RuntimeError: operator():build/CMakeFiles/torch_npu.dir/compiler_depend.ts:47 NPU function error: "
             "c10_npu::acl::AclrtSynchronizeStreamWithTimeout(copy_stream), error code is 507048")
# vllm-project/vllm-ascend#5661 and #2763 (the threads' titles: an AI Core and a vector core exception, a kernel's)
AICORE_5661 = "RuntimeError: ACL stream synchronize failed, error code:507015"
VECTOR_2763 = "RuntimeError: ACL stream synchronize failed, error code:507035"
# CANN's troubleshooting guide, "AI Core Error" (https://www.hiascend.com/document/detail/zh/CANNCommunityEdition/
# 910beta3/maintenref/troubleshooting/troubleshooting_0004.html): the report torch_npu appends for a kernel's fault
EZ_INNER = "EZ9999: Inner Error!"
EZ_AICORE = ("EZ9999: The error from device(chipId:4, dieId:0), serial number is 2, there is an aivec error exception, "
             "core id is 11, error code = 0x10, dump info: pc start: 0x1240c46650b8")
# hicann/runtime src/runtime/feature/src/device/device_error_proc.cc (ProcessStarsHcclFftsPlusTimeoutErrorInfo's
# message, under torch_npu's bare RuntimeError, CachingHostAllocator.cpp's `ACL stream synchronize failed.`)
ACL_SYNC = "RuntimeError: ACL stream synchronize failed."
EI_INNER = "EI9999: Inner Error!"
EI_FFTS = ("EI9999: 2025-01-02-03:04:05.678.901  The error from device(chipId:1, dieId:0), serial number is 4, hccl "
           "fftsplus task timeout occurred during task execution, stream_id:3, sq_id:3, task_id:120, stuck notify "
           "num:1, timeout:30min(default).[FUNC:ProcessStarsHcclFftsPlusTimeoutErrorInfo][FILE:device_error_proc.cc]")
# CANN's HCCL error reference, EI0002 (https://www.hiascend.com/document/detail/zh/canncommercial/81RC1/
# developmentguide/maintenref/troubleshooting/atlaserrorcode_15_0242.html), its message with our values
EI0002_DOC = ("EI0002: [PID: 4242] 2025-02-03-04:05:06.789.012 The wait execution of the Notify register times out. "
              "Reason: The Notify register has not received the Notify record from remote rank: [3].")
# Ascend/pytorch torch_npu/csrc/core/npu/NPUException.h (NPU_CHECK_ERROR's TORCH_CHECK: `<func>:<file>:<line> NPU
# function error: <device error>, error code is <code>`) with NPUException.cpp's names for the device's faults
HBM_ECC = ("RuntimeError: Run:torch_npu/csrc/core/npu/NPUQueue.cpp:212 NPU function error: HBM MULTI BIT ECC ERROR."
           "time is 1736000000, error code is 507054")
UCE = "RuntimeError: Run:torch_npu/csrc/core/npu/NPUQueue.cpp:212 NPU function error: UCE ERROR, error code is 507053"
LINK = ("RuntimeError: Run:torch_npu/csrc/core/npu/NPUQueue.cpp:212 NPU function error: HCCS LINK ERROR, error code is "
        "507056")
FORCE_STOP = ("RuntimeError: Run:torch_npu/csrc/core/npu/NPUQueue.cpp:212 NPU function error: FORCE STOP., error code "
              "is 107022")
# CANN's runtime error reference, EL0004 (torch_npu's isCannOOM, NPUException.cpp, reads it as out of memory)
EL0004 = "EL0004: [PID: 4242] 2025-02-03-04:05:06.789.012 Failed to allocate memory."
# HCCL's EI0004 (invalid rank table), its message with our values
EI0004 = ("EI0004: [PID: 4242] 2025-02-03-04:05:06.789.012 The ranktable or rank is invalid,Reason:[The ranktable "
          "field device_id is invalid].")


def test_the_table_loads_and_each_code_names_a_module_and_a_reading() -> None:
    t = cann_table()
    letters = {m.letter: m.module for m in t.modules}
    assert letters["I"] == "HCCL" and letters["E"] == "Runtime" and letters["L"] == "Driver"
    assert t.codes["EI0002"].reads == "timeout" and t.codes["EE1002"].reads == "timeout"
    assert t.codes["EI0004"].reads == "setup" and t.codes["EL0004"].reads == "oom"
    assert t.results[507046].reads == "timeout" and t.results[507057].reads == "remote"
    huawei = [rows for v, d, rows in accel_table().families if (v, d) == ("huawei", "cann")]
    assert huawei and {r.code for r in huawei[0] if r.code} >= {507053, 507054, 507056}
    assert all(c in literals() for c in ("EI0002", "EI9999", "EZ9999", "ERR0"))


def test_a_collective_timeout_under_the_runtime_error_decides_it_a_symptom() -> None:
    # the bare RuntimeError waits; HCCL's internal report's words (a FFTS+ task timed out) decide it
    ev = feed([TB, FRAME, ACL_SYNC, EI_INNER, EI_FFTS])
    assert kinds(ev) == ["nccl.timeout"]
    assert "hccl fftsplus task timeout" in str(ev[0].fields["detail"])


def test_the_runtime_error_stands_where_no_report_decides() -> None:
    # near miss: the same RuntimeError with nothing of CANN's under it is the workload's exception, at its own line
    ev = feed([TB, FRAME, ACL_SYNC, "training aborted"])
    assert kinds(ev) == ["app.exception"]
    assert ev[0].fields["exc_type"] == "RuntimeError" and ev[0].evidence.line == 3


def test_each_held_exception_is_decided_or_given_back_on_its_own() -> None:
    # two ranks' bare RuntimeErrors in one stream: the report under the second decides it, the first stands as raised
    ev = feed([TB, FRAME, ACL_SYNC, *[f"step {i}" for i in range(20)], TB, FRAME, ACL_SYNC, EI_INNER, EI_FFTS])
    assert sorted(kinds(ev)) == ["app.exception", "nccl.timeout"]
    assert [e.evidence.line for e in ev if e.kind == "app.exception"] == [3]


def test_an_hccl_socket_timeout_under_an_ops_error_is_a_symptom() -> None:
    ev = feed(["[rank1]: " + TB, "[rank1]: " + FRAME, OPS_486, ERR_486, EI0006_486])
    assert kinds(ev) == ["nccl.timeout"]
    assert ev[0].rank == 1


def test_torch_npus_tag_is_understood_and_a_look_alike_is_not() -> None:
    assert helpers.claimed(ERR_486.split(": ", 1)[1], "application")
    # vllm-project/vllm-ascend#1127 (the tag of an exception torch_npu did not raise)
    assert helpers.claimed("[ERROR] 2025-06-09-06:57:54 (PID:92380, Device:0, RankID:-1) ERR99999 UNKNOWN applicaiton "
                           "exception", "application")
    assert not helpers.claimed("ERR00100 is the ticket number", "application")


def test_report_codes_alone_in_either_form() -> None:
    assert kinds(feed([EI0006_5461])) == ["nccl.timeout"]
    assert kinds(feed([EI0002_DOC])) == ["nccl.timeout"]
    assert kinds(feed([EL0004])) == ["app.cuda_oom"]
    setup = feed([EI0004])
    assert kinds(setup) == ["app.exception"] and setup[0].fields["setup"] is True


def test_a_code_of_no_row_or_a_look_alike_reads_nothing() -> None:
    # near misses: a report code the table does not hold (the argument check EL0003 behind a warning, vllm-ascend#4914),
    # and a linter's code, which has one digit fewer
    assert feed(["Warning: [PID: 2112] 2025-12-11-09:09:33.945.016 Invalid_Argument(EL0003): The argument is "
                 "invalid."]) == []
    assert feed(["train.py:12:0: E1101: Module 'torch' has no 'npu' member (no-member)"]) == []


def test_the_result_code_in_the_message_decides_at_once() -> None:
    assert kinds(feed([TB, FRAME, FFTS_2800])) == ["nccl.timeout"]
    assert kinds(feed([TB, FRAME, FORCE_STOP])) == ["nccl.remote_error"]


def test_a_kernel_fault_leaves_the_runtime_error_the_workloads() -> None:
    # near miss: AI Core and vector core exceptions are the kernel's own: no symptom, no device fault
    assert kinds(feed([TB, FRAME, AICORE_5661])) == ["app.exception"]
    assert kinds(feed([TB, FRAME, VECTOR_2763])) == ["app.exception"]
    ev = feed([TB, FRAME, ACL_SYNC, EZ_INNER, EZ_AICORE])
    assert kinds(ev) == ["app.exception"] and ev[0].evidence.line == 3


def test_the_devices_own_faults_are_hardware_rows() -> None:
    for line, cls, reason in ((HBM_ECC, "memory", "hbm_multi_bit_ecc"), (UCE, "memory", "device_mem_uce"),
                              (LINK, "link", "hccs_link")):
        ev = feed([TB, FRAME, line])
        assert kinds(ev) == ["gpu.accel_error"], (line, kinds(ev))
        assert (ev[0].fields["vendor"], ev[0].fields["accel_class"], ev[0].fields["reason"]) == ("huawei", cls, reason)


def test_a_timeout_warning_with_its_code_is_a_symptom_and_a_smaller_number_is_not_a_code() -> None:
    # NPUStream.cpp's warning of the stream it waited on (Ascend/pytorch torch_npu/csrc/core/npu/NPUStream.cpp's
    # TORCH_NPU_WARN format, our values)
    assert kinds(feed(["[W NPUStream.cpp:400] Warning: NPU warning, error code is 507046"])) == ["nccl.timeout"]
    # near miss: HCCL's own result number (`error code is 6`) alone is no aclError of the table
    assert feed(["HcclAllreduce failed, error code is 6"]) == []


# vllm-project/vllm-ascend#1193 (DeepSeek TP8/PP2 on Ray: a worker's exception logged as a line of its own)
LONE_1193 = ("(RayWorkerWrapper pid=11394, ip=10.0.1.4) ERROR 06-12 09:47:56 [worker_base.py:620] RuntimeError: ACL "
             "stream synchronize failed, error code:507048")


def test_a_logged_exception_line_is_decided_the_same_way() -> None:
    assert kinds(feed([LONE_1193])) == ["nccl.timeout"]
    # near miss: the kernel's own fault in the same line stays what the exception reader makes of it
    lone = feed([LONE_1193.replace("507048", "507015")])
    assert kinds(lone) == ["app.exception"]



# mindspore-lab/mindone#269 (MindSpore's RuntimeError over the same runtime)
MS_SYNC = "RuntimeError: Sync stream error!"
# vllm-project/vllm-ascend#2800 (AscendCL's internal report and the runtime's reason under it)
EH_INNER_2800 = "EH9999: Inner Error!"
EH_REASON_2800 = ("        rtStreamSynchronizeWithTimeout execute failed, reason=[fftsplus timeout]"
                  "[FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]")


def test_mindspores_runtime_error_waits_for_the_report_too() -> None:
    assert kinds(feed([TB, FRAME, MS_SYNC, EI0002_DOC])) == ["nccl.timeout"]
    assert kinds(feed([TB, FRAME, MS_SYNC, EH_INNER_2800, EH_REASON_2800])) == ["nccl.timeout"]
    # near miss: with no report under it, the workload's exception
    assert kinds(feed([TB, FRAME, MS_SYNC])) == ["app.exception"]


# torch_npu/csrc/distributed/HCCLUtils.hpp's format (`<func>:<file>:<line> HCCL function error: <call>, error code is
# <HcclResult>`): vllm-project/vllm-ascend#397's call, #3196's code 11 (HCCL_E_TCP_CONNECT)
HCCL_INIT = ("RuntimeError: create:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:89 HCCL function error: "
             "HcclCommInitRootInfo(numRanks, &rootInfo, rank, &(comm->hcclComm_)), error code is {code}")


def test_hccls_own_result_after_its_call_decides() -> None:
    assert kinds(feed([TB, FRAME, HCCL_INIT.format(code=13)])) == ["nccl.remote_error"]
    assert kinds(feed([TB, FRAME, HCCL_INIT.format(code=9)])) == ["nccl.timeout"]
    # near misses: an internal error (4) says nothing of a peer, and a TCP connect failure (11) may be this side's own
    # listen on a port in use: the exception stands
    assert kinds(feed([TB, FRAME, HCCL_INIT.format(code=4)])) == ["app.exception"]
    assert kinds(feed([TB, FRAME, HCCL_INIT.format(code=11)])) == ["app.exception"]


# ---------------------------------------------------------------- through the engine

_STEPS = [f"2026-11-02 10:0{m}:00,000 INFO step {m}" for m in range(5)]


def _rank(lines: list[str]) -> str:
    return "".join(s + "\n" for s in [*_STEPS, *lines])


def test_the_timeout_under_the_runtime_error_is_no_cause(make_bundle: BundleMaker) -> None:
    # every rank's bare RuntimeError with HCCL's FFTS+ timeout under it: symptoms only, no cause established
    files = {f"app/rank-{r}.log": _rank([TB, FRAME, ACL_SYNC, EI_INNER, EI_FFTS]) for r in range(4)}
    v = Analyzer().analyze_path(str(make_bundle(files)))
    assert v.root_cause is None and v.attributed_domain == "unknown", (v.attributed_domain, v.root_cause)
    assert {s.category for s in v.symptoms} == {"nccl.timeout"}


def test_near_miss_the_bare_runtime_error_is_the_workloads(make_bundle: BundleMaker) -> None:
    files = {"app/rank-0.log": _rank([TB, FRAME, ACL_SYNC])}
    v = Analyzer().analyze_path(str(make_bundle(files)))
    assert v.root_cause is not None and v.root_cause.category.startswith("app.exception"), v.root_cause


def test_an_hbm_error_on_one_rank_is_the_cause_with_the_npus_own_action(make_bundle: BundleMaker) -> None:
    files = {f"app/rank-{r}.log": _rank([EI0002_DOC]) for r in range(4)}
    files["app/rank-2.log"] = _rank([TB, FRAME, HBM_ECC])
    v = Analyzer().analyze_path(str(make_bundle(files)))
    assert v.attributed_domain == "hardware"
    assert v.root_cause is not None and v.root_cause.category == "gpu.memory"
    action = v.root_cause.recommended_action or ""
    assert "npu-smi" in action and "DCGM" not in action and "nvidia-smi" not in action, action
