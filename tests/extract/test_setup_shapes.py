"""The job's set-up told by its message's shape (catalog/exceptions.yaml, the rows after `divisible by`).

What the job asked for does not fit what is there: counts requested against counts available, a parallel size too
large, a feature the device, build or cloud does not have, a pool over its own maximum, a shard index not below the
shard count, a configuration class failing validation, a launcher without its MPI. Each shape is read both ways: a
line it must read (verbatim from the public thread cited) and one that looks alike and must not (run here, Python
3.11 and pydantic 2.11, or the printing program's source). Fed as a traceback's last line (the header first).
"""

from __future__ import annotations

import pytest

from firstfault.extract.base import Draft
from tests.extract.helpers import alone, events, last_line


def _one(line: str) -> Draft:
    drafts = last_line(line)
    assert len(drafts) == 1, drafts
    return drafts[0]


@pytest.mark.parametrize("line", [
    # NVIDIA/TensorRT-LLM#2594: trtllm-serve under mpirun on two nodes, the GPUs counted on one
    "RuntimeError: Only 8 GPUs are available, but 16 are required.",
    # ai-dynamo/dynamo#4934: vLLM v0.12.0's ParallelConfig (the `Value error, ...` line under its title)
    "ValueError: Tensor parallel size (2) cannot be larger than the number of available GPUs (1).",
    # QwenLM/Qwen3-VL#831: vLLM's AWQ layer under TP 4
    "ValueError: The input size is not aligned with the quantized weight shape. This can be caused by too large "
    "tensor parallel size.",
    # GoogleCloudPlatform/python-docs-samples#13233: a Vertex AI job asking for K80s after their end of support
    'google.api_core.exceptions.InvalidArgument: 400 Accelerator "NVIDIA_TESLA_K80" is not supported for machine type '
    '"n1-standard-4"',
    # NVIDIA/TransformerEngine#1923: userbuffers' overlap on A100s without CUDA Multicast
    "AssertionError: CUDA device, driver and/or toolkit version does not support comm+GEMM overlap with CUDA "
    "Multicast. Launch app with UB_SKIPMC=1 to try CUDA IPC instead.",
    # sgl-project/sglang#38552: a prefill of TP 1 and a decode of TP 4
    "RuntimeError: PD Disaggregation does NOT support PD different TP sizes for non-MLA SWA hybrid models yet.",
    # NVIDIA/spark-rapids#636: several executors on one V100
    "ai.rapids.cudf.CudfException: RMM failure at: /usr/local/rapids/include/rmm/mr/device/"
    "pool_memory_resource.hpp:100: Initial pool size exceeds the maximum pool size!",
    # NVIDIA/DALI#510: a rank's id passed as the shard count
    'RuntimeError: Critical error in pipeline: [/opt/dali/dali/pipeline/operators/reader/loader/loader.h:57] Assert '
    'on "num_shards_ > shard_id_" failed: num_shards needs to be greater than shard_id',
    # ai-dynamo/dynamo#4934: the title of the same validation error
    "pydantic_core._pydantic_core.ValidationError: 1 validation error for ParallelConfig",
    # Lightning-AI/pytorch-lightning#6169: the message begins with a newline (the devices on the next lines)
    "pytorch_lightning.utilities.exceptions.MisconfigurationException: ",
    # tlkh/ai-lab#26: horovodrun before 0.20 without Open MPI on the PATH
    "Exception: horovodrun convenience script does not find an installed OpenMPI.",
    # pytorch/pytorch#139990: the Windows wheels' TCPStore, whose rendezvous asks for libuv by default
    "RuntimeError: use_libuv was requested but PyTorch was build without libuv support",
    # the same check's later wording, as thefirehacker/dist-gpu-windows SOLUTION.md quotes it under torchrun
    "torch.distributed.DistStoreError: use_libuv was requested but PyTorch was built without libuv support, run with "
    "USE_LIBUV=0 to disable it.",
    # open-r1's GRPO (trl GRPOConfig): a batch that the generations per prompt do not divide
    "ValueError: The global train batch size (7 x 1) must be evenly divisible by the number of generations per "
    "prompt (8). Given the current train batch size, the valid values for the number of generations are: [7].",
])
def test_a_request_that_does_not_fit_what_is_there_is_the_set_up(line: str) -> None:
    d = _one(line)
    assert d.kind == "app.exception" and d.fields.get("setup") is True


