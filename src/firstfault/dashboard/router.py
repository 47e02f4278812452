"""The dashboard's routes: HTML pages and the read-only JSON API over the verdict store.

`make_router(store_provider)` returns an APIRouter the Service includes when
it has a store (`app.include_router(make_router(lambda: store))`):

    GET /                    -> /verdicts
    GET /verdicts            verdict list (filters in the URL)
    GET /verdicts/{id}       one verdict: cause, timeline, symptoms, evidence, coverage
    GET /verdicts/find       -> /verdicts/{id} of ?workload=&attempt=&cluster=&catalog= (alert links)
    GET /provisional/{id}    a provisional verdict (sent while its attempt ran; watch --follow)
    GET /fleet               nodes/devices/ports most often where failures began
    GET /static/{name}       app.css, app.js (shipped with the package: works offline)
    GET /v1/verdicts         the list as JSON (VerdictPage)
    GET /v1/verdicts/{id}    the stored verdict document and its enrichment
    GET /v1/fleet            the fleet figures as JSON (FleetReport)
    GET /v1/provisional      provisional verdicts of attempts still running, newest first (ProvisionalItem)
    GET /v1/provisional/{id} one provisional verdict and what superseded it

Query parameters are validated by the models in params.py; a bad value is a
422 in the Service's error form ({error, message, detail[]}) for the API and
an error banner (also 422) on the pages. The store is read only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from fastapi import APIRouter, Request
from fastapi.params import Depends
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from pydantic import BaseModel, ValidationError
from sqlalchemy.exc import SQLAlchemyError

from firstfault import records
from firstfault.dashboard import detail
from firstfault.dashboard.fleet import DEFAULT_DOMAINS, FleetEntry, FleetReport, report_from
from firstfault.dashboard.fleetsql import fleet_counts
from firstfault.dashboard.params import DOMAINS, OUTCOMES, FleetParams, VerdictFilters
from firstfault.dashboard.queries import known_nodes, known_values
from firstfault.model import CAUSE_DOMAINS, Enrichment, Verdict
from firstfault.responses import ProblemBody, ProblemDetail, described
from firstfault.store import StoredVerdict, VerdictStore, VerdictSummary
from firstfault.store.actions import ActionLedger
from firstfault.store.provisional import ProvisionalLedger, ProvisionalRecord

log = logging.getLogger("firstfault.dashboard")

StoreProvider = Callable[[], VerdictStore]
Clock = Callable[[], datetime]
P = TypeVar("P", bound=BaseModel)

HERE = Path(__file__).parent
STATIC_TYPES = {".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8"}


def _utcnow() -> datetime:
    return datetime.now(UTC)


# ---------------------------------------------------------------------------
# API shapes
# ---------------------------------------------------------------------------


class VerdictItem(BaseModel):
    id: int
    workload_id: str
    attempt: int
    name: str | None
    scheduler: str
    cluster: str | None
    terminal_state: str | None
    outcome: str
    attributed_domain: str
    root_category: str | None
    root_summary: str | None
    candidates: list[str]
    affected_nodes: list[str]
    first_seen: datetime | None
    analyzed_at: datetime
    links: dict[str, str]

    @classmethod
    def of(cls, s: VerdictSummary) -> VerdictItem:
        return cls(id=s.id, workload_id=s.workload_id, attempt=s.attempt, name=s.name, scheduler=s.scheduler,
                   cluster=s.cluster, terminal_state=s.terminal_state, outcome=s.outcome,
                   attributed_domain=s.attributed_domain, root_category=s.root_category,
                   root_summary=s.root_summary, candidates=list(s.candidate_categories),
                   affected_nodes=list(s.affected_nodes), first_seen=s.first_seen, analyzed_at=s.analyzed_at,
                   links=s.links)


class VerdictPage(BaseModel):
    total: int
    limit: int
    offset: int
    items: list[VerdictItem]


class ProvisionalItem(records.Record, kw_only=True):
    """A provisional verdict as the ledger holds it (store.provisional), without the document."""

    id: int
    workload_id: str
    attempt: int
    cluster: str | None
    category: str
    domain: str
    summary: str
    nodes: list[str]
    first_seen: datetime | None
    sent_at: datetime
    delivery: str
    final_verdict_id: int | None
    held: bool | None

    @staticmethod
    def fields_of(r: ProvisionalRecord) -> dict[str, Any]:
        return {"id": r.id, "workload_id": r.workload_id, "attempt": r.attempt, "cluster": r.cluster or None,
                "category": r.category, "domain": r.domain, "summary": r.summary, "nodes": list(r.nodes),
                "first_seen": r.first_seen, "sent_at": r.sent_at, "delivery": r.delivery,
                "final_verdict_id": r.final_verdict_id, "held": r.held}

    @classmethod
    def of(cls, r: ProvisionalRecord) -> ProvisionalItem:
        return cls(**cls.fields_of(r))


class ProvisionalRecordBody(ProvisionalItem, kw_only=True):
    """A provisional verdict with its document."""

    verdict: Verdict


class VerdictRecord(records.Record, kw_only=True):
    """A stored verdict (the document of docs/verdict.md) with its enrichment."""

    id: int
    created_at: datetime
    cluster: str | None
    owner: str | None
    links: dict[str, str]
    previous_attempts: list[str]
    verdict: Verdict


# The dashboard's records in the OpenAPI document (service/app.py adds their schemas as components).
RECORDS: tuple[type[records.Record], ...] = (ProvisionalItem, ProvisionalRecordBody, VerdictRecord)


def _json(value: Any) -> Response:
    return Response(records.encode(value), media_type="application/json")


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


class BadParams(Exception):
    def __init__(self, message: str, detail: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail


def _loc(loc: Sequence[Any]) -> str:
    return ".".join(str(p) for p in loc if not isinstance(p, int)) or "(query)"


def validate_query(model: type[P], request: Request, now: datetime) -> tuple[P, datetime | None, datetime | None]:
    """Query string -> model and its resolved (since, until); BadParams names each bad parameter."""
    raw: dict[str, Any] = {}
    lists = {name for name, f in model.model_fields.items() if "list" in str(f.annotation)}
    for k, v in request.query_params.multi_items():
        if k in lists:
            raw.setdefault(k, []).append(v)
        elif k in raw:
            raise BadParams(f"{k}: given more than once", [{"loc": k, "msg": "given more than once"}])
        else:
            raw[k] = v
    try:
        params = model.model_validate(raw)
    except ValidationError as exc:
        detail = [
            {"loc": _loc(e["loc"]), "msg": "unknown parameter" if e["type"] == "extra_forbidden" else e["msg"],
             "type": e["type"]}
            for e in exc.errors(include_url=False)
        ]
        raise BadParams("; ".join(f"{d['loc']}: {d['msg']}" for d in detail), detail) from None
    try:
        since, until = params.window(now)  # type: ignore[attr-defined]
    except ValueError as exc:
        raise BadParams(str(exc), [{"loc": "since", "msg": str(exc)}]) from None
    return params, since, until


def _problem(status: int, error: str, message: str, detail: list[dict[str, Any]] | None = None) -> Response:
    """The Service's error form (responses.ProblemBody)."""
    body = ProblemBody(error=error, message=message, detail=[ProblemDetail(**d) for d in detail or []])
    return Response(records.encode(body), status_code=status, media_type="application/json")


