"""The dashboard: HTML pages and a read-only JSON API over the verdict store.

`make_router(store_provider)` returns the routes; the Service includes them
when it is given a store (`firstfault serve --db URL`). `firstfault fleet`
and `firstfault demo` live in cli/ (above the Service and the engine, which the
dashboard does not import). Importing this
package does no work.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastapi import APIRouter

    from firstfault.dashboard.router import Clock, StoreProvider


def make_router(store_provider: StoreProvider, *, clock: Clock | None = None, dependencies: Any = None) -> APIRouter:
    from firstfault.dashboard.router import make_router as _make

    if clock is None:
        return _make(store_provider, dependencies=dependencies)
    return _make(store_provider, clock=clock, dependencies=dependencies)


__all__ = ["make_router"]
