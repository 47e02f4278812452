"""The line extractors the scanner runs, in a fixed order (determinism)."""

from __future__ import annotations

from functools import lru_cache

from firstfault.extract.base import LineExtractor


@lru_cache(maxsize=1)
def line_extractors() -> tuple[LineExtractor, ...]:
    from firstfault.extract import app, gpu, hang, host, launcher, nccl, verbs
    from firstfault.extract.unrecognized import ErrorWords

    return (*gpu.EXTRACTORS, *host.EXTRACTORS, *nccl.EXTRACTORS, *verbs.EXTRACTORS, *hang.EXTRACTORS,
            *app.EXTRACTORS, *launcher.EXTRACTORS, ErrorWords())
