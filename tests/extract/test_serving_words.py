"""Inference servers in their own words (catalog/exceptions.yaml, the rows under "Inference servers").

vLLM, SGLang, Hugging Face TGI and NVIDIA Triton Inference Server say what went wrong in words of their own: the
KV cache, the model length or the memory fraction that does not fit the GPU, a dtype or a quantization the GPU
does not support, a model that cannot be loaded (the job's own set-up); the GPU that ran out while the server
warmed up (the accelerator's memory); an engine, a worker or a shard that died (a symptom whose cause is said
before it). Each is read through the exception table, by the traceback model or as a line of its own, and each has
a near miss. Lines come from the public threads cited beside them, or are the words of the source function cited
(the projects' own source; numbers and names ours).
"""

from __future__ import annotations

import copy

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.extract.base import Draft
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract import helpers
from tests.extract.helpers import alone, last_line

TB = helpers.TB




def one(drafts: list[Draft]) -> Draft:
    assert len(drafts) == 1, drafts
    return drafts[0]


# ------------------------------------------------------------------ the job's set-up


@pytest.mark.parametrize("line", [
    # vllm-project/vllm#2418 (vllm/worker/worker.py raise_if_cache_size_invalid, vLLM 0.2)
    "ValueError: The model's max seq len (4096) is larger than the maximum number of tokens that can be stored in KV "
    "cache (3664). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
    # QwenLM/Qwen3#295: the same from vLLM's OpenAI server
    "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV "
    "cache (7344). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
    # vllm/worker/worker.py raise_if_cache_size_invalid (and vllm/v1/core/kv_cache_utils.py): no block at all
    "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing "
    "the engine.",
    # vllm/v1/core/kv_cache_utils.py check_enough_kv_cache_memory (vLLM's own spelling `models's`)
    "ValueError: To serve at least one request with the models's max seq len (32768), (8.00 GiB KV cache is needed, "
    "which is larger than the available KV cache memory (4.46 GiB). Based on the available memory, the estimated "
    "maximum model length is 18256. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
    "initializing the engine.",
    # vllm/v1/worker/gpu_worker.py init_device: another process holds the memory the fraction asks for
    "ValueError: Free memory on device cuda:0 (12.18/23.56 GiB) on startup is less than desired GPU memory "
    "utilization (0.92, 21.67 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
    # vllm/worker/worker.py _check_if_gpu_supports_dtype: a dtype the GPU does not support
    "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has "
    "compute capability 7.5. You can use float16 instead by explicitly setting the`dtype` flag in CLI, for example: "
    "--dtype=half.",
    # vllm/model_executor/model_loader/utils.py _get_quantization_config: a quantization the GPU does not support
    "ValueError: The quantization method awq is not supported for the current GPU. Minimum capability: 75. Current "
    "capability: 70.",
    # vllm/config.py ParallelConfig / ModelConfig.verify_with_parallel_config: the heads and the TP size
    "ValueError: Total number of attention heads (40) must be divisible by tensor parallel size (3).",
    # sgl-project/sglang python/sglang/srt/model_executor/model_runner.py init_memory_pool
    "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.",
])
def test_a_kv_cache_model_length_or_dtype_that_does_not_fit_the_gpu_is_the_jobs_set_up(line: str) -> None:
    d = one(last_line(line))
    assert d.kind == "app.exception" and d.fields.get("setup") is True


@pytest.mark.parametrize("line", [
    # huggingface/transformers src/transformers/utils/hub.py cached_file (its words in a posted vLLM start: a repository
    # id with a typo)
    "OSError: Qwen/Qwen2.5-0.5B-Instrukt is not a local folder and is not a valid model identifier listed on "
    "'https://huggingface.co/models'",
    # ... and a model directory without its config
    "OSError: /models/llama does not appear to have a file named config.json. Checkout "
    "'https://huggingface.co//models/llama/tree/None' for available files.",
])
def test_a_model_that_is_not_where_the_server_was_pointed_is_the_jobs_set_up(line: str) -> None:
    d = one(last_line(line))
    assert d.kind == "app.exception" and d.fields.get("setup") is True


