"""The numerics extractor (extract/numerics.py) on real lines: NaN / Inf losses and gradient norms, fp16
loss-scale overflows.

Lines are verbatim from the public issues cited next to them unless marked
`synthetic`.
"""

from __future__ import annotations

import pytest

from firstfault.extract import nccl, numerics
from firstfault.extract.base import LineExtractor
from tests.extract.helpers import APPLICATION, TB, kinds
from tests.extract.helpers import one_application as one
from tests.extract.helpers import scan_application as scan

NUM = numerics.NumericsExtractor()
ALL: tuple[LineExtractor, ...] = (*nccl.EXTRACTORS, *APPLICATION)


# ---------------------------------------------------------------- app.numerics

NUMERICS_CASES: list[tuple[str, str, str | None, int | None]] = [
    # alibaba/Pai-Megatron-Patch#366
    (
        "AssertionError: Rank 11: found NaN in local grad norm in backward pass before data-parallel "
        "communication collective. Device: 3",
        "nan",
        "grad_norm",
        11,
    ),
    # Megatron-Core RerunStateMachine
    (
        "RuntimeError: Rank 126, node nvl72085-T08, device 0, iteration 1: Unexpected result nan "
        "(message='found NaN in local grad norm for bucket #0 in backward pass before data-parallel "
        "communication collective')",
        "nan",
        "grad_norm",
        126,
    ),
    (
        "[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768",
        "inf",
        "loss_scale",
        0,
    ),
    ("Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0", "inf", "loss_scale", None),
    # Paddle's AmpScaler._update, its format (PaddlePaddle/PaddleOCR#6848 posts it below 1; synthetic scale: its
    # default init_loss_scaling)
    ("Found inf or nan, current scale is: 32768.0, decrease to: 32768.0*0.5", "inf", "loss_scale", None),
    # bigscience-workshop/Megatron-DeepSpeed#396 (lm loss gone, grad norm nan)
    (
        " iteration     3384/    8000 | consumed samples:       216576 | elapsed time per iteration (ms): "
        "7501.2 | learning rate: 6.680E-06 | global batch size:    64 | loss scale: 1.0 | grad norm: nan | "
        "number of skipped iterations:   1 | number of nan iterations:   1 |",
        "nan",
        "grad_norm",
        None,
    ),
    # epfLLM/Megatron-LLM#34
    ("***WARNING*** Bad grad_norm detected (grad_norm=nan)", "nan", "grad_norm", None),
    # NVIDIA/Megatron-LM#375
    ("NaN or Inf found in input tensor.", "nan", None, None),
    ("Epoch 3: 41%|████ | 410/1000 [10:02<14:26, v_num=0, train_loss=nan]", "nan", "train_loss", None),
    ("{'loss': nan, 'grad_norm': nan, 'learning_rate': 1.9e-05, 'epoch': 0.42}", "nan", "loss", None),
    ("step 1200: loss is nan, stopping", "nan", "loss", None),
    ("Loss: NaN", "nan", "loss", None),
    ("[NeMo I 2026-11-02 10:03:07 train:12] reduced_train_loss=nan lr=0.0003", "nan", "reduced_train_loss", None),
    ("lm loss: inf", "inf", "lm_loss", None),
    ("loss = -inf at step 9", "inf", "loss", None),
    ("FloatingPointError: Loss became infinite or NaN at iteration=1234!", "nan", None, None),
    # space-separated step prints (synthetic, the common `loss 2.31` form)
    (
        "2026-09-15 01:40:33,785 INFO [train_sft.py:188] step 6145 loss nan lr 1.8e-05 loss_scale 1024.0",
        "nan",
        "loss",
        None,
    ),
    ("step 12 | loss inf | lr 3e-4", "inf", "loss", None),
    # AlexeyAB/darknet#2789: darknet's iteration line, the running average after the batch loss
    (" 28: -nan, -nan avg loss, 0.000000 rate, 0.797576 seconds, 1792 images", "nan", "avg_loss", None),
    # pjreddie/darknet's own form (examples/detector.c, its format filled in)
    ("1204: inf, inf avg, 0.001000 rate, 3.120000 seconds, 77056 images", "inf", "avg_loss", None),
    # DeepSpeed fp16 loss scaler at its floor (deepspeed/runtime/fp16/loss_scaler.py)
    (
        "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.",
        "inf",
        "loss_scale_floor",
        None,
    ),
]


