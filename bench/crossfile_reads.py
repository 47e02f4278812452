"""How many candidate reads a fold across files could remove (issue 27; bench/README.md, "spdx46").

Runs one `-j 1` analysis of BUNDLE in this process with `Extraction.add_events` (the read of a line outside the
fold's shapes: `LineFold.pass_on`, a rank log's candidates) wrapped, and every stream's state dict replaced by one
that notes any access (get, set, `in`, pop, iteration, ...). For each line read so it tells whether the reading gave
events, claimed nothing, offered nothing to the unrecognized lines and touched no stream state: the lines a rule
that adds a template's events without reading it could take at all. It then plays spdb44's rule across files
(`_Variant.same_again`, `gives_same`, fold.SAME_READS) over those lines, in the order the analysis read them:

- `exact`: a line is added without reading where SAME_READS earlier lines of its shape and hits, in any file, gave
  the same events *relative to their file* (the file, its node, its rank, and a host that is the file's node left
  out: what `fold.relative` leaves out) and the line has the first one's value in every byte in which all of
  those had it; else it is read and is one more proof.
- `masked`: the same, with the device and the `addr` field also left out of the comparison: an upper bound for a
  rule that would also work out those fields from the line's digits (no such mechanism exists: a `gpu3` is not
  spelled on the line, its `[3]` is).

The seconds are `time.thread_time` around each wrapped read (the extractors, `EventStore.add_drafts` and the
events): what such a rule removes *before* the cost of its own path (the shape, a lookup, `EventStore.add_copy`'s
events, about 6-7 us a line). The watched state dicts slow the lines that touch state, so the analysis's own CPU
printed here is above a plain run's.

    .venv/bin/python bench/crossfile_reads.py /tmp/ff-x/a8
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from firstfault.analysis.analyze import Analyzer
from firstfault.collect import scan
from firstfault.collect.events import EventStore
from firstfault.extract.base import Candidate, Draft, LineContext
from firstfault.extract.memo import line_shape

SAME_READS = 4  # collect/fold.py's


class _Watched(dict[str, object]):
    """A stream's state that notes any access the extractors make through the dict's methods."""

    touched = False

    def _t(self) -> None:
        _Watched.touched = True

    def get(self, *a: Any) -> Any:
        self._t()
        return super().get(*a)

    def __getitem__(self, k: str) -> object:
        self._t()
        return super().__getitem__(k)

    def __setitem__(self, k: str, v: object) -> None:
        self._t()
        super().__setitem__(k, v)

    def setdefault(self, *a: Any) -> Any:
        self._t()
        return super().setdefault(*a)

    def __contains__(self, k: object) -> bool:
        self._t()
        return super().__contains__(k)

    def pop(self, *a: Any) -> Any:
        self._t()
        return super().pop(*a)

    def __delitem__(self, k: str) -> None:
        self._t()
        super().__delitem__(k)

    def update(self, *a: Any, **k: Any) -> None:
        self._t()
        super().update(*a, **k)

    def keys(self) -> Any:
        self._t()
        return super().keys()

    def items(self) -> Any:
        self._t()
        return super().items()

    def values(self) -> Any:
        self._t()
        return super().values()

    def __iter__(self) -> Any:
        self._t()
        return super().__iter__()

    def __len__(self) -> int:
        self._t()
        return super().__len__()

    def __bool__(self) -> bool:
        self._t()
        return True


class _States(dict[tuple[object, ...], dict[str, object]]):
    def __setitem__(self, k: tuple[object, ...], v: dict[str, object]) -> None:
        super().__setitem__(k, _Watched(v))


class _Tally:
    def __init__(self) -> None:
        self.reads, self.read_s = 0, 0.0
        self.able, self.able_s = 0, 0.0
        self.added = {"exact": [0.0, 0.0], "masked": [0.0, 0.0]}
        self.lessons: dict[str, dict[tuple[object, ...], list[int]]] = {"exact": {}, "masked": {}}

    def relative(self, drafts: list[Draft], ctx: LineContext, mask: bool) -> tuple[object, ...]:
        out = []
        for d in drafts:
            rank = d.rank if d.rank is not None else ctx.rank
            host = d.host or ctx.host
            f = dict(d.fields, **({"host": host} if host else {}))
            if f.get("host") == ctx.node:
                f["host"] = "<the file's node>"
            if mask:
                f = {k: "<from the line>" if k == "addr" else v for k, v in f.items()}
            out.append((d.kind, "<the file's rank>" if rank == ctx.rank else rank,
                        "<from the line>" if mask else d.device, tuple(sorted(f.items()))))
        return tuple(out)

    def play(self, c: Candidate, drafts: list[Draft], ctx: LineContext, secs: float) -> None:
        raw = c.text.encode()
        x = int.from_bytes(raw)
        top = int.from_bytes(b"\x80" * len(raw))
        for mode, lessons in self.lessons.items():
            key = (line_shape(raw), c.hits, self.relative(drafts, ctx, mode == "masked"))
            ls = lessons.get(key)
            if ls is None:
                lessons[key] = [x, 1, (1 << 8 * len(raw)) - 1]
                continue
            rep, same, keep = ls
            if same >= SAME_READS and not (x ^ rep) & keep:
                self.added[mode][0] += 1
                self.added[mode][1] += secs
            else:  # (fold._Variant.same_again's narrowing of same_keep)
                d = x ^ rep
                ls[2] = keep & ~(((d + (top >> 7) * 0x7F) & top) >> 7) * 0xFF
                ls[1] += 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bundle")
    args = ap.parse_args()
    tally = _Tally()
    orig_init = scan.Extraction.__init__

    def init(self: scan.Extraction, *a: Any, **k: Any) -> None:
        orig_init(self, *a, **k)
        self._states = _States()

    def add_events(self: scan.Extraction, c: Candidate, store: EventStore) -> None:
        _Watched.touched = False
        self._offered = None
        t0 = time.thread_time()
        drafts, ctx = self.drafts(c)
        if drafts and ctx is not None:
            store.add_drafts(drafts, ctx, c.text[:scan.TEXT_CLIP])
        secs = time.thread_time() - t0
        tally.reads += 1
        tally.read_s += secs
        if drafts and ctx is not None and not ctx.claimed and self._offered is None and not _Watched.touched:
            tally.able += 1
            tally.able_s += secs
            tally.play(c, drafts, ctx, secs)

    scan.Extraction.__init__ = init  # type: ignore[method-assign]
    scan.Extraction.add_events = add_events  # type: ignore[method-assign]
    t0 = time.process_time()
    Analyzer().analyze_path(args.bundle, workers=1)
    total = time.process_time() - t0
    n = max(tally.reads, 1)
    print(f"{args.bundle}: analysis {total:.2f} s CPU (states watched); reads through add_events {tally.reads} "
          f"({tally.read_s:.3f} s)")
    print(f"  events, no claim, no offer, no state touched: {tally.able} ({tally.able / n:.1%} of the reads), "
          f"{tally.able_s:.3f} s ({tally.able_s / total:.1%} of the CPU)")
    for mode, (k, s) in tally.added.items():
        print(f"  added without reading, rule {mode}: {int(k)} ({k / n:.1%} of the reads), {s:.3f} s gross "
              f"({s / total:.1%} of the CPU); lessons {len(tally.lessons[mode])}")


if __name__ == "__main__":
    main()
