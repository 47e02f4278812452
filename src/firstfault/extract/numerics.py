"""NaN / Inf in a training log: loss and gradient norms, fp16 loss-scale overflows and their collapse.

`numerics` reads one line on its own (stateless); the extractor follows the
loss scale across a stream's overflows through `ctx.state`. This extractor
owns NaN/Inf lines: the exception extractor (exceptions.py) asks `numerics`
before it reads a traceback's last line as `app.exception`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final

from firstfault import lazyre as re  # re.compile deferred to first use (lazyre.py)
from firstfault.extract.base import Draft, LineContext, LineExtractor
from firstfault.extract.nccl import clip, split_rank_prefix
from firstfault.model import FieldValue

# `lm loss: nan`, `grad norm: nan`, `'loss': nan`, `loss is nan`, `loss=nan`, `loss\tnan`,
# `train_loss=nan`, `Loss: NaN`, `loss: tensor(nan, ...)`, `loss nan`; the value must be
# a whole word (`nanoseconds` is not NaN) right after a loss / norm name. The regex and the
# prefilter literals are built from the same pieces, so a line the regex reads always holds
# a literal: a value form added here reaches the prefilter too.
_METRIC_NAMES: Final = ("loss", "Loss", "LOSS", "norm", "Norm", "ppl", "PPL", "perplexity")
_JOINERS: Final = (":", ": ", ":\t", "=", "= ", " = ", " is ", " was ", " ", "  ", "\t", "': ", '": ')
_OPENS: Final = ("", "tensor(")
_VALUES: Final = tuple(f"{sign}{v}" for sign in ("", "-") for v in ("nan", "NaN", "NAN", "Nan", "inf", "Inf", "INF"))


def _alt(items: tuple[str, ...]) -> str:
    return "|".join(re.escape(i) for i in sorted(items, key=len, reverse=True))


_METRIC_VALUE = re.compile(
    r"(?P<metric>(?:\b(?:lm|train|training|val|valid|validation|eval|test|grad|global|total|avg|mean)[ _])?"
    rf"\b[A-Za-z_]*(?:{_alt(_METRIC_NAMES)})[A-Za-z_]*)"
    rf"(?:{_alt(_JOINERS)})(?:{_alt(_OPENS)})"
    rf"(?P<v>(?:{_alt(_VALUES)})(?:inity)?)(?![A-Za-z0-9_])"
)
_FOUND_NAN = re.compile(r"found (?P<v>NaN|Inf) in local grad norm")
_MEGATRON_RANK = re.compile(r"\bRank (?P<rank>\d+)[,:]")
_MEGATRON_NODE = re.compile(r"\bnode:? (?P<node>[A-Za-z0-9][\w.\-]*?)[,.]?(?:\s|$)")
_MEGATRON_DEVICE = re.compile(r"\b[Dd]evice:? (?P<dev>\d+)")
_DS_OVERFLOW = re.compile(r"OVERFLOW!(?: Rank (?P<rank>\d+))? Skipping step")
# apex `Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0`; fairseq
# `NOTE: overflow detected, setting loss scale to: 64.0` (`gradient overflow detected, ignoring gradient, ...`).
_APEX_OVERFLOW = re.compile(r"Gradient overflow\.\s+Skipping step"
                            r"|overflow detected, (?:ignoring gradient, )?setting loss scale to")
# The scale an overflow moved the scaler from and to (DeepSpeed names both; apex and fairseq only the new one;
# DeepSpeed's `... but hysteresis is 2. Reducing hysteresis to 1` is an overflow that does not lower it yet).
_ATTEMPTED_SCALE = re.compile(r"Attempted loss scale: (?P<v>\d+(?:\.\d+)?)")
# PaddlePaddle's dynamic loss scaler (paddle/amp/grad_scaler.py and fluid's dygraph/amp/loss_scaler.py,
# AmpScaler._update: `print('Found inf or nan, current scale is: {}, decrease to: {}*{}'.format(scale, scale,
# decr_ratio))` after decr_every_n_nan_or_inf overflowed steps): the scale it leaves and the factor it multiplies
# it by, so the new scale is their product. It has no floor of its own: a scale driven below 1 goes on falling
# (PaddleOCR#6848: 0.0019 to 1.5e-05 within one epoch).
_PADDLE_OVERFLOW = re.compile(r"Found inf or nan, current scale is: (?P<from>\d+(?:\.\d+)?(?:e[-+]?\d+)?), "
                              r"decrease to: \d+(?:\.\d+)?(?:e[-+]?\d+)?\*(?P<ratio>0?\.\d+)\b")
_NEW_SCALE = re.compile(r"(?:reducing(?: loss scale)? to|setting loss scale to:?)\s*(?P<v>\d+(?:\.\d+)?(?:e[-+]?\d+)?)")
# A collapse of the fp16 loss scale: this many halvings in a row with no rise between them (each overflow's
# attempted scale is the previous one's reduced scale), ending at or below COLLAPSE_SCALE. One overflow now
# and then, or a run at the start while the scaler finds its level from a high initial scale, is routine; the
# scaler driven down and never recovering is the loss diverging (the run ends at the scaler's floor, often
# after the log a user posts stops). At or below SCALE_FLOOR is DeepSpeed's default min_loss_scale itself.
COLLAPSE_HALVINGS: Final = 6
COLLAPSE_SCALE: Final = 1024.0
SCALE_FLOOR: Final = 1.0
_SCALE_RUNS: Final = "ff.app.loss_scale_runs"
_NAN_ITERATIONS = re.compile(r"number of nan iterations:\s*[1-9]\d*")
# DeepSpeed's fp16 loss scaler gives up after overflowing down to its floor.
_SCALE_FLOOR = re.compile(r"loss scale already at minimum|Minimum loss scale reached")
# Darknet's iteration line, the value before its name (AlexeyAB/darknet src/detector.c train_detector: `\n %d: %f, %f
# avg loss, %f rate, %lf seconds, %d images, ...`; pjreddie/darknet examples/detector.c: `%ld: %f, %f avg, %f rate,
# ...`): the batch's loss, then the running average, which a NaN or Inf batch loss makes NaN or Inf for good. C's
# printf prints them `nan`, `-nan`, `inf` (AlexeyAB/darknet#2789: ` 28: -nan, -nan avg loss, 0.000000 rate, ...`).
_DARKNET_AVG = re.compile(r"^\s*\d+: \S+, (?P<v>-?(?:nan|inf)) avg(?: loss)?, \S+ rate\b")
_DARKNET_LITERALS: Final = ("nan avg loss, ", "inf avg loss, ", "nan avg, ", "inf avg, ")
_OTHER_NAN = re.compile(
    r"NaN or Inf found in input tensor|Loss became infinite or NaN|returned nan values in its \d\w*+ output"
)


def _numerics_literals() -> tuple[str, ...]:
    # The value with the two characters before it: `: nan`, `=nan`, `s nan` (loss nan), `(nan`
    # (tensor(nan): specific enough for NaN, while Megatron's `number of nan iterations: 0` (`f nan`)
    # stays out. An Inf value is not (`: info`, `=inference`), so it keeps the whole name and joiner.
    nan_combos = {f"{(n + j + o)[-2:]}{v}" for n in _METRIC_NAMES for j in _JOINERS for o in _OPENS for v in _VALUES
                  if v.lstrip("-").lower() == "nan"}
    inf_combos = {f"{n}{j}{o}{v}" for n in _METRIC_NAMES for j in _JOINERS for o in _OPENS for v in _VALUES
                  if v.lstrip("-").lower() == "inf"}
    combos = nan_combos | inf_combos
    fixed = {
        # `found NaN in local grad norm`, `NaN or Inf found in input tensor` (`Loss is NaN` is a combination
        # above). Not a bare `NaN`: one three-letter word made the prefilter's scan of a log a quarter slower.
        "found NaN",
        "NaN or Inf",
        "found Inf",
        "Loss became infinite",
        "OVERFLOW!",
        "Gradient overflow",
        "setting loss scale to",
        "loss scale already at minimum",
        "Minimum loss scale reached",
        "Found inf or nan, current scale is",
        "returned nan values",
        *_DARKNET_LITERALS,
    } | {f"nan iterations: {d}" for d in "123456789"}
    return tuple(sorted(combos | fixed))


_NUMERICS_LITERALS = _numerics_literals()


# Words every reading below needs (case aside): a NaN or Inf value, an overflow, the loss scale. A line without
# any (most lines the exception extractor asks about: a watchdog's what() at every rank) costs no search.
_NEEDS: Final = ("nan", "inf", "overflow", "loss scale")


def numerics(body: str) -> Draft | None:
    """The app.numerics event a line holds, if any (stateless, used for ownership too)."""
    low = body.lower()
    if not any(w in low for w in _NEEDS):
        return None
    message = clip(body)
    m = _FOUND_NAN.search(body)
    if m:
        # Megatron names the global rank, the node and the local device.
        draft = Draft("app.numerics", {"value": m.group("v").lower(), "metric": "grad_norm", "message": message})
        r = _MEGATRON_RANK.search(body)
        if r:
            draft.rank = int(r.group("rank"))
        n = _MEGATRON_NODE.search(body)
        if n:
            draft.host = n.group("node")
        d = _MEGATRON_DEVICE.search(body)
        if d:
            draft.device = f"gpu{d.group('dev')}"
        return draft
    m = _DS_OVERFLOW.search(body)
    if m:
        # fp16 loss-scale overflow: inf/nan gradients, skipped step.
        fields: dict[str, FieldValue] = {"value": "inf", "metric": "loss_scale", "message": message}
        return Draft("app.numerics", fields, rank=int(m.group("rank")) if m.group("rank") else None)
    if _SCALE_FLOOR.search(body):
        # The scaler gave up: overflow on every step, training cannot go on.
        return Draft("app.numerics", {"value": "inf", "metric": "loss_scale_floor", "message": message})
    if _APEX_OVERFLOW.search(body) or _PADDLE_OVERFLOW.search(body):
        return Draft("app.numerics", {"value": "inf", "metric": "loss_scale", "message": message})
    m = _METRIC_VALUE.search(body)
    if m:
        value = "nan" if m.group("v").lstrip("+-").lower() == "nan" else "inf"
        metric = re.sub(r"\s+", "_", m.group("metric").strip()).lower()
        return Draft("app.numerics", {"value": value, "metric": metric, "message": message})
    m = _DARKNET_AVG.search(body) if any(w in body for w in _DARKNET_LITERALS) else None
    if m:
        return Draft("app.numerics", {"value": m.group("v").lstrip("-"), "metric": "avg_loss", "message": message})
    if _NAN_ITERATIONS.search(body):
        return Draft("app.numerics", {"value": "nan", "metric": "nan_iterations", "message": message})
    m = _OTHER_NAN.search(body)
    if m:
        return Draft("app.numerics", {"value": "nan", "message": message})
    return None


class NumericsExtractor:
    """NaN / Inf loss and gradient norms (Megatron, DeepSpeed, NeMo, HF, plain prints)."""

    name = "app.numerics"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "app.numerics": frozenset({"message", "metric", "value", "from_scale", "to_scale"}),
    }
    sources: frozenset[str] = frozenset({"application"})
    # A bare "nan" or "=inf" would pass every Megatron step line ("number of
    # nan iterations: 0") and every logfmt "level=info" line: the literals pair
    # the value with the metric name before it, as _METRIC_VALUE reads them.
    literals: tuple[str, ...] = _NUMERICS_LITERALS

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        rank, body = split_rank_prefix(line)
        draft = numerics(body)
        if draft is not None:
            if rank is not None:
                draft.rank = rank
            yield draft
            if draft.fields.get("metric") == "loss_scale":
                collapse = _scale_collapse(body, draft.rank if draft.rank is not None else ctx.rank, ctx.state)
                if collapse is not None:
                    collapse.rank = draft.rank
                    yield collapse


@dataclass(slots=True)
class _ScaleRun:
    """One stream's overflows since the loss scale last rose."""

    start: float
    last: float
    emitted: bool = False


