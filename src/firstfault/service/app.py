"""The Service's app factory: catalog and engine built once, everything else per request.

`create_app(settings)` builds a fresh app (its own catalog, pool, metrics
registry); nothing happens at import time. `create_app_from_env()` is the
uvicorn factory (`uvicorn --factory firstfault.service.app:create_app_from_env`),
reading flags passed down as FIRSTFAULT_* variables and the settings file.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.openapi.utils import get_openapi
from fastapi.responses import Response
from starlette.types import Scope

import firstfault
from firstfault import records
from firstfault.collect.wire import AnalyzeRequest
from firstfault.engine.loader import Catalog, load_catalog, shipped_catalog
from firstfault.model import Verdict
from firstfault.responses import RESPONSE_RECORDS, ProblemBody
from firstfault.service.auth import TokenCheck
from firstfault.service.errors import Problem
from firstfault.service.limits import CONNECTION_LIMITS, AnalysisPool, ConnectionLimits
from firstfault.service.logs import RequestLog, configure_logging
from firstfault.service.metrics import ServiceMetrics
from firstfault.service.routes import build_router, problem_response
from firstfault.service.runner import Engine
from firstfault.service.settings import ServiceSettings, load_settings
from firstfault.service.workers import WorkerLife, check_catalog

log = logging.getLogger("firstfault.service")


def load_service_catalog(settings: ServiceSettings) -> Catalog:
    """The shipped catalog or the --rules directory; raises CatalogError (file:line problems)."""
    return shipped_catalog() if settings.rules is None else load_catalog(settings.rules)


def create_app(settings: ServiceSettings | None = None, catalog: Catalog | None = None) -> FastAPI:
    settings = settings or ServiceSettings()
    cat = catalog or load_service_catalog(settings)
    engine = Engine(cat)
    metrics = ServiceMetrics()
    pool = AnalysisPool(settings.max_concurrent, settings.max_queue, settings.analysis_timeout,
                        on_change=metrics.pool_changed)
    metrics.catalog.labels(cat.version, cat.sha256, str(len(cat.rules))).set(1)

    store = None
    if settings.db:
        from firstfault.store import VerdictStore

        store = VerdictStore.open(settings.db)

    life = WorkerLife()  # serve --workers N: stale gauges, the supervisor watch

    def refused(status: int, error: str) -> None:  # by service.protocol, before a request reached the app
        metrics.errors.labels(str(status), error).inc()
        log.warning("connection refused", extra={"fields": {"status": status, "outcome": error}})

    limits = ConnectionLimits(header_timeout=settings.header_timeout, max_connections=settings.max_connections,
                              retry_after=settings.retry_after, refused=refused)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[dict[str, Any]]:
        life.start()
        log.info("ready", extra={"fields": {"catalog": cat.version, "sha256": cat.sha256, "rules": len(cat.rules),
                                            "auth": bool(settings.tokens), "dashboard": store is not None}})
        yield {CONNECTION_LIMITS: limits}  # the lifespan state: what ServiceProtocol reads for each connection
        pool.shutdown()
        life.stop()
        if store is not None:
            store.close()

    app = FastAPI(
        title="firstfault",
        version=getattr(firstfault, "__version__", "0"),
        summary="Where a failed distributed GPU workload began: evidence in, one verdict out.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.engine = engine
    app.state.pool = pool
    app.state.metrics = metrics
    app.include_router(build_router(settings, engine, pool, metrics, TokenCheck(settings.tokens)))
    described: list[type[records.Record]] = [Verdict, *RESPONSE_RECORDS]  # the routes' answers, by name
    if store is not None:
        from firstfault.dashboard import make_router
        from firstfault.dashboard.router import RECORDS as DASHBOARD_RECORDS

        app.include_router(make_router(lambda: store))
        described += DASHBOARD_RECORDS
    app.add_exception_handler(Problem, problem_response)

    async def unexpected(request: Request, exc: Exception) -> Response:
        # The body is evidence: never logged; the traceback is enough to find the bug.
        log.error("unhandled error", exc_info=exc, extra={"fields": {"route": request.url.path}})
        request.scope.setdefault("firstfault", {})["outcome"] = "internal_error"
        body = ProblemBody(error="internal_error", message="the analysis failed unexpectedly; see the server log")
        return Response(records.encode(body), status_code=500, media_type="application/json")

    app.add_exception_handler(Exception, unexpected)

    def count(scope: Scope, status: int, bytes_in: int, _out: int, _dt: float) -> None:
        route = getattr(scope.get("route"), "path", None) or "(unmatched)"
        metrics.requests.labels(scope.get("method", ""), route, str(status)).inc()
        info = scope.get("firstfault", {})
        if route == "/v1/analyze" and "form" in info:
            metrics.request_bytes.labels(info["form"]).observe(bytes_in)
        if status >= 400:
            metrics.errors.labels(str(status), str(info.get("outcome", "error"))).inc()

    app.add_middleware(RequestLog, on_done=count)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            doc = get_openapi(title=app.title, version=app.version, summary=app.summary, routes=app.routes)
            schemas = doc.setdefault("components", {}).setdefault("schemas", {})
            # The records' schemas: the routes refer to them by name (the request's is in ANALYZE_BODY).
            for name, sch in records.schemas([AnalyzeRequest, *described])[1].items():
                schemas.setdefault(name, sch)
            app.openapi_schema = doc
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


def create_app_from_env() -> FastAPI:
    """The uvicorn factory: settings from FIRSTFAULT_* and the settings file.

    Under `serve`, each worker checks it loaded the very catalog serve validated (service.workers).
    """
    settings = load_settings()
    configure_logging(settings.log_level)
    cat = load_service_catalog(settings)
    check_catalog(cat.sha256)
    return create_app(settings, cat)