@pytest.mark.parametrize("line", [
    # vllm/model_executor/models/registry.py _raise_for_unsupported, as vLLM's threads post it (DBRX before vLLM had
    # it; the list of supported architectures cut short here)
    "ValueError: Model architectures ['DbrxForCausalLM'] are not supported for now. Supported architectures: "
    "['AquilaModel', 'AquilaForCausalLM', 'BaiChuanForCausalLM']",
    # vllm/config.py _get_and_verify_max_len: a length past the model's own
    "ValueError: User-specified max_model_len (131072) is greater than the derived max_model_len "
    "(max_position_embeddings=32768 or model_max_length=None in model's config.json). This may lead to incorrect model "
    "outputs or CUDA errors. To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1",
])
def test_a_model_the_servers_build_cannot_serve_is_the_jobs_set_up(line: str) -> None:
    d = one(last_line(line))
    assert d.kind == "app.exception" and d.fields.get("setup") is True


def test_the_same_words_under_pydantics_validation_error_are_read_on_their_own_line() -> None:
    # vLLM's ModelConfig validation (pydantic), the message on the line after the class's: transformers'
    # configuration_auto.py words for a checkpoint newer than it (GLM-4.5V's, as its vLLM thread posts it)
    line = ("  Value error, The checkpoint you are trying to load has model type `glm4v_moe` but Transformers does not "
            "recognize this architecture. This could be because of an issue with the checkpoint, or because your "
            "version of Transformers is out of date. [type=value_error, input_value=ArgsKwargs((), {'model': "
            "'zai-org/GLM-4.5V'}), input_type=ArgsKwargs]")
    d = one(alone(line))
    assert d.kind == "app.exception" and d.fields.get("setup") is True and d.fields.get("terminal") is True


def test_near_miss_other_things_not_supported_for_now_are_no_set_up() -> None:
    # a feature vLLM turns off, in its warning's words (no architecture named)
    line = "WARNING 05-01 10:00:00 [config.py:1400] Chunked prefill and prefix caching are not supported for now."
    assert [d for d in alone(line) if d.kind == "app.exception"] == []


def test_near_miss_the_hub_unreachable_is_not_the_set_up() -> None:
    # transformers' words when the hub cannot be reached and nothing is cached: no path the job got wrong
    d = one(last_line("OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in "
                      "the cached files and it looks like gpt2 is not the path to a directory containing a file named "
                      "config.json."))
    assert d.fields.get("setup") is None


@pytest.mark.parametrize("line", [
    # vllm-project/vllm#2418: vLLM's count of the blocks it made, before the error
    "INFO 01-11 15:51:18 llm_engine.py:275] # GPU blocks: 229, # CPU blocks: 512",
    # vLLM's gpu_worker logging the KV memory it found (a negative number before the error): no error itself
    "INFO 07-23 19:34:51 [gpu_worker.py:276] Available KV cache memory: -0.3 GiB",
    # the same words of the error in a line of its own (no exception around them) decide nothing
    "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.",
])
def test_near_miss_the_servers_counts_and_bare_words_are_not_set_up(line: str) -> None:
    assert [d for d in alone(line) if d.kind == "app.exception"] == []


def test_near_miss_a_cuda_oom_is_the_accelerators_memory_not_the_set_up() -> None:
    # vllm-project/vllm#14452 family: the GPU ran out while the model loaded, in PyTorch's words
    d = one(last_line("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
                      "capacity of 23.55 GiB of which 1.06 GiB is free."))
    assert d.kind == "app.cuda_oom"


def test_a_server_that_cannot_load_its_model_is_the_jobs_set_up() -> None:
    # triton-inference-server/core src/model_repository_manager/model_lifecycle.cc ModelLifeCycle::OnLoadFinal, in
    # glog's form, the status as triton-inference-server/common Status::AsString spells it
    line = ("E1204 10:11:12.123456 123 model_lifecycle.cc:654] failed to load 'llama' version 1: Invalid argument: "
            "model 'llama', tensor 'input_ids': the model expects 2 dimensions (shape [-1,-1]) but the model "
            "configuration specifies 3 dimensions (shape [-1,-1,1])")
    d = one(alone(line))
    assert d.kind == "app.exception" and d.fields.get("setup") is True and d.fields.get("terminal") is True