def _scales(body: str) -> tuple[float | None, float | None]:
    """(the scale an overflow moved the scaler from, the scale it moved it to), where the line says them."""
    paddle = _PADDLE_OVERFLOW.search(body)
    if paddle is not None:
        start = float(paddle.group("from"))
        return start, start * float(paddle.group("ratio"))
    att = _ATTEMPTED_SCALE.search(body)
    new = _NEW_SCALE.search(body)
    return (float(att.group("v")) if att else None), (float(new.group("v")) if new else None)


def _scale_collapse(body: str, who: int | None, state: dict[str, object]) -> Draft | None:
    """The overflow that completes a collapse of the loss scale (see COLLAPSE_HALVINGS), once per run."""
    attempted, reduced = _scales(body)
    runs = state.setdefault(_SCALE_RUNS, {})
    if not isinstance(runs, dict):
        return None
    run = runs.get(who)
    rose = isinstance(run, _ScaleRun) and (
        (attempted is not None and attempted > run.last)
        or (attempted is None and reduced is not None and reduced >= run.last))
    if not isinstance(run, _ScaleRun) or rose:
        start = attempted if attempted is not None else (reduced * 2 if reduced is not None else None)
        if start is None or start <= 0:
            return None
        run = _ScaleRun(start, start)
        runs[who] = run
    if reduced is not None and reduced < run.last:
        run.last = reduced
    if run.emitted or run.last <= 0:
        return None
    floor = run.last <= SCALE_FLOOR
    if not floor and not (run.last <= COLLAPSE_SCALE and run.start / run.last >= 2 ** COLLAPSE_HALVINGS):
        return None
    run.emitted = True
    return Draft("app.numerics", {
        "value": "inf", "metric": "loss_scale_floor" if floor else "loss_scale_collapse",
        "from_scale": run.start, "to_scale": run.last, "message": clip(body)})


EXTRACTORS: tuple[LineExtractor, ...] = (NumericsExtractor(),)
