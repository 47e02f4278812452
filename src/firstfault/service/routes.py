"""The HTTP API: /v1/analyze, /v1/catalog, /v1/catalog/prefilter, /healthz, /readyz, /metrics."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request, Security
from fastapi.responses import Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.requests import ClientDisconnect

from firstfault import records
from firstfault.collect.scan import prefilter_words
from firstfault.extract.metric_conditions import metric_names
from firstfault.model import LINE_SOURCES, CatalogRef, Verdict
from firstfault.responses import CatalogInfo, Health, Prefilter, ProblemBody, RuleInfo, described
from firstfault.service import runner, tarball
from firstfault.service.auth import TokenCheck
from firstfault.service.body import UploadSlots, receive_body, spooled_chunks, too_large
from firstfault.service.errors import Problem
from firstfault.service.limits import AnalysisPool, AnalysisTimeout, Deadline, Overloaded
from firstfault.service.metrics import ServiceMetrics
from firstfault.service.settings import Scope, ServiceSettings

log = logging.getLogger("firstfault.service")

MEDIA_FORMS: dict[str, runner.Form] = {
    "application/json": "json",
    "application/x-ndjson": "ndjson",
    "application/ndjson": "ndjson",
    "application/gzip": "tar",
    "application/x-gzip": "tar",
    "application/x-tar+gzip": "tar",
    "application/x-gtar": "tar",
}

# Module level: FastAPI resolves the (string) annotation below in this module's namespace.
BEARER = HTTPBearer(auto_error=False, description="one of the tokens configured with FIRSTFAULT_TOKENS")
BearerCredentials = Annotated[HTTPAuthorizationCredentials | None, Security(BEARER)]


def media_form(content_type: str | None) -> runner.Form | None:
    if not content_type:
        return None
    return MEDIA_FORMS.get(content_type.split(";", 1)[0].strip().lower())


def _json(record: records.Record, status: int = 200) -> Response:
    return Response(records.encode(record), status_code=status, media_type="application/json")


def _problem_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    why = {
        401: "no or unknown bearer token", 403: "the token lacks the scope",
        408: "the body did not arrive within body_timeout", 413: "body or record over a limit",
        415: "unsupported Content-Type or Content-Encoding", 422: "malformed body or a field of the wrong type",
        431: "a header (the bearer token) over its limit",
        503: "overloaded: retry after Retry-After seconds", 504: "the analysis ran past its time limit",
    }
    return {c: described(ProblemBody, why[c]) for c in codes}


ANALYZE_BODY: dict[str, Any] = {
    "required": True,
    "description": "One attempt's evidence in one of three forms (docs/service.md). Content-Encoding: gzip "
                   "is accepted for the JSON and NDJSON forms.",
    "content": {
        "application/json": {"schema": {"$ref": "#/components/schemas/AnalyzeRequest"}},
        "application/x-ndjson": {"schema": {"type": "string", "description": "context record, then records"}},
        "application/gzip": {"schema": {"type": "string", "format": "binary",
                                        "description": "an evidence bundle as .tar.gz"}},
    },
}


def build_router(settings: ServiceSettings, engine: runner.Engine, pool: AnalysisPool, metrics: ServiceMetrics,
                 tokens: TokenCheck) -> APIRouter:
    router = APIRouter()
    cat = engine.catalog
    uploads = UploadSlots(settings.max_uploads)
    cat_ref = CatalogRef(version=cat.version, sha256=cat.sha256)

    async def no_auth(request: Request) -> None:
        return None

    def require(scope: Scope) -> Callable[..., Awaitable[None]]:
        if not tokens.enabled:
            return no_auth

        async def check(request: Request, _cred: BearerCredentials) -> None:
            # _cred is there for the OpenAPI security scheme; the check reads the header itself.
            name = tokens.check(request.headers.get("authorization"), scope)
            request.scope.setdefault("firstfault", {})["client"] = name

        return check

    @router.get("/healthz", tags=["ops"], responses={200: described(Health, "Successful Response")})
    async def healthz() -> Response:
        """The process answers."""
        return _json(Health(status="ok"))

    @router.get("/readyz", tags=["ops"],
                responses={200: described(Health, "Successful Response"), 503: described(Health, "not ready")})
    async def readyz() -> Response:
        """The catalog is loaded and the analysis pool takes work."""
        return _json(Health(status="ready", catalog=cat_ref))

    @router.get("/metrics", tags=["ops"], response_class=Response,
                responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}},
                                 "description": "Prometheus text format"}})
    async def prom() -> Response:
        """Prometheus metrics."""
        return Response(metrics.render(), media_type="text/plain; version=0.0.4; charset=utf-8")

    catalog_doc = records.encode(CatalogInfo(version=cat.version, sha256=cat.sha256, rules=[
        RuleInfo(id=r.id, title=r.title, status=r.status, role=r.role, domain=r.domain, category=r.category,
                 version=r.version)
        for r in (lr.rule for lr in cat.rules)]))

    @router.get("/v1/catalog", tags=["catalog"], dependencies=[Depends(require("catalog"))],
                responses={200: described(CatalogInfo, "Successful Response"), **_problem_responses(401, 403, 431)})
    async def catalog() -> Response:
        """The loaded rules and the catalog's version and sha256."""
        return Response(catalog_doc, media_type="application/json")

    prefilter_doc = records.encode(Prefilter(words=prefilter_words(),
                                             by_source={k: prefilter_words(k) for k in LINE_SOURCES},
                                             metrics=metric_names(), catalog=cat_ref))

    @router.get("/v1/catalog/prefilter", tags=["catalog"], dependencies=[Depends(require("catalog"))],
                responses={200: described(Prefilter, "Successful Response"), **_problem_responses(401, 403, 431)})
    async def prefilter() -> Response:
        """The literal words a log line must contain for any extractor to match it, and the metric
        names the catalog's metric conditions read.

        The Blueprint drops every other line before sending, and asks
        Prometheus for these metrics only; the verdict is the same with or
        without that filtering.
        """
        return Response(prefilter_doc, media_type="application/json")

    @router.post("/v1/analyze", tags=["analyze"], openapi_extra={"requestBody": ANALYZE_BODY},
                 dependencies=[Depends(require("analyze"))],
                 responses={200: described(Verdict, "Successful Response"),
                            **_problem_responses(401, 403, 408, 413, 415, 422, 431, 503, 504)})
    async def analyze(request: Request) -> Response:
        """Analyse one workload attempt's evidence and return its verdict (docs/verdict.md)."""
        info: dict[str, Any] = request.scope.setdefault("firstfault", {})
        form = media_form(request.headers.get("content-type"))
        encoding = request.headers.get("content-encoding", "identity").strip().lower()
        if form is None:
            raise Problem(415, "unsupported_media_type",
                          "Content-Type must be application/json, application/x-ndjson or application/gzip "
                          "(a .tar.gz evidence bundle)")
        info["form"] = form
        if encoding not in ("identity", "gzip") or (form == "tar" and encoding == "gzip"):
            raise Problem(415, "unsupported_media_type",
                          f"Content-Encoding {encoding!r} is not accepted here (gzip for JSON and NDJSON only)")
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > settings.max_body_bytes:
            raise too_large(settings.max_body_bytes)
        gz = encoding == "gzip"
        limits = tarball.TarLimits(settings.max_archive_members, settings.max_decompressed_bytes)
        # The JSON form is parsed whole: its (inflated) size has a limit of its own.
        json_limit = min(settings.max_json_bytes, settings.max_decompressed_bytes if gz else settings.max_body_bytes)

        t0 = time.perf_counter()
        # The whole body arrives (within body_timeout) before an analysis slot is taken, so slow
        # clients hold a connection, never a slot.
        with uploads.slot(settings.retry_after):
            try:
                spool = await receive_body(request.stream(), settings.max_body_bytes, settings.body_timeout)
            except ClientDisconnect as exc:
                raise Problem(400, "client_disconnected", "the client closed the connection mid-body") from exc

        def work(deadline: Deadline) -> Verdict:
            with spool:
                body = spooled_chunks(spool, deadline)
                if form == "json":
                    return runner.run_json(engine, body, gz, json_limit, deadline)
                if form == "ndjson":
                    return runner.run_ndjson(engine, body, gz, settings.max_decompressed_bytes,
                                             settings.max_record_bytes, deadline)
                return runner.run_tar(engine, body, limits, deadline)

        try:
            verdict = await pool.run(work)
        except Overloaded as exc:
            raise Problem(503, "overloaded",
                          f"{pool.max_concurrent} analyses running and {pool.max_queue} waiting; retry later",
                          headers={"Retry-After": str(settings.retry_after)}) from exc
        except AnalysisTimeout as exc:
            raise Problem(504, "analysis_timeout", str(exc)) from exc
        finally:
            # Closed on every way out: a timed-out analysis still reading it stops at its next read.
            spool.close()
            metrics.latency.labels(form).observe(time.perf_counter() - t0)
        doc = records.encode(verdict)  # before counting: a verdict that cannot be sent is a 500, not an outcome
        metrics.analyses.labels(form, verdict.outcome, verdict.attributed_domain).inc()
        info["outcome"] = verdict.outcome
        info["domain"] = verdict.attributed_domain
        info["workload"] = verdict.workload.id
        return Response(doc, media_type="application/json")

    return router


def problem_response(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Problem)
    request.scope.setdefault("firstfault", {})["outcome"] = exc.error
    return Response(records.encode(exc.body()), status_code=exc.status, headers=exc.headers,
                    media_type="application/json")