@pytest.mark.parametrize("line", [
    # NVIDIA/TensorRT-LLM#494: model_lifecycle.cc's INFO record after the load failed (no version, no status)
    "I1128 16:31:49.479201 227 model_lifecycle.cc:756] failed to load 'tensorrt_llm'",
    # ... and TensorRT-LLM's count of the tokens its paged KV cache holds, before the error
    "[TensorRT-LLM][INFO] Using 693 tokens in paged KV cache.",
    # tritonserver's summary after the load failures (src/main.cc: `error: creating server: <code> - <message>`)
    "error: creating server: Internal - failed to load all models",
])
def test_near_miss_tritons_other_words_about_a_load_name_no_cause(line: str) -> None:
    assert [d for d in alone(line) if d.kind == "app.exception"] == []


@pytest.mark.parametrize("line", [
    # NVIDIA/TensorRT-LLM#542: TensorRT-LLM's batch manager, its paged KV cache too small for one sequence
    "[TensorRT-LLM][ERROR] maxTokensInPagedKvCache must be large enough to process at least 1 sequence to completion "
    "(i.e. must be larger than beam_width * tokensPerBlock * maxBlocksPerSeq)",
    # NVIDIA/TensorRT-LLM#494: the same inside Triton's load failure of its TensorRT-LLM backend
    "E1128 16:31:49.479182 227 model_lifecycle.cc:621] failed to load 'tensorrt_llm' version 1: Internal: unexpected "
    "error when creating modelInstanceState: maxTokensInPagedKvCache must be large enough to process at least 1 "
    "sequence to completion (i.e. must be larger than beam_width * tokensPerBlock * maxBlocksPerSeq)",
])
def test_tensorrt_llms_kv_cache_too_small_is_the_jobs_set_up(line: str) -> None:
    d = one(alone(line))
    assert d.kind == "app.exception" and d.fields.get("setup") is True


def test_tensorrt_llms_cuda_oom_is_the_accelerators_memory() -> None:
    # NVIDIA/TensorRT-LLM#401: its check macro's CUDA error, the runtime's allocation
    line = ("[TensorRT-LLM][ERROR] [TensorRT-LLM][ERROR] CUDA runtime error in ::cudaMallocAsync(ptr, n, "
            "mCudaStream->get()): out of memory (/code/tensorrt_llm/cpp/tensorrt_llm/runtime/tllmBuffers.h:112)")
    assert one(alone(line)).kind == "app.cuda_oom"


def test_a_model_load_failure_in_cuda_words_is_still_cudas() -> None:
    # the backend's CUDA error inside Triton's load failure: the CUDA table reads it first
    line = ("E1204 10:11:12.123456 123 model_lifecycle.cc:654] failed to load 'llama' version 1: Internal: "
            "CUDA error: out of memory")
    assert one(alone(line)).kind == "app.cuda_oom"


def test_tgis_warmup_that_ran_out_of_gpu_memory_is_the_accelerators_memory() -> None:
    # huggingface/text-generation-inference server/text_generation_server/models/flash_causal_lm.py warmup
    d = one(last_line("RuntimeError: Not enough memory to handle 4096 prefill tokens. You need to decrease "
                      "`--max-batch-prefill-tokens`"))
    assert d.kind == "app.cuda_oom"


def test_near_miss_tgis_own_token_budget_words_are_no_oom() -> None:
    # backends/v3/src/lib.rs V3Error::NotEnoughMemory: the router's budget, not an allocation that failed
    assert [d.kind for d in last_line("Error: NotEnoughMemory(4096)")] != ["app.cuda_oom"]


# ------------------------------------------------------------------ an engine, a worker or a shard that died