def _query_doc(model: type[BaseModel]) -> dict[str, Any]:
    """OpenAPI parameters for a query model (validated by hand, so FastAPI cannot derive them)."""
    props = model.model_json_schema()["properties"]
    params = []
    for name, schema in props.items():
        params.append({"name": name, "in": "query", "required": False, "schema": schema,
                       "description": schema.get("description", ""),
                       **({"style": "form", "explode": True} if schema.get("type") == "array" else {})})
    return {"parameters": params}


ERRORS: dict[int | str, dict[str, Any]] = {
    422: described(ProblemBody, "a filter value is invalid (the detail names it)"),
    503: described(ProblemBody, "the verdict store cannot be read"),
}


@cache
def templates() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(HERE / "templates")),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["ts"] = _fmt_time
    return env


def _fmt_time(value: datetime | str | None, short: bool = False) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return str(value)
    value = value.astimezone(UTC) if value.tzinfo else value.replace(tzinfo=UTC)
    if short:
        return value.strftime("%m-%d %H:%M")
    frac = f".{value.microsecond // 1000:03d}" if value.microsecond else ""
    return value.strftime("%Y-%m-%d %H:%M:%S") + frac + "Z"


# ---------------------------------------------------------------------------
# the router
# ---------------------------------------------------------------------------


def _count(store: VerdictStore, f: VerdictFilters, since: datetime | None, until: datetime | None,
           domain: Sequence[str]) -> int:
    return store.count(outcome=f.outcome, domain=domain, category=f.category, node=f.node, since=since, until=until)