@pytest.mark.parametrize("line", [
    # run here: Python's own words for a request larger than what there is, about data
    "ValueError: Sample larger than population or is negative",
    "ValueError: Exceeds the limit (4300 digits) for integer string conversion: value has 5000 digits; use "
    "sys.set_int_max_str_digits() to increase the limit",
    # run here: `does not support` after no device, build or parallel size: a bug
    "TypeError: 'NoneType' object does not support item assignment",
    # written here: `built without` about the job's data, with no feature asked for and refused
    "ValueError: The requested checkpoint was built without optimizer states; pass load_optimizer=False",
    # run here (pydantic 2.11): a validation error for a request's model, not a configuration class
    "pydantic_core._pydantic_core.ValidationError: 1 validation error for ChatCompletionRequest",
    # pytorch_lightning/callbacks/model_checkpoint.py _validate_monitor_key: a metric the model does not log
    "pytorch_lightning.utilities.exceptions.MisconfigurationException: ModelCheckpoint(monitor='val_loss') could "
    "not find the monitored key in the returned metrics: ['train_loss', 'epoch', 'step']. HINT: Did you call "
    "`log('val_loss', value)` in the `LightningModule`?",
])
def test_a_message_alike_about_data_or_code_is_not_the_set_up(line: str) -> None:
    d = _one(line)
    assert d.kind == "app.exception" and "setup" not in d.fields


@pytest.mark.parametrize("line", [
    # CUDA's own words (cudaErrorNotSupported, 801; cudaErrorNotPermitted, 800): their tables read them
    "RuntimeError: CUDA error: operation not supported",
    "RuntimeError: CUDA error: operation not permitted",
])
def test_cudas_own_words_are_not_a_set_up_shape(line: str) -> None:
    assert all(d.fields.get("setup") is not True for d in last_line(line))


@pytest.mark.parametrize("line", [
    # the shapes are read on an exception already read, never on a line of their own (no prefilter word)
    "Only 8 GPUs are available, but 16 are required.",
    "The input size is not aligned with the quantized weight shape. This can be caused by too large tensor "
    "parallel size.",
    "PD Disaggregation does NOT support PD different TP sizes for non-MLA SWA hybrid models yet.",
    "use_libuv was requested but PyTorch was build without libuv support",
])
def test_the_shapes_alone_are_not_read(line: str) -> None:
    assert [d for d in alone(line) if d.fields.get("setup")] == []


# ---------------------------------------------------------------- a world that does not fit the job's layout

@pytest.mark.parametrize("line", [
    # Tlntin/Qwen-TensorRT-LLM#123: run.py for a 4-GPU engine started as one process (WorldConfig::mpi's check)
    "RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: mpiSize == tp * pp (/home/jenkins/agent/workspace/LLM/"
    "release-0.8/L0_PostMerge/tensorrt_llm/cpp/tensorrt_llm/runtime/worldConfig.cpp:90)",
    # tensorflow/mesh#9: two single Cloud TPUs given as one (TF 1.11's TPU system configuration)
    "InternalError: Invalid system configuration: 1x1 host topology with 0 missing hosts, but 2 hosts in total.",
])
def test_a_world_that_does_not_fit_the_layout_is_the_set_up(line: str) -> None:
    d = _one(line)
    assert d.kind == "app.exception" and d.fields.get("setup") is True