@pytest.mark.parametrize("line", [
    # vllm/entrypoints/openai/api_server.py build_async_engine_client_from_engine_args (vLLM 0.6 to 0.9)
    "RuntimeError: Engine process failed to start. See stack trace for the root cause.",
    # vllm/v1/engine/utils.py wait_for_engine_startup
    "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
    # vllm/engine/multiprocessing MQEngineDeadError, quoting the heartbeat's RuntimeError
    "vllm.engine.multiprocessing.MQEngineDeadError: Engine loop is not running. Inspect the stacktrace to find the "
    "original error: RuntimeError('Engine loop has died').",
])
def test_an_engine_that_died_is_a_symptom_and_a_report_of_its_exit(line: str) -> None:
    d = one(last_line(line))
    assert d.kind == "nccl.remote_error" and d.fields.get("exit_report") is True


def test_the_heartbeats_repr_in_vllms_log_is_the_same_symptom() -> None:
    # vllm/engine/multiprocessing/engine.py MQLLMEngine's heartbeat, logged by the client (client.py:250) in repr
    d = one(alone("ERROR 10-10 01:14:54 client.py:250] RuntimeError('Engine loop has died')"))
    assert d.kind == "nccl.remote_error"


def test_the_clients_word_that_the_engine_process_is_gone_is_the_same_symptom() -> None:
    # vllm/engine/multiprocessing/client.py run_heartbeat_loop: the engine process not running; a server's log posted
    # in a public thread (the search index's id 19400629813), after an `LLVM ERROR` the engine process died of
    d = one(alone("ERROR 12-06 14:09:37 client.py:282] RuntimeError('Engine process (pid 16470) died.')"))
    assert d.kind == "nccl.remote_error"


def test_an_engine_process_that_started_is_no_death() -> None:
    line = "ERROR 12-06 14:09:27 client.py:282] RuntimeError('Engine process (pid 16470) started twice.')"
    assert all(d.kind != "nccl.remote_error" for d in alone(line))


@pytest.mark.parametrize("line", [
    # huggingface/text-generation-inference#1627 (launcher/src/main.rs spawn_shards)
    "2024-03-06T17:53:31.149443Z ERROR text_generation_launcher: Shard 0 failed to start",
    # launcher/src/main.rs main: a shard that exited after it started
    "2024-03-06T17:58:02.000000Z ERROR text_generation_launcher: Shard 1 crashed",
])
def test_tgis_shard_that_died_is_a_symptom(line: str) -> None:
    d = one(alone(line))
    assert d.kind == "nccl.remote_error" and d.fields.get("exit_report") is True


@pytest.mark.parametrize("line", [
    # huggingface/text-generation-inference#1838, #1627: the launcher waiting for and starting its shards
    "2024-05-01T01:17:02.618817Z  INFO shard-manager: text_generation_launcher: Waiting for shard to be ready... "
    "rank=1",
    "2024-03-06T17:53:22.336246Z  INFO shard-manager: text_generation_launcher: Starting shard rank=0",
    # the engine-dead words in a line of their own, no exception around them: only an exception's message is read
    "Engine core initialization failed. See root cause above.",
])
def test_near_miss_other_words_about_shards_and_engines(line: str) -> None:
    assert [d for d in alone(line) if d.kind == "nccl.remote_error"] == []


def test_a_table_row_refuses_exit_report_outside_the_peer_family() -> None:
    from firstfault.catalog.tables import ExceptionClassInfo
    from firstfault.records import convert

    with pytest.raises(Exception, match="exit_report"):
        convert({"match": "*", "family": "setup", "message": "abc", "exit_report": True}, ExceptionClassInfo)


# ------------------------------------------------------------------ the verdict


def _app(lines: list[str]) -> str:
    return "".join(line + "\n" for line in lines)


KV = ("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
      "initializing the engine.")
# the API server's own traceback after its engine process died (vllm/entrypoints/openai/api_server.py)
API_SERVER = [TB, '  File "/usr/local/lib/python3.10/dist-packages/vllm/entrypoints/openai/api_server.py", line 233, '
              "in build_async_engine_client_from_engine_args", "    raise RuntimeError(",
              "RuntimeError: Engine process failed to start. See stack trace for the root cause."]