def _page(store: VerdictStore, f: VerdictFilters, since: datetime | None,
          until: datetime | None) -> tuple[list[VerdictSummary], int]:
    rows = store.list(outcome=f.outcome, domain=f.domain, category=f.category, node=f.node, since=since,
                      until=until, limit=f.limit, offset=f.offset)
    return rows, _count(store, f, since, until, f.domain)


def _running(store: VerdictStore) -> list[ProvisionalRecord]:
    """The provisional verdicts of attempts still running (a store before 0006_provisional has none)."""
    try:
        return ProvisionalLedger(store).running(20)
    except SQLAlchemyError as exc:
        log.warning("provisional verdicts unavailable: %s", exc)
        return []


def fleet_report(store: VerdictStore, p: FleetParams, now: datetime) -> FleetReport:
    """The fleet figures for validated parameters (also `firstfault fleet`)."""
    since, until = p.span(now)
    domains = list(p.domain) or list(DEFAULT_DOMAINS)
    counts = fleet_counts(store.engine, since, until, domains, p.limit, p.cluster, kinds=p.tables())
    return report_from(counts, since, until, domains, p.cluster)


# The ports and cables the Switches page lists under its switches, at most.
SWITCH_PORTS = 500


def switch_groups(report: FleetReport, limit: int) -> list[tuple[FleetEntry, list[FleetEntry], list[FleetEntry]]]:
    """(switch, its ports, its cables) for the first `limit` switches of a report."""
    ports = report.table("switch_ports").entries
    cables = report.table("cables").entries
    return [(sw, [e for e in ports if e.node == sw.key], [c for c in cables if c.key.startswith(sw.key + "/")])
            for sw in report.table("switches").entries[:limit]]