@pytest.mark.parametrize(("line", "value", "metric", "rank"), NUMERICS_CASES)
def test_numerics(line: str, value: str, metric: str | None, rank: int | None) -> None:
    d = one(NUM, line)
    assert d.kind == "app.numerics"
    assert d.fields["value"] == value
    assert d.fields.get("metric") == metric
    assert d.rank == rank


def test_megatron_nan_names_node_and_device() -> None:
    d = one(NUM, NUMERICS_CASES[1][0])
    assert (d.host, d.device) == ("nvl72085-T08", "gpu0")
    d = one(
        NUM,
        "AssertionError: Rank 3: found NaN in local grad norm in backwards pass. Device: 3, node: "
        "set-zw04-kubernetes-pc133.mt",
    )
    assert (d.rank, d.host, d.device) == (3, "set-zw04-kubernetes-pc133.mt", "gpu3")


def test_rank_prefix_wins_for_numerics() -> None:
    d = one(NUM, "[rank9]: loss=nan")
    assert d.rank == 9


@pytest.mark.parametrize(
    "closing",
    [
        NUMERICS_CASES[0][0],
        "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.",
    ],
)
def test_numerics_traceback_is_numerics_not_exception(closing: str) -> None:
    drafts = scan(ALL, [TB, '  File "engine.py", line 2213, in step', "    raise Exception(", closing])
    assert kinds(drafts) == ["app.numerics"], drafts


@pytest.mark.parametrize(
    "line",
    [
        "iteration 100 | loss 2.31 | grad norm 0.9",
        " iteration     3383/    8000 | consumed samples:       216512 | elapsed time per iteration (ms): "
        "7613.1 | learning rate: 6.680E-06 | global batch size:    64 | lm loss: 7.334521E-01 | loss scale: "
        "1.0 | grad norm: 0.752 | number of skipped iterations:   0 | number of nan iterations:   0 |",
        "loss: nanoseconds per token 12.5",
        "dataset: finance-qa, maintenance window 02:00",
        "elapsed: 1200 nanoseconds",
        "TORCH_NCCL_NAN_CHECK=0",
        "x = torch.nan_to_num(loss)",
        "info: loss=2.5 inference ok",
        # darknet's line with finite losses (AlexeyAB/darknet's format, filled in), and its Region line's nan IoU of
        # a batch without objects (AlexeyAB/darknet#2789), no loss
        " 1200: 2.031250, 2.410234 avg loss, 0.001000 rate, 3.120000 seconds, 76800 images",
        "Region Avg IOU: nan, Class: nan, Obj: -nan, No Obj: -nan, Avg Recall: 0.000000,  count: 32",
    ],
)
def test_numerics_negatives(line: str) -> None:
    assert scan(NUM, [line]) == []


def test_every_reading_needs_one_of_the_words_the_guard_looks_for() -> None:
    """numerics() returns at once on a line holding none of _NEEDS (case aside): every literal of the extractor
    (a line its patterns read holds one: the module builds both from the same pieces) holds one of those words,
    and every case line is still read; a line without any of them (a watchdog's line, as every rank prints it) is
    not, and neither is one that holds a guard word but no reading (`inference ok`)."""
    for literal in numerics._NUMERICS_LITERALS:
        assert any(w in literal.lower() for w in numerics._NEEDS), literal
    for line, *_ in NUMERICS_CASES:
        assert numerics.numerics(line) is not None, line
    # vllm-project/vllm#6042 (tests/wild/unk-vllm-ray-gather-watchdog-6042): PyTorch's watchdog, as every rank prints it
    what = ("[rank1]:[E ProcessGroupNCCL.cpp:1414] [PG 1 Rank 1] Process group watchdog thread terminated with "
            "exception: [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=158046, OpType=GATHER, "
            "NumelIn=2867200, NumelOut=0, Timeout(ms)=600000) ran for 600027 milliseconds before timing out.")
    assert not any(w in what.lower() for w in numerics._NEEDS) and numerics.numerics(what) is None
    assert numerics.numerics("info: loss=2.5 inference ok") is None