def test_the_engines_last_line_stands_before_the_servers_report_of_its_death(make_bundle: BundleMaker) -> None:
    # a posted log that kept the engine's last line only, then the API server's traceback on the engine's exit
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app([KV, *API_SERVER])})))
    assert v.root_cause is not None and v.root_cause.category == "app.exception.setup"
    assert "nccl.remote_error" in [s.category for s in v.symptoms]


def test_near_miss_a_symptom_that_reports_no_exit_after_the_last_line_supersedes_it(make_bundle: BundleMaker) -> None:
    # OpenNMT/OpenNMT-tf#985's Horovod shutdown notice (another process's failure, but no report of the exit of a
    # process this one started): the line before it was no last word
    lines = [KV, "Horovod has been shut down. This was caused by an exception on one of the ranks or an attempt to "
             "allreduce, allgather or broadcast a tensor after one of the ranks finished execution."]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app(lines)})))
    assert v.root_cause is None


def test_near_miss_another_exception_after_the_engines_last_line_supersedes_it(make_bundle: BundleMaker) -> None:
    lines = [KV, TB, '  File "/srv/app.py", line 9, in main', "KeyError: 'prompt'"]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app(lines)})))
    assert v.root_cause is not None and v.root_cause.category == "app.exception"


def test_tritons_load_failure_of_its_tensorrt_llm_backend_is_the_jobs_set_up(make_bundle: BundleMaker) -> None:
    # NVIDIA/TensorRT-LLM#494, the server's log as posted (the backend's error, the load failure, its INFO summary)
    lines = [
        "[TensorRT-LLM][INFO] Using 693 tokens in paged KV cache.",
        "E1128 16:31:49.479096 227 backend_model.cc:634] ERROR: Failed to create instance: unexpected error when "
        "creating modelInstanceState: maxTokensInPagedKvCache must be large enough to process at least 1 sequence to "
        "completion (i.e. must be larger than beam_width * tokensPerBlock * maxBlocksPerSeq)",
        "E1128 16:31:49.479182 227 model_lifecycle.cc:621] failed to load 'tensorrt_llm' version 1: Internal: "
        "unexpected error when creating modelInstanceState: maxTokensInPagedKvCache must be large enough to process "
        "at least 1 sequence to completion (i.e. must be larger than beam_width * tokensPerBlock * maxBlocksPerSeq)",
        "I1128 16:31:49.479201 227 model_lifecycle.cc:756] failed to load 'tensorrt_llm'",
    ]
    workload = copy.deepcopy(WORKLOAD)  # glog's stamp has no year: the window's, around the posted lines
    workload["workload"]["window"] = {"start": "2026-11-28T16:00:00Z", "end": "2026-11-28T17:00:00Z"}
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app(lines)}, workload)))
    assert v.attributed_domain == "software"
    assert v.root_cause is not None and v.root_cause.category == "app.exception.setup"


# vLLM v1 behind its workers' and processes' tags (vllm-project/vllm#23582's form): a worker's error, then the
# engine core's word that the worker died, then the API server's EngineDeadError
DEATH = [
    "(EngineCore_0 pid=271) ERROR 11-02 10:05:02 [multiproc_executor.py:146] Worker proc VllmWorker-1 died "
    "unexpectedly, shutting down executor.",
    "(APIServer pid=1) ERROR 11-02 10:05:03 [async_llm.py:416] vllm.v1.engine.exceptions.EngineDeadError: EngineCore "
    "encountered an issue. See stack trace (above) for the root cause.",
]


def test_the_engine_dead_lines_after_a_cuda_error_stay_its_symptoms(make_bundle: BundleMaker) -> None:
    lines = ["(VllmWorker rank=1 pid=406) ERROR 11-02 10:05:01 [multiproc_executor.py:527] RuntimeError: CUDA error: "
             "an illegal memory access was encountered", *DEATH]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app(lines)})))
    assert v.root_cause is not None and v.root_cause.category == "app.illegal_access"
    remote = [s for s in v.symptoms if s.category == "nccl.remote_error"]
    assert remote and remote[0].explained_by == "app.illegal_access"


