"""The frameworks' own checks of the job's arguments and configuration (catalog/exceptions.yaml, family setup: the
rows from `divisible by` on), read where the frameworks print them: an exception's line after its traceback, an
`AssertionError` with the check's message, the traceback inside a logger's ERROR records (vLLM's `ERROR <stamp>
[core.py:N] `), a rank's `[rankN]: ` lines; and a Triton model status table's cell that the table wraps over several
rows (collect/scan.py `table_continuation`, read through the real scanner).

Provenance: the messages are the printing programs' own format strings with our values: Megatron-LM megatron/
training/arguments.py validate_args; vLLM vllm/config.py (ModelConfig.verify_with_parallel_config, CacheConfig.
_verify_args) and vllm/engine/ray_utils.py initialize_cluster (before v0.4), whose later WARNING with the same words
is the near miss as public deployment notes quote it; DeepSpeed deepspeed/runtime/config.py _batch_assertion and
_set_batch_related_parameters; torch/distributed/elastic/rendezvous/utils.py parse_rendezvous_endpoint and api.py
RendezvousParameters (the `'None:None'` value is huggingface/accelerate#2240's line, tests/wild
sw-accelerate-2-node-slurm-...-2240); triton-inference-server/fastertransformer_backend src/libfastertransformer.cc
(`evenly divisble`, its spelling), whose table as NVIDIA/FasterTransformer#506 posted it is tests/wild
sw-triton-fastertransformer-...-506. The other near misses are ours."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.collect.scan import TABLE_JOINED, continuation, may_wrap, table_continuation
from firstfault.model import Verdict
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract.helpers import events, last_line

CHECKS = [
    # Megatron-LM validate_args (an assert: AssertionError)
    "AssertionError: world size (8) is not divisible by tensor model parallel size (3)",
    "AssertionError: global batch size (12) is not divisible by micro batch size (5) times data parallel size (2)",
    "AssertionError: number of layers should be divisible by the pipeline parallel size",
    # vLLM
    "ValueError: Total number of attention heads (40) must be divisible by tensor parallel size (3).",
    "ValueError: GPU memory utilization must be less than 1.0. Got 1.2.",
    "ValueError: The number of required GPUs exceeds the total number of available GPUs in the cluster.",
    "ValueError: Tensor parallel size (2) cannot be larger than the number of available GPUs (1).",
    # DeepSpeed's batch arithmetic
    "AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * "
    "gradient_acc_step * world_size 16 != 2 * 1 * 4",
    "AssertionError: Train batch size: 0 has to be greater than 0",
    "AssertionError: Micro batch size per gpu: 0 has to be greater than 0",
    "AssertionError: Gradient accumulation steps: -1 has to be greater than 0",
    "AssertionError: Either train_batch_size or train_micro_batch_size_per_gpu needs to be provided",
    "AssertionError: Either train_batch_size or micro_batch_per_gpu needs to be provided",
    # torch.distributed.elastic's rendezvous arguments
    "ValueError: The port number of the rendezvous endpoint 'None:None' must be an integer between 0 and 65536.",
    "ValueError: The hostname of the rendezvous endpoint '~:123' must be a dot-separated list of labels, an IPv4 "
    "address, or an IPv6 address.",
    "ValueError: The rendezvous backend name must be a non-empty string.",
    "ValueError: The minimum number of rendezvous nodes (0) must be greater than zero.",
    "ValueError: The maximum number of rendezvous nodes (1) must be greater than or equal to the minimum number of "
    "rendezvous nodes (2).",
    # the FasterTransformer backend's check (its spelling) in a client's exception for an explicit load (ours, in the
    # form of Triton's answer to a load request)
    "tritonclient.utils.InferenceServerException: [400] load failed for model 'fastertransformer': version 1 is at "
    "UNAVAILABLE state: Unsupported: 1. Number of visible GPUs must be evenly divisble by TP * PP",
]


def _setup(evs: list[Any]) -> list[tuple[str, object]]:
    return [(e.kind, e.fields.get("setup")) for e in evs]


@pytest.mark.parametrize("line", CHECKS, ids=[c[:60] for c in CHECKS])
def test_a_frameworks_configuration_check_is_the_jobs_setup_on_the_traceback_s_last_line(line: str) -> None:
    assert [(d.kind, d.fields.get("setup")) for d in last_line(line)] == [("app.exception", True)]


@pytest.mark.parametrize("line", CHECKS, ids=[c[:60] for c in CHECKS])
def test_the_check_is_read_in_a_loggers_error_records_and_a_ranks_lines(line: str) -> None:
    head = "ERROR 05-01 12:00:00 [core.py:500] "
    record = [head + "Traceback (most recent call last):", head + '  File "/x/engine.py", line 3, in <module>',
              head + "    main()", head + line]
    assert _setup(events(record)) == [("app.exception", True)]
    rank = ["[rank1]: Traceback (most recent call last):", '[rank1]:   File "/x/train.py", line 3, in <module>',
            "[rank1]: " + line]
    assert _setup(events(rank)) == [("app.exception", True)]


@pytest.mark.parametrize(
    "line",
    [
        # the same words in a warning the run goes on from: vLLM's Ray executor since v0.4 waits for its placement
        # group after logging them
        "WARNING 03-18 11:21:32 ray_utils.py:320] The number of required GPUs exceeds the total number of available "
        "GPUs in the placement group.",
        # a warning's line (the warnings module's form: no exception's class)
        "/opt/app/model.py:12: UserWarning: hidden size must be divisible by the number of heads for best speed",
        # help text a launcher prints at start (argparse's)
        "  --tensor-model-parallel-size N  Degree of tensor model parallelism; the world size must be divisible by it",
        # a docstring quoted in a log
        "    The port number of the rendezvous endpoint must be an integer between 0 and 65536 (see docs).",
        # a rendezvous that could not reach the store it parsed
        "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has "
        "failed. See inner exception for details.",
    ],
)
def test_near_miss_the_words_outside_a_failed_check_decide_nothing(line: str) -> None:
    assert [e for e in events([line]) if e.fields.get("setup")] == []


# NVIDIA/FasterTransformer#506's model status table (tests/wild sw-triton-fastertransformer-...-506), verbatim: its
# rows padded to the columns' widths as Triton's TablePrinter pads them
def _cells(a: str, b: str, c: str) -> str:
    return f"| {a:<17} | {b:<7} | {c:<87} |\n"


_RULE = "+" + "-" * 19 + "+" + "-" * 9 + "+" + "-" * 89 + "+\n"
TRITON_506 = ("I0523 11:03:58.452387 99 server.cc:633] \n" + _RULE + _cells("Model", "Version", "Status") + _RULE
              + _cells("fastertransformer", "1", "UNAVAILABLE: Unsupported: 1. Number of visible GPUs must be evenly "
                       "divisble by TP * PP ")
              + _cells("", "", "2. Number of visible GPUs must be <= instance count * TP * PP")
              + _cells("", "", "3. Multi-Node Inference only support one model instance") + _RULE)


def _verdict(make_bundle: BundleMaker, text: str) -> Verdict:
    w = copy.deepcopy(WORKLOAD)
    w["workload"]["nodes"] = ["node-01"]
    w["workload"]["ranks"] = {"node-01": "0"}
    return Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": text}, w)))


def _row_at(text: str, start: str) -> tuple[bytes, int, str]:
    buf = text.encode()
    s = buf.index(start.encode())
    e = buf.index(b"\n", s)
    return buf, e, buf[s:e].decode()


def test_a_triton_table_cell_wrapped_over_rows_is_joined_and_read_whole(make_bundle: BundleMaker) -> None:
    buf, e, row = _row_at(TRITON_506, "| fastertransformer")
    assert may_wrap(buf, e)
    cont = continuation(buf, e, row)
    assert cont is not None and cont.startswith(TABLE_JOINED)
    assert cont[1:] == ("| fastertransformer | 1 | UNAVAILABLE: Unsupported: 1. Number of visible GPUs must be evenly "
                        "divisble by TP * PP 2. Number of visible GPUs must be <= instance count * TP * PP 3. "
                        "Multi-Node Inference only support one model instance |")
    # (the table without the server's I-record above it, whose stamp falls outside the test workload's window)
    v = _verdict(make_bundle, TRITON_506.partition("\n")[2])
    assert v.root_cause is not None and v.root_cause.category == "app.exception.setup"
    assert "Multi-Node Inference" in v.root_cause.summary


def test_a_check_split_by_the_table_is_met_on_the_joined_row(make_bundle: BundleMaker) -> None:
    # TensorRT-LLM's WorldConfig check (catalog/exceptions.yaml) as Triton's table wraps it at its width (our width;
    # tests/wild sw-trtllm-backend-multi-node-...-283 holds the first row of such a cell): the words `must be at least
    # as large as TP` fall across the rows, and only the joined cell holds them
    text = ("| Model        | Version | Status                                                                     |\n"
            "| tensorrt_llm | 1       | UNAVAILABLE: Internal: [TensorRT-LLM][ERROR] Assertion failed: Number of   |\n"
            "|              |         | GPUs per node 1 must be at least as large as TP (4) * PP (1)               |\n")
    buf, e, row = _row_at(text, "| tensorrt_llm")
    cont = continuation(buf, e, row)
    assert cont is not None and "Number of GPUs per node 1 must be at least as large as TP (4)" in cont
    v = _verdict(make_bundle, text)
    assert v.root_cause is not None and v.root_cause.category == "app.exception.setup"
    assert "GPUs per node 1 must be at least as large as TP (4) * PP (1)" in v.root_cause.summary


@pytest.mark.parametrize(
    "text",
    [
        # the next row names its own model: a row of its own
        "| preprocessing    | 1       | READY                                      |\n"
        "| tensorrt_llm     | 1       | UNAVAILABLE: Internal: x                   |\n",
        # nvidia-smi's GPU row and the row under it (its first cell names the fan and temperature)
        "| 0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |                    0 |\n"
        "| N/A   33C    P0             70W /  700W |       0MiB /  81559MiB |      0%      Default |\n",
        # a next line whose column marks stand elsewhere (another table)
        "| fastertransformer | 1       | UNAVAILABLE: Unsupported: 1. Number |\n"
        "|      | x | 2. Number of visible GPUs must be <= instance count |\n",
        # the rule under the row
        "| fastertransformer | 1       | UNAVAILABLE: unloaded |\n"
        "+-------------------+---------+-----------------------+\n",
    ],
)
def test_near_miss_rows_that_do_not_continue_the_cell_are_not_joined(text: str) -> None:
    first = text.partition("\n")[0]
    buf = text.encode()
    assert table_continuation(buf, len(first.encode()), first) is None


def test_near_miss_a_triton_model_unloaded_or_ready_names_no_failure(make_bundle: BundleMaker) -> None:
    text = ("| Model | Version | Status                |\n"
            "| m     | 1       | READY                 |\n"
            "| n     | 1       | UNAVAILABLE: unloaded |\n")
    assert [e for e in events(text.splitlines()) if e.fields.get("setup")] == []
    v = _verdict(make_bundle, text)
    assert v.root_cause is None or v.root_cause.category != "app.exception.setup"