@pytest.mark.parametrize("line", [
    # triton-inference-server/tensorrtllm_backend#283: Triton's model table, a TP 4 engine on nodes of one GPU each
    "| tensorrt_llm     | 1       | UNAVAILABLE: Internal: unexpected error when creating modelInstanceState: "
    "[TensorRT-LLM][ERROR] Assertion failed: Number of GPUs per node 1 must be at least as large as TP (4) *  |",
    # GoogleCloudPlatform/ai-on-gke#272: the same server's table cut across cells, a TP 2 engine without mpirun
    "|                |         | R] Assertion failed: mpiSize == tp * pp (/app/tensorrt_llm/cpp/tensorrt_llm/"
    "runtime/worldConf |",
    # pytorch/xla#3042: a v3-64 slice's program run on one host (the op's status, as XLA's client quotes it)
    "  (0) Internal: Invalid system configuration: 2x4 host topology with 0 missing hosts, but 1 hosts in total.",
    # NVIDIA/nvidia-resiliency-ext#348: ft_launcher with a hot spare beyond --nnodes' maximum
    "ft_rendezvous_barrier.py:1458 [node-A...] Maximum number of nodes (4) exceeded. Active participant count would "
    "be 5 (joined=5, left=0). This is likely a configuration error - please check max_nodes setting.",
])
def test_the_world_checks_are_read_on_a_line_of_their_own(line: str) -> None:
    said = events([line])
    assert [(e.kind, e.fields.get("setup")) for e in said] == [("app.exception", True)]


@pytest.mark.parametrize("line", [
    # another TensorRT-LLM assertion (an engine its TensorRT could not load: NVIDIA/TensorRT-LLM's issues quote it):
    # the program's, not the world's
    "RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: Failed to deserialize cuda engine "
    "(/app/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmRuntime.cpp:72)",
    # written here: an assertion on the same names that is no world-size check
    "RuntimeError: [TensorRT-LLM][ERROR] Assertion failed: tp > 0 (worldConfig.cpp:61)",
])
def test_another_assertion_is_not_the_world(line: str) -> None:
    assert all(d.fields.get("setup") is not True for d in last_line(line))


@pytest.mark.parametrize("line", [
    # written here: a topology and a node count named with no check failing
    "I0304 tpu_system.cc:112] Initializing TPU system: 2x2 host topology with 0 missing hosts",
    "ft_rendezvous_barrier.py:1210 [node-A] Maximum number of nodes (4) reached; closing the rendezvous",
    # written here: the GPU count in a log of a run that started
    "INFO worldConfig: Number of GPUs per node 8, TP (4) * PP (2)",
])
def test_the_world_words_without_the_check_are_no_event(line: str) -> None:
    assert [e.kind for e in events([line]) if e.fields.get("setup")] == []


# ---------------------------------------------------------------- a collective the job's c10d backend lacks

@pytest.mark.parametrize("line", [
    # intel/intel-extension-for-pytorch#647: torch-ccl 2.1.300+xpu's ProcessGroupCCL::reduce_scatter
    "RuntimeError: ProcessGroupCCL does not support reduce_scatter",
    # pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupGloo.cpp ProcessGroupGloo::reduce_scatter
    "RuntimeError: ProcessGroupGloo does not support reduce_scatter",
    # pytorch/pytorch torch/csrc/distributed/c10d/Backend.hpp, the base class's default for a collective left out
    "RuntimeError: Backend gloo does not support allgather_into_tensor_coalesced",
    "RuntimeError: Backend ucc does not support alltoall_base",
])
def test_a_collective_the_backend_does_not_implement_is_the_set_up(line: str) -> None:
    d = _one(line)
    assert d.kind == "app.exception" and d.fields.get("setup") is True


@pytest.mark.parametrize("line", [
    # written here: a backend's refusal of an argument, with words after the collective's name (the job's own code)
    "RuntimeError: ProcessGroupNCCL does not support reduce_scatter with mismatched tensor sizes in this call",
    # run here: Python's own words for an object without the operation
    "TypeError: 'ProcessGroup' object does not support item assignment",
])
def test_a_backend_refusal_with_more_words_is_not_the_shape(line: str) -> None:
    assert all(d.fields.get("setup") is not True for d in last_line(line))


def test_a_fallback_warning_of_the_same_words_is_not_read() -> None:
    # pytorch/tau's DeviceMesh (later DTensor) warns and falls back: no exception, no failure
    line = "UserWarning: ProcessGroupGloo does not support reduce_scatter, falling back with all reduce!"
    assert [d for d in alone(line) if d.fields.get("setup")] == []