def test_near_miss_the_engine_dead_lines_after_an_nccl_error_name_no_cause(make_bundle: BundleMaker) -> None:
    lines = ["(VllmWorker rank=1 pid=406) ERROR 11-02 10:05:01 [multiproc_executor.py:527] "
             "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:"
             "268, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5", *DEATH]
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app(lines)})))
    assert v.root_cause is None and v.attributed_domain == "unknown"
    assert {"nccl.error", "nccl.remote_error"} <= {s.category for s in v.symptoms}


# ------------------------------------------------------------------ a JSON log record as a layer


# huggingface/text-generation-inference#3317 (the launcher and router with `--json-output`, tracing's JSON)
TGI_JSON = ('{"timestamp":"2025-08-29T14:40:17.288163Z","level":"ERROR","message":"Request failed during generation: '
            'Server error: error trying to connect: No such file or directory (os error 2)","target":'
            '"text_generation_router_v3::backend","filename":"backends/v3/src/backend.rs","line_number":546}')


@pytest.mark.parametrize(("line", "body"), [
    (TGI_JSON, "Request failed during generation: Server error: error trying to connect: No such file or directory "
               "(os error 2)"),
    # tracing-subscriber's older JSON (the message under `fields`), as TGI's launcher wrote it (launcher/src/main.rs
    # spawn_shards' words)
    ('{"timestamp":"2024-03-06T17:53:31.149443Z","level":"ERROR","fields":{"message":"Shard 0 failed to start"},'
     '"target":"text_generation_launcher"}', "Shard 0 failed to start"),
    # docker's json-file driver around a rank's line: the line's own layers come off behind it
    ('{"log":"[rank1]: ValueError: bad shape\\n","stream":"stderr","time":"2024-03-06T17:53:31.149443Z"}',
     "ValueError: bad shape"),
    # python-json-logger's form
    ('{"asctime": "2024-03-06 17:53:31,149", "levelname": "ERROR", "message": "KeyError: \'prompt\'"}',
     "KeyError: 'prompt'"),
])
def test_a_json_log_record_is_read_as_its_message(line: str, body: str) -> None:
    from firstfault.extract.prefix import split_prefixes

    assert split_prefixes(line).body == body


# A Go logger's error field beside its message (zap / logr's `"error"`, klog's `"err"`): read after the message, as Go
# wraps an error. cloudpilot-ai/karpenter-provider-gcp#167 (verbatim, a few fields left out).
KARPENTER_JSON = ('{"level":"ERROR","time":"2025-12-03T15:11:22.615Z","logger":"controller","message":"failed to '
                  'create instance","controller":"nodeclaim.lifecycle","instanceType":"g2-standard-16",'
                  '"error":"googleapi: Error 400: Instances with guest accelerators do not support live migration., '
                  'badRequest"}')


@pytest.mark.parametrize(("line", "body"), [
    (KARPENTER_JSON, "failed to create instance: googleapi: Error 400: Instances with guest accelerators do not "
                     "support live migration., badRequest"),
    ('{"level":"error","ts":1700000000.1,"msg":"Reconciler error","err":"dial tcp 10.0.0.1:443: connect: connection '
     'refused"}', "Reconciler error: dial tcp 10.0.0.1:443: connect: connection refused"),
])
def test_a_go_records_error_field_is_read_after_its_message(line: str, body: str) -> None:
    from firstfault.extract.prefix import split_prefixes

    assert split_prefixes(line).body == body


@pytest.mark.parametrize(("line", "body"), [
    # an error the message already quotes is not read twice; an empty or non-text error adds nothing
    ('{"level":"ERROR","message":"failed: boom","error":"boom"}', "failed: boom"),
    ('{"level":"ERROR","message":"failed to create instance","error":""}', "failed to create instance"),
    ('{"level":"ERROR","message":"failed to create instance","error":{"code":400}}', "failed to create instance"),
])
def test_near_miss_an_error_field_that_adds_nothing(line: str, body: str) -> None:
    from firstfault.extract.prefix import split_prefixes

    assert split_prefixes(line).body == body


