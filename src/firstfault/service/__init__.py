"""The firstfault Service: the engine and the catalog behind an HTTP API.

Importing this package does no work; `create_app(settings)` builds an app.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fastapi import FastAPI

    from firstfault.service.settings import ServiceSettings


def create_app(settings: ServiceSettings | None = None) -> FastAPI:
    from firstfault.service.app import create_app as _create

    return _create(settings)


def __getattr__(name: str) -> Any:
    if name in ("ServiceSettings", "load_settings"):
        from firstfault.service import settings

        return getattr(settings, name)
    raise AttributeError(name)


__all__ = ["ServiceSettings", "create_app", "load_settings"]
