"""The workload's own failure in forms the tables did not read (catalog/exceptions.yaml, extract/codes.py), each with
a near miss.

- Exception classes whose names end in neither `Error` nor `Exception`, named by qualified name: TorchDynamo's
  (pytorch/pytorch torch/_dynamo/exc.py) and Paddle Fluid's EnforceNotMet. Lines: microsoft/dion#23 (the
  FailOnRecompileLimitHit line and the Dynamo warnings before it), pytorch/pytorch test/dynamo/test_exc.py (the
  message of a graph break under fullgraph), PaddlePaddle/Paddle#21494 (the EnforceNotMet line and a frame of its
  C++ call stack).
- DistributedDataParallel's reducer message (torch/csrc/distributed/c10d/reducer.cpp), raised, logged, or posted
  without its class line (Topdu/OpenOCR#110, with the poster's words glued before it).
- The cudaAssert helper copied into CUDA programs (`fprintf(stderr, "cuda assert: %s %s %d\\n",
  cudaGetErrorString(code), file, line)`; deepmodeling/deepmd-kit#533 quotes its line).
"""

from __future__ import annotations

import pytest

from firstfault.extract.base import Draft
from tests.extract.helpers import alone, last_line


def causes(drafts: list[Draft]) -> list[tuple[str, object]]:
    return [(d.kind, d.fields.get("exc_type")) for d in drafts]


# ------------------------------------------------------------------ classes with no Error / Exception in the name

RECOMPILE_LIMIT = ("torch._dynamo.exc.FailOnRecompileLimitHit: recompile_limit reached with fullgraph=True. Excessive "
                   "recompilations can degrade performance due to the compilation overhead of each recompilation. To "
                   "monitor recompilations, enable TORCH_LOGS=recompiles.")
UNSUPPORTED = "torch._dynamo.exc.Unsupported: Call to `torch._dynamo.graph_break()`"
ENFORCE = ("paddle.fluid.core_avx.EnforceNotMet: Axis should be in range [0, x_dims) at "
           "[/paddle/paddle/fluid/operators/elementwise/elementwise_op_function.h:680]")


@pytest.mark.parametrize(("line", "cls"), [
    (RECOMPILE_LIMIT, "FailOnRecompileLimitHit"),
    (UNSUPPORTED, "Unsupported"),
    (ENFORCE, "EnforceNotMet"),
])
def test_a_named_suffixless_class_alone_is_the_workloads_exception(line: str, cls: str) -> None:
    drafts = alone(line)
    assert causes(drafts) == [("app.exception", cls)]
    assert drafts[0].fields.get("terminal") is True  # a lone line: its stream's last word only


@pytest.mark.parametrize(("line", "cls"), [(RECOMPILE_LIMIT, "FailOnRecompileLimitHit"), (ENFORCE, "EnforceNotMet")])
def test_the_same_class_as_a_tracebacks_last_line_reads_the_same(line: str, cls: str) -> None:
    assert causes(last_line(line)) == [("app.exception", cls)]


@pytest.mark.parametrize("line", [
    # Dynamo's warning before it raises (a recompile it logs, no exception): microsoft/dion#23
    "W0110 12:27:06.332000 158 torch/_dynamo/convert_frame.py:1551] [2/8] torch._dynamo hit config.recompile_limit (8)",
    "W0110 12:27:06.332000 158 torch/_dynamo/convert_frame.py:1551] [2/8]    last reason: 2/7: tensor 'X[0]' size "
    "mismatch at index 1. expected 640, actual 8.",
    # the bare names, unqualified: prose's words, not the table's classes
    "Unsupported: Call to `torch._dynamo.graph_break()`",
    # a frame of Paddle's C++ call stack under the EnforceNotMet line: PaddlePaddle/Paddle#21494
    "0       0x7f215add2f10p void paddle::platform::EnforceNotMet::Init<char const*>(char const*, char const*, int) "
    "+ 352",
])
def test_near_miss_dynamo_warnings_bare_names_and_call_stack_frames_are_no_exception(line: str) -> None:
    assert all(d.kind != "app.exception" for d in alone(line))


def test_near_miss_an_enforce_message_naming_a_cuda_failure_is_that_failure() -> None:
    # the class is the workload's, but the message's NCCL result decides first (PaddlePaddle/Paddle#10608)
    drafts = last_line("paddle.fluid.core.EnforceNotMet: unhandled cuda error at "
                       "[/paddle/paddle/fluid/platform/nccl_helper.h:93]")
    assert [d.kind for d in drafts] == ["nccl.error"]


# ------------------------------------------------------------------ DDP's reducer, with or without its class

REDUCTION = ("Expected to have finished reduction in the prior iteration before starting a new one. This error "
             "indicates that your module has parameters that were not used in producing loss.")


@pytest.mark.parametrize("line", [
    REDUCTION,
    "RuntimeError: " + REDUCTION,
    # posted with the poster's own words glued before it (Topdu/OpenOCR#110: no space, no word boundary)
    "\u62a5\u5982\u4e0b\u9519\u8bef" + REDUCTION,
])
def test_ddps_unfinished_reduction_is_the_workloads_exception(line: str) -> None:
    assert [d.kind for d in alone(line)] == ["app.exception"]


@pytest.mark.parametrize("line", [
    # prose that names the error by its first words only (a comment in a training script)
    '# raises "Expected to have finished reduction in the prior iteration". The breaker returns the real loss.',
    # the words inside another word: no clause of the reducer's
    "UnexpectedExpected to have finished reduction in the prior iteration before starting a new one",
])
def test_near_miss_prose_that_names_the_reducers_error_is_none(line: str) -> None:
    assert all(d.kind != "app.exception" for d in alone(line))


# ------------------------------------------------------------------ the copied cudaAssert helper


def test_the_cuda_assert_helpers_line_is_the_cuda_error_it_names() -> None:
    # deepmodeling/deepmd-kit#533: `invalid argument` is cudaErrorInvalidValue's message, too short to stand alone
    drafts = alone("cuda assert: invalid argument /scratch/deepmd-kit-api/source/lib/include/gpu_cuda.h 48.")
    assert [(d.kind, d.fields.get("cuda_error")) for d in drafts] == [("app.cuda_error", "cudaErrorInvalidValue")]


@pytest.mark.parametrize("line", [
    # the message alone, with no anchor: too short to say it is CUDA's
    "invalid argument /scratch/deepmd-kit-api/source/lib/include/gpu_cuda.h 48.",
    # the words as a word's start, not the helper's head
    "cuda asserts: enabled in this build",
])
def test_near_miss_no_helper_head_no_cuda_error(line: str) -> None:
    assert all(d.kind != "app.cuda_error" for d in alone(line))