@pytest.mark.parametrize("line", [
    '{"a": 1}',  # no message
    '{"message": 42}',  # a message that is no text
    "{not json at all}",
    # a record below an error keeps its raw line: a controller's INFO record may say what it is about in fields of
    # its own (Karpenter's, read by extract/jobend.py)
    '{"level":"INFO","time":"2024-03-06T17:53:31.149Z","logger":"controller","message":"deleted node",'
    '"Node":{"name":"ip-10-0-0-1.ec2.internal"}}',
    '{"timestamp":"2024-03-06T17:53:31.149443Z","level":"WARN","fields":{"message":"Shard 1 crashed"}}',
    # a record with fields beyond docker's and no level is no layer either
    '{"log":"ValueError: x","node":"n1"}',
    '{"message": "unterminated"',
    '{"message": ' + "[" * 5000 + "]" * 5000 + "}",  # nested past the parser's depth: no record, no failure
])
def test_near_miss_text_in_braces_that_is_no_log_record_keeps_its_text(line: str) -> None:
    from firstfault.extract.prefix import split_prefixes

    assert split_prefixes(line).body == line


def test_a_json_records_stamp_and_message_reach_the_verdict(make_bundle: BundleMaker) -> None:
    line = ('{"timestamp":"2026-11-02T10:05:01.149443Z","level":"ERROR","fields":{"message":"Shard 0 failed to '
            'start"},"target":"text_generation_launcher"}')
    v = Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": _app([line])})))
    remote = [s for s in v.symptoms if s.category == "nccl.remote_error"]
    assert remote and remote[0].first_seen == "2026-11-02T10:05:01.149443Z"


def test_near_miss_a_warn_records_exception_words_are_no_uncaught_exception() -> None:
    # the same words at ERROR are the exception's last line; at WARN they were met and gone on from
    error = '{"timestamp":"2026-11-02T10:05:01.149443Z","level":"ERROR","message":"KeyError: \'prompt\'"}'
    assert [d.kind for d in alone(error)] == ["app.exception"]
    warn = '{"timestamp":"2026-11-02T10:05:01.149443Z","level":"WARN","message":"KeyError: \'prompt\'"}'
    assert [d.kind for d in alone(warn) if d.kind == "app.exception"] == []


# ------------------------------------------------------------------ TGI's launcher on a shard a signal ended


@pytest.mark.parametrize(("line", "signal", "by"), [
    # huggingface/text-generation-inference#1627 (launcher/src/main.rs shard_manager): SIGILL, the shard's own fault
    ("2024-03-06T17:53:31.052444Z ERROR shard-manager: text_generation_launcher: Shard process was signaled to "
     "shutdown with signal 4 rank=0", "SIGILL", "self"),
    # the same words on a kill: the launcher only saw it (who killed it is said elsewhere)
    ("2024-03-06T17:53:31.052444Z ERROR shard-manager: text_generation_launcher: Shard process was signaled to "
     "shutdown with signal 9 rank=1", "SIGKILL", "launcher"),
])
def test_tgis_report_of_a_shard_ended_by_a_signal(line: str, signal: str, by: str) -> None:
    from firstfault.extract import launcher

    d = one(helpers.scan(launcher.EXTRACTORS, [line], "application"))
    assert (d.kind, d.fields.get("signal"), d.fields.get("by")) == ("process.signal", signal, by)


@pytest.mark.parametrize("line", [
    # launcher/src/main.rs: its own shutdown of the shards after another failed, and a shard that came up
    "2024-03-06T17:53:31.149481Z  INFO text_generation_launcher: Terminating shard rank=0",
    "2024-03-06T17:53:31.149481Z  INFO shard-manager: text_generation_launcher: Shard ready in 12.3s rank=0",
])
def test_near_miss_tgis_other_shard_words_name_no_signal(line: str) -> None:
    from firstfault.extract import launcher

    assert helpers.scan(launcher.EXTRACTORS, [line], "application") == []


