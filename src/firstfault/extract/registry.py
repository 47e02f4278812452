"""The line extractors the scanner runs, in a fixed order (determinism), and the event kinds of all extractors."""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from firstfault.extract.base import LineExtractor


@lru_cache(maxsize=1)
def line_extractors() -> tuple[LineExtractor, ...]:
    from firstfault.extract import (
        batchd,
        cann,
        checkpoint,
        container,
        exceptions,
        fabricd,
        gpu,
        hang,
        healthcheck,
        host,
        jobend,
        kmod,
        launcher,
        nccl,
        numerics,
        runend,
        services,
        signals,
        slingshot,
        slurmerr,
        span,
        torchrun,
        verbs,
    )
    from firstfault.extract.unrecognized import ErrorWords

    return (*gpu.EXTRACTORS, *container.EXTRACTORS, *host.EXTRACTORS, *nccl.EXTRACTORS, *verbs.EXTRACTORS,
            *slingshot.EXTRACTORS,
            *hang.EXTRACTORS, *exceptions.EXTRACTORS, *exceptions.JOURNAL_EXTRACTORS, *cann.EXTRACTORS,
            *numerics.EXTRACTORS, *torchrun.EXTRACTORS,
            *signals.EXTRACTORS,
            *jobend.EXTRACTORS, *slurmerr.EXTRACTORS, *batchd.EXTRACTORS, *healthcheck.EXTRACTORS, *kmod.EXTRACTORS,
            *launcher.EXTRACTORS,
            *runend.EXTRACTORS, *checkpoint.EXTRACTORS,
            *span.EXTRACTORS, *services.EXTRACTORS, *fabricd.EXTRACTORS,
            ErrorWords())


# Fields any event may carry besides its kind's own: the host a launcher prefix or the line names
# (collect/scan.draft_to_event), mapped to a node by the engine.
COMMON_FIELDS = frozenset({"host"})


@lru_cache(maxsize=1)
def event_kinds() -> Mapping[str, frozenset[str]]:
    """Every event kind an extractor or document reader emits, with the fields it may carry.

    Each extractor declares its kinds (`emits`), each document reader its
    `EMITS`; the catalog's validators take the known kinds and template
    fields from here, so a new extractor needs no second list.
    """
    from firstfault.extract import batch, flightrec, kube, kubetext, metrics, scheduler, stackdump

    out: dict[str, set[str]] = {}
    declared: list[Mapping[str, frozenset[str]]] = [ex.emits for ex in line_extractors()]
    declared += [batch.EMITS, flightrec.EMITS, kube.EMITS, kubetext.EMITS, metrics.EMITS, scheduler.EMITS,
                 stackdump.EMITS]
    for emits in declared:
        for kind, fields in emits.items():
            out.setdefault(kind, set(COMMON_FIELDS)).update(fields)
    return {k: frozenset(v) for k, v in sorted(out.items())}