def make_router(store_provider: StoreProvider, *, clock: Clock = _utcnow,
                dependencies: Sequence[Depends] | None = None) -> APIRouter:
    """The dashboard pages and read-only API over `store_provider()`.

    `dependencies` (e.g. the Service's token check) apply to every route.
    """
    router = APIRouter(dependencies=dependencies)

    def page(request: Request, name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        base = request.scope.get("root_path", "").rstrip("/")
        html = templates().get_template(name).render(base=base, path=request.url.path, now=clock(), **ctx)
        return HTMLResponse(html, status_code=status)

    def store_down(request: Request | None, exc: SQLAlchemyError) -> Response:
        log.error("verdict store unreadable", exc_info=exc)
        msg = "the verdict store cannot be read; see the server log"
        if request is None:
            return _problem(503, "store_unavailable", msg)
        return page(request, "error.html", status=503, title="Store unavailable", message=msg)

    # -- pages ------------------------------------------------------------------

    @router.get("/", include_in_schema=False)
    def home(request: Request) -> RedirectResponse:
        return RedirectResponse(str(request.url_for("verdicts_page")), status_code=302)

    @router.get("/verdicts", include_in_schema=False, name="verdicts_page")
    def verdicts_page(request: Request) -> Response:
        now = clock()
        try:
            f, since, until = validate_query(VerdictFilters, request, now)
        except BadParams as exc:
            return page(request, "verdicts.html", status=422, error=exc.message, f=VerdictFilters(), rows=[],
                        total=0, chips=[], outcomes=OUTCOMES, domains=DOMAINS, categories=[], nodes=[], running=[])
        store = store_provider()
        try:
            rows, total = _page(store, f, since, until)
            chips = [(d, _count(store, f, since, until, [d])) for d in DOMAINS]
            categories = known_values(store.engine, "root_category")
            nodes = known_nodes(store.engine)
        except SQLAlchemyError as exc:
            return store_down(request, exc)
        return page(request, "verdicts.html", f=f, rows=rows, total=total, chips=chips, outcomes=OUTCOMES,
                    domains=DOMAINS, categories=categories, nodes=nodes, error=None,
                    running=_running(store) if f.offset == 0 else [])

    # Before /verdicts/{vid}, which would take "find" for an id. Alerts link here (sinks/alertmanager.py).
    @router.get("/verdicts/find", include_in_schema=False, name="verdict_find")
    def verdict_find(request: Request, workload: str = "", attempt: str = "0", cluster: str = "",
                     catalog: str = "") -> Response:
        if not workload or not attempt.isdigit() or len(attempt) > 9:
            return page(request, "error.html", status=422, title="Invalid filter",
                        message="give workload=ID and attempt=N (and cluster, catalog) to find a verdict")
        try:
            vid = store_provider().find(workload, int(attempt), cluster or None, catalog or None)
        except SQLAlchemyError as exc:
            return store_down(request, exc)
        if vid is None:  # a provisional alert's link while the attempt runs: its provisional verdict
            try:
                running = [r for r in ProvisionalLedger(store_provider()).open_for(workload, int(attempt),
                                                                                     cluster or None)]
            except SQLAlchemyError:
                running = []
            if running:
                return RedirectResponse(str(request.url_for("provisional_page", pid=str(running[-1].id))),
                                        status_code=302)
            return page(request, "error.html", status=404, title="No such verdict",
                        message=f"no verdict for workload {workload!r} attempt {attempt} is in the store (yet)")
        return RedirectResponse(str(request.url_for("verdict_page", vid=str(vid))), status_code=302)

    @router.get("/verdicts/{vid}", include_in_schema=False, name="verdict_page")
    def verdict_page(request: Request, vid: str) -> Response:
        if not vid.isdigit() or len(vid) > 18:
            return page(request, "error.html", status=404, title="No such verdict",
                        message=f"{vid!r} is not a verdict id")
        try:
            store = store_provider()
            rec = store.get_record(int(vid))
        except SQLAlchemyError as exc:
            return store_down(request, exc)
        try:  # drains / cordons decided on it (firstfault.actions); a store not yet at 0002_actions has none
            actions = ActionLedger(store).for_verdict(int(vid)) if rec is not None else []
        except SQLAlchemyError as exc:
            log.warning("actions of verdict %s unavailable: %s", vid, exc)
            actions = []
        if rec is None:
            return page(request, "error.html", status=404, title="No such verdict",
                        message=f"verdict {vid} is not in the store")
        return verdict_view(request, rec, actions)

    def verdict_view(request: Request, rec: StoredVerdict, actions: list[Any], settled: int | None = None) -> Response:
        """The verdict page of a stored verdict, or of a provisional one (`settled`: the verdict that superseded it)."""
        v = rec.verdict
        return page(request, "verdict.html", rec=rec, v=v, causes=detail.causes(v), timeline=detail.timeline(v),
                    evidence=detail.evidence_rows(v), actions=actions, settled=settled)

    @router.get("/provisional/{pid}", include_in_schema=False, name="provisional_page")
    def provisional_page(request: Request, pid: str) -> Response:
        if not pid.isdigit() or len(pid) > 18:
            return page(request, "error.html", status=404, title="No such provisional verdict",
                        message=f"{pid!r} is not a provisional verdict id")
        try:
            store = store_provider()
            p = ProvisionalLedger(store).get(int(pid))
            actions = ActionLedger(store).for_provisional(int(pid)) if p is not None else []
        except SQLAlchemyError as exc:
            return store_down(request, exc)
        if p is None:
            return page(request, "error.html", status=404, title="No such provisional verdict",
                        message=f"provisional verdict {pid} is not in the store")
        rec = StoredVerdict(p.id, p.verdict, Enrichment(cluster=p.cluster or None), p.sent_at)
        return verdict_view(request, rec, actions, p.final_verdict_id)

    @router.get("/fleet", include_in_schema=False, name="fleet_page")
    def fleet_page(request: Request) -> Response:
        now = clock()
        try:
            p, _since, _until = validate_query(FleetParams, request, now)
        except BadParams as exc:
            return page(request, "fleet.html", status=422, error=exc.message, p=FleetParams(), report=None,
                        cause_domains=CAUSE_DOMAINS, default_domains=DEFAULT_DOMAINS)
        store = store_provider()
        try:
            report = fleet_report(store, p, now)
        except SQLAlchemyError as exc:
            return store_down(request, exc)
        return page(request, "fleet.html", p=p, report=report, error=None, cause_domains=CAUSE_DOMAINS,
                    default_domains=DEFAULT_DOMAINS)

    @router.get("/fleet/switches", include_in_schema=False, name="switches_page")
    def switches_page(request: Request) -> Response:
        """The fabric's switches ranked as the Fleet page ranks them, each with the ports and cables that carried
        the failures (from fabric sources: engine/fabric.py)."""
        now = clock()
        try:
            p, _since, _until = validate_query(FleetParams, request, now)
        except BadParams as exc:
            return page(request, "switches.html", status=422, error=exc.message, p=FleetParams(), report=None,
                        switches=[], cause_domains=CAUSE_DOMAINS, default_domains=DEFAULT_DOMAINS)
        store = store_provider()
        # Every port and cable of the listed switches, not only the fleet's top ones.
        wide = p.model_copy(update={"by": ["switch", "switch-port", "cable"], "limit": max(p.limit, SWITCH_PORTS)})
        try:
            report = fleet_report(store, wide, now)
        except SQLAlchemyError as exc:
            return store_down(request, exc)
        return page(request, "switches.html", p=p, report=report, switches=switch_groups(report, p.limit),
                    error=None, cause_domains=CAUSE_DOMAINS, default_domains=DEFAULT_DOMAINS)

    @router.get("/static/{name}", include_in_schema=False, name="dashboard_static")
    def static(name: str) -> Response:
        suffix = Path(name).suffix
        if "/" in name or name.startswith(".") or suffix not in STATIC_TYPES:
            return Response("not found", status_code=404, media_type="text/plain")
        res = resources.files("firstfault.dashboard").joinpath("static", name)
        if not res.is_file():
            return Response("not found", status_code=404, media_type="text/plain")
        return Response(res.read_bytes(), media_type=STATIC_TYPES[suffix],
                        headers={"Cache-Control": "no-cache"})

    # -- API --------------------------------------------------------------------

    @router.get("/v1/verdicts", response_model=VerdictPage, tags=["verdicts"], responses=ERRORS,
                openapi_extra=_query_doc(VerdictFilters), summary="Stored verdicts, newest analysis first")
    def list_verdicts(request: Request) -> Response:
        try:
            f, since, until = validate_query(VerdictFilters, request, clock())
        except BadParams as exc:
            return _problem(422, "invalid_request", exc.message, exc.detail)
        store = store_provider()
        try:
            rows, total = _page(store, f, since, until)
        except SQLAlchemyError as exc:
            return store_down(None, exc)
        body = VerdictPage(total=total, limit=f.limit, offset=f.offset, items=[VerdictItem.of(r) for r in rows])
        return JSONResponse(body.model_dump(mode="json"))

    @router.get("/v1/verdicts/{vid}", tags=["verdicts"],
                responses={200: described(VerdictRecord, "Successful Response"),
                           404: described(ProblemBody, "no verdict with this id"), **ERRORS},
                summary="One stored verdict (the document of docs/verdict.md) with its enrichment")
    def get_verdict(vid: str) -> Response:
        if not vid.isdigit() or len(vid) > 18:
            return _problem(404, "not_found", f"{vid!r} is not a verdict id")
        try:
            rec = store_provider().get_record(int(vid))
        except SQLAlchemyError as exc:
            return store_down(None, exc)
        if rec is None:
            return _problem(404, "not_found", f"verdict {vid} is not in the store")
        e = rec.enrichment
        body = VerdictRecord(id=rec.id, created_at=rec.created_at, cluster=e.cluster, owner=e.owner,
                             links=dict(e.links), previous_attempts=list(e.previous_attempts), verdict=rec.verdict)
        return _json(body)

    @router.get("/v1/provisional", tags=["verdicts"],
                responses={200: described(ProvisionalItem, "Successful Response", many=True), **ERRORS},
                summary="Provisional verdicts of attempts that still run (watch --follow), newest first")
    def list_provisional() -> Response:
        try:
            rows = ProvisionalLedger(store_provider()).running(200)
        except SQLAlchemyError as exc:
            return store_down(None, exc)
        return _json([ProvisionalItem.of(r) for r in rows])

    @router.get("/v1/provisional/{pid}", tags=["verdicts"],
                responses={200: described(ProvisionalRecordBody, "Successful Response"),
                           404: described(ProblemBody, "no provisional verdict with this id"), **ERRORS},
                summary="One provisional verdict, and the final verdict that superseded it (when there is one)")
    def get_provisional(pid: str) -> Response:
        if not pid.isdigit() or len(pid) > 18:
            return _problem(404, "not_found", f"{pid!r} is not a provisional verdict id")
        try:
            p = ProvisionalLedger(store_provider()).get(int(pid))
        except SQLAlchemyError as exc:
            return store_down(None, exc)
        if p is None:
            return _problem(404, "not_found", f"provisional verdict {pid} is not in the store")
        return _json(ProvisionalRecordBody(**ProvisionalItem.fields_of(p), verdict=p.verdict))

    @router.get("/v1/fleet", response_model=FleetReport, tags=["verdicts"], responses=ERRORS,
                openapi_extra=_query_doc(FleetParams),
                summary="Nodes, devices and ports most often where failures began, with repeat offenders")
    def get_fleet(request: Request) -> Response:
        now = clock()
        try:
            p, _since, _until = validate_query(FleetParams, request, now)
        except BadParams as exc:
            return _problem(422, "invalid_request", exc.message, exc.detail)
        store = store_provider()
        try:
            report = fleet_report(store, p, now)
        except SQLAlchemyError as exc:
            return store_down(None, exc)
        return JSONResponse(report.model_dump(mode="json"))

    return router