# ------------------------------------------------------------------ llama.cpp's (ggml's) device allocation


@pytest.mark.parametrize("line", [
    # ggml-org/llama.cpp#20431 (ggml/src/ggml-cuda/ggml-cuda.cu ggml_backend_cuda_buffer_type_alloc_buffer)
    "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144817.04 MiB on device 0: cudaMalloc failed: out of "
    "memory",
    # ollama/ollama#6860: the same under Ollama's runner, on another device
    "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144.00 MiB on device 4: cudaMalloc failed: out of memory",
    # ggml-org/llama.cpp#20431: ggml's and llama.cpp's words after it, each posted alone as often
    "alloc_tensor_range: failed to allocate CUDA0 buffer of size 151851674624",
    "llama_model_load: error loading model: unable to allocate CUDA0 buffer",
    # ollama/ollama#6860
    "ggml_gallocr_reserve_n: failed to allocate CUDA4 buffer of size 150995968",
])
def test_a_device_allocation_call_that_failed_out_of_memory_is_the_accelerators_memory(line: str) -> None:
    assert one(alone(line)).kind == "app.cuda_oom"


@pytest.mark.parametrize("line", [
    # ggml-org/llama.cpp#9629: pinned host memory, not the GPU's
    "ggml_cuda_host_malloc: failed to allocate 1900,00 MiB of pinned memory: invalid argument",
    # a host allocator's call by name: the host's memory
    "cudaMallocHost failed: out of memory",
    # ggml's pinned host buffer (its name `CUDA_Host`)
    "alloc_tensor_range: failed to allocate CUDA_Host buffer of size 2147483648",
    # the call named in a frame or a sentence, no failure after it
    "llama_kv_cache_init: using cudaMalloc for the KV buffer",
])
def test_near_miss_host_allocations_and_mentions_are_no_accelerator_oom(line: str) -> None:
    assert [d for d in alone(line) if d.kind == "app.cuda_oom"] == []


def test_near_miss_prose_about_cuda_errors_names_no_cuda_error() -> None:
    # vllm/config.py's warning words (`... may lead to incorrect model outputs or CUDA errors.`): a plural in prose
    line = ("WARNING 05-01 10:00:00 [config.py:3500] User-specified max_model_len (40960) is greater than the derived "
            "max_model_len. This may lead to incorrect model outputs or CUDA errors.")
    assert [d.kind for d in alone(line) if d.kind.startswith("app.cuda")] == []
    # nor is the warning (vLLM's logger layer taken off) the job's set-up: only after pydantic's `Value error, `
    assert [d for d in alone(line) if d.kind == "app.exception"] == []
    # ... while the anchor as a word of its own, or an enum that goes on in capitals, still is one
    assert one(alone("RuntimeError: CUDA error: an illegal memory access was encountered")).kind == "app.cuda_error"
    assert one(alone("CUDA_ERROR_OUT_OF_MEMORY")).kind == "app.cuda_oom"


def test_tgis_router_logging_the_shards_warmup_oom_is_the_accelerators_memory() -> None:
    # the router's record of the shard's answer, no class around it (text-generation-inference router/client/src/lib.rs
    # and the warmup error of server/text_generation_server/models/flash_causal_lm.py; the form of
    # huggingface/text-generation-inference#1525, its numbers and span ours)
    line = ("2024-02-01T10:00:00.000000Z ERROR warmup{max_input_length=4095 max_prefill_tokens=4096 "
            "max_total_tokens=8192}:warmup: text_generation_client: router/client/src/lib.rs:33: Server error: Not "
            "enough memory to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`")
    assert one(alone(line)).kind == "app.cuda_oom"


def test_near_miss_tgis_prefill_token_settings_are_no_oom() -> None:
    # the launcher's own notice of the budget it chose (text-generation-inference launcher/src/main.rs)
    line = ("2024-02-01T10:00:00.000000Z  INFO text_generation_launcher: Default `max_batch_prefill_tokens` to 4146 "
            "prefill tokens")
    assert [d for d in alone(line) if d.kind == "app.cuda_oom"] == []
