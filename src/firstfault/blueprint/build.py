"""From a validated cluster.yaml to the connectors, sinks and pipeline it names."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from firstfault import records
from firstfault.blueprint.config import AlertmanagerOutput, Auth, BlueprintConfig, ConfigError, Http
from firstfault.blueprint.pipeline import Pipeline, Progress
from firstfault.collect.base import LogConnector, MetricConnector
from firstfault.identify.base import AttemptSource, Identified, IdentifyError, RunningSource
from firstfault.sinks.base import Sink

if TYPE_CHECKING:
    from firstfault.actions.actor import Actor
    from firstfault.collect.follow import Follower
    from firstfault.collect.http import HttpOptions
    from firstfault.store.repo import VerdictStore


def http_options(h: Http) -> HttpOptions:
    from firstfault.collect.http import BasicAuth, BearerAuth, HttpOptions

    auth: BearerAuth | BasicAuth | None = None
    a: Auth | None = h.auth
    if a is not None and a.bearer is not None:
        auth = BearerAuth(a.bearer.read())
    elif a is not None and a.username is not None and a.password is not None:
        auth = BasicAuth(a.username, a.password.read())
    return HttpOptions(timeout=h.timeout, retries=h.retries, concurrency=h.concurrency, verify=h.verify_tls,
                       ca_file=str(h.ca_file) if h.ca_file else None, auth=auth)


def _kube_client(kubeconfig: Path | None, context: str | None, in_cluster: bool) -> Any:
    from kubernetes import client, config

    if in_cluster:
        config.load_incluster_config()  # type: ignore[no-untyped-call]
        return client.ApiClient()
    cfg = client.Configuration()
    config.load_kube_config(  # type: ignore[no-untyped-call]
        config_file=str(kubeconfig) if kubeconfig else None, context=context, client_configuration=cfg)
    return client.ApiClient(cfg)


def context_connector(cfg: BlueprintConfig, kind: str, static: dict[str, Any] | None = None) -> AttemptSource:
    """`kind` is slurm, kueue or static (with `static` holding start/end/nodes)."""
    if kind == "static":
        from firstfault.identify.static import StaticAttempts

        return StaticAttempts(**(static or {}))
    if kind == "slurm":
        if cfg.scheduler.slurmrest is not None:
            from firstfault.identify.slurmrest import SlurmRestAttempts

            r = cfg.scheduler.slurmrest
            return SlurmRestAttempts(r.socket, api_version=r.api_version, timeout=r.timeout, cluster=r.cluster)
        from firstfault.identify.slurm import SlurmAttempts

        s = cfg.scheduler.slurm
        if s is None:
            raise ConfigError("--job needs scheduler.slurm (or scheduler.slurmrest) in the config")
        return SlurmAttempts(sacct=s.sacct, scontrol=s.scontrol, squeue=s.squeue, timeout=s.timeout, cluster=s.cluster,
                            tz=s.timezone)
    if kind == "kueue":
        from firstfault.identify.kueue import KueueAttempts

        k = cfg.scheduler.kueue
        if k is None:
            raise ConfigError("--workload needs scheduler.kueue in the config")
        return KueueAttempts(_kube_client(k.kubeconfig, k.context, k.in_cluster))
    raise ConfigError(f"unknown scheduler kind {kind!r}")


def log_connectors(cfg: BlueprintConfig, job_id: str | None = None) -> list[LogConnector]:
    out: list[LogConnector] = []
    logs = cfg.logs
    if logs.files is not None:
        from firstfault.collect.files import FilesConnector

        job = job_id or ""
        root = logs.files.root.replace("{job}", job)
        sources = [records.replace(s, path=s.path.replace("{job}", job)) for s in logs.files.sources]
        out.append(FilesConnector(sources, Path(root)))
    if logs.loki is not None:
        from firstfault.collect.loki import LokiConnector

        lk = logs.loki
        queries = {str(k): v for k, v in lk.queries.items()}
        out.append(LokiConnector(lk.url, queries, node_label=lk.node_label, rank_label=lk.rank_label,
                                 limit=lk.limit, max_window=timedelta(seconds=lk.max_window),
                                 http=http_options(lk.http)))
    if logs.kubernetes is not None:
        from firstfault.collect.k8slogs import K8sPodLogsConnector

        kk = logs.kubernetes
        k = cfg.scheduler.kueue
        api = _kube_client(k.kubeconfig if k else None, k.context if k else None, bool(k and k.in_cluster))
        name = (job_id or "").split("/")[-1]
        selector = kk.label_selector.replace("{workload}", name)
        try:
            out.append(K8sPodLogsConnector(api, kk.namespace, label_selector=selector, rank_env=kk.rank_env))
        except ValueError as exc:
            raise ConfigError(f"logs.kubernetes: {exc}") from exc
    if cfg.fabric is not None:
        from firstfault.collect.fabric import FabricConnector

        fb = cfg.fabric
        out.append(FabricConnector(fb.format, file=fb.file, command=fb.command, timeout=fb.timeout))
    return out


def metric_connectors(cfg: BlueprintConfig) -> list[MetricConnector]:
    out: list[MetricConnector] = []
    p = cfg.metrics.prometheus
    if p is not None:
        from firstfault.collect.promql import PromQLConnector

        out.append(PromQLConnector(p.url, node_label=p.node_label, step=timedelta(seconds=p.step),
                                   margin=timedelta(seconds=p.margin), http=http_options(p.http)))
    return out


def database_url(cfg: BlueprintConfig) -> str | None:
    db = cfg.outputs.database
    if db is None:
        return None
    if db.password is None:
        return db.url
    from sqlalchemy.engine import make_url

    return make_url(db.url).set(password=db.password.read()).render_as_string(hide_password=False)


def sinks(cfg: BlueprintConfig, *, stdout_format: str | None = None, with_database: bool = True,
          stdout_width: int | None = None, stdout_verbose: bool = False) -> list[Sink]:
    out: list[Sink] = []
    fmt = stdout_format or (cfg.outputs.stdout.format if cfg.outputs.stdout else None)
    if fmt is not None:
        from firstfault.sinks.stdout import StdoutSink

        out.append(StdoutSink(format=fmt, width=stdout_width, verbose=stdout_verbose))
    url = database_url(cfg)
    if url and with_database:
        from firstfault.sinks.database import DatabaseSink

        assert cfg.outputs.database is not None
        out.append(DatabaseSink(url, replay_cap=cfg.outputs.database.replay_evidence_max_bytes))
    for hook in cfg.outputs.webhooks:
        from firstfault.sinks.webhook import WebhookSink

        out.append(WebhookSink(hook.url, hook.secret.read().encode(), timeout=hook.timeout, retries=hook.retries,
                               dead_letter_path=hook.dead_letter))
    for am in cfg.outputs.alertmanager:
        out.append(alertmanager_sink(am))
    return out


def alertmanager_sink(am: AlertmanagerOutput) -> Sink:
    from firstfault.sinks.alertmanager import AlertmanagerSink

    h = am.http
    headers: dict[str, str] = {}
    if h.auth is not None and h.auth.bearer is not None:
        headers["Authorization"] = f"Bearer {h.auth.bearer.read()}"
    elif h.auth is not None and h.auth.username is not None and h.auth.password is not None:
        import base64

        pair = f"{h.auth.username}:{h.auth.password.read()}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
    verify: bool | str = str(h.ca_file) if h.ca_file and h.verify_tls else h.verify_tls
    return AlertmanagerSink(am.url, dashboard_url=am.dashboard_url, outcomes=am.outcomes, domains=am.domains,
                            alertname=am.alertname, labels=am.labels, resolve_after=am.resolve_after,
                            max_alerts=am.max_alerts, timeout=h.timeout, retries=h.retries, headers=headers,
                            verify=verify, provisional_alertname=am.provisional_alertname)


def service_client(cfg: BlueprintConfig) -> Any:
    if cfg.service is None:
        return None
    from firstfault.client import FirstfaultClient

    token = cfg.service.token.read() if cfg.service.token else None
    return FirstfaultClient(cfg.service.url, token, timeout=cfg.service.timeout)


def actors(cfg: BlueprintConfig, store_url: str | None, *, log: Callable[[str], None] | None = None,
           store: VerdictStore | None = None) -> list[Actor]:
    """The recovery actions cluster.yaml turns on (docs/actions.md), deciding against the verdict store
    (`store`, an open one at `store_url`, to share its engine instead of opening one per verdict)."""
    acts = cfg.actions
    if acts is None or (acts.drain is None and acts.cordon is None):
        return []
    if not store_url:
        raise ConfigError("actions need the verdict store (outputs.database): it holds the ledger that "
                          "keeps the hourly limit and records every decision")
    from firstfault.actions.actor import Actor
    from firstfault.actions.policy import Policy

    out: list[Actor] = []
    where: dict[str, Any] = {"store": store} if store is not None else {"store_url": store_url}

    def policy(dry_run: bool) -> Policy:
        return Policy(categories=tuple(acts.categories), max_per_hour=acts.max_per_hour, max_share=acts.max_share,
                      dry_run=dry_run)

    if acts.drain is not None:
        from firstfault.actions.slurm import SlurmDrain

        d = acts.drain
        out.append(Actor(SlurmDrain(scontrol=d.scontrol, sinfo=d.sinfo, timeout=d.timeout), policy(d.dry_run),
                         **where, cluster=cfg.cluster, log=log))
    if acts.cordon is not None:
        from firstfault.actions.kube import KubeCordon

        c, k = acts.cordon, cfg.scheduler.kueue
        own = c.kubeconfig is not None or c.context is not None or c.in_cluster is not None
        api = (_kube_client(c.kubeconfig, c.context, bool(c.in_cluster)) if own or k is None
               else _kube_client(k.kubeconfig, k.context, k.in_cluster))
        out.append(Actor(KubeCordon(api, taint_key=c.taint_key, pool_label=c.pool_label, timeout=c.timeout),
                         policy(c.dry_run), **where, cluster=cfg.cluster, log=log))
    return out


def running_source(cfg: BlueprintConfig, kind: str) -> RunningSource:
    """What `watch --follow` asks which attempts run: the scheduler's connector (slurm, kueue), or the
    attempts `follow.static` lists (static)."""
    if kind == "static":
        from firstfault.identify.static import StaticAttempts, StaticList

        if not cfg.follow.static:
            raise ConfigError("watch --follow --scheduler static needs follow.static: the running attempts")
        try:
            return StaticList([StaticAttempts(id=a.id, name=a.name, start=a.start, end=None, nodes=a.nodes,
                                             ranks=a.ranks) for a in cfg.follow.static])
        except IdentifyError as exc:
            raise ConfigError(f"follow.static: {exc}") from exc
    conn = context_connector(cfg, kind)
    if not hasattr(conn, "running"):
        raise ConfigError(f"the {kind} connector cannot list running attempts")
    return conn  # type: ignore[return-value]


def followers(cfg: BlueprintConfig, identified: Identified, cursor: dict[str, Any] | None) -> list[Follower]:
    """The followers of one running attempt: one per configured log and metric source (collect/follow.py),
    judging with the embedded catalog's prefilter and metric names."""
    from firstfault.bundle import Context
    from firstfault.collect.files import FilesConnector
    from firstfault.collect.follow import FileFollow, LokiFollow, PodLogFollow, PromFollow
    from firstfault.collect.scan import prefilter_words
    from firstfault.extract.metric_conditions import metric_names

    wl = identified.workload
    ctx = Context.from_spec(wl)
    words = prefilter_words()
    cur = cursor or {}
    f = cfg.follow
    out: list[Follower] = []
    for conn in log_connectors(cfg, None if wl.scheduler == "static" else wl.id):
        if isinstance(conn, FilesConnector):
            out.append(FileFollow(conn.sources, conn.root, ctx, words, cursor=cur.get("files"),
                                  resolve_every=f.resolve_every))
        elif conn.name == "loki":
            out.append(LokiFollow(conn, ctx, words, lag=timedelta(seconds=f.loki_lag)))
        else:
            out.append(PodLogFollow(conn, ctx, words, relist_every=f.resolve_every))
    for mconn in metric_connectors(cfg):
        out.append(PromFollow(mconn, ctx, metric_names(), interval=f.metrics_interval))
    return out


def provisional_actors(cfg: BlueprintConfig, store: VerdictStore, *, log: Callable[[str], None] | None = None
                       ) -> list[Any]:
    """The actions `watch --follow` takes on provisional verdicts (actions.provisional: true): drain / cordon as
    configured, then the Slurm job's requeue or cancel (docs/actions.md)."""
    acts = cfg.actions
    if acts is None or not acts.provisional:
        return []
    out: list[Any] = list(actors(cfg, store.engine.url.render_as_string(hide_password=True), store=store, log=log))
    job = acts.requeue or acts.cancel
    if job is not None:
        from firstfault.actions.actor import JobActor
        from firstfault.actions.policy import Policy
        from firstfault.actions.slurm import SlurmDrain, SlurmJob

        kind = "requeue" if acts.requeue is not None else "cancel"
        d = acts.drain
        nodes = SlurmDrain(scontrol=d.scontrol if d else "scontrol", sinfo=d.sinfo if d else "sinfo",
                           timeout=job.timeout)
        policy = Policy(categories=tuple(acts.categories), max_per_hour=acts.max_per_hour, max_share=acts.max_share,
                        dry_run=job.dry_run)
        out.append(JobActor(SlurmJob(kind, scontrol=job.scontrol, scancel=job.scancel, timeout=job.timeout), policy,
                            nodes, store=store, cluster=cfg.cluster, log=log))
    return out


def pipeline(cfg: BlueprintConfig, context: AttemptSource, *, job_id: str | None = None,
             output_sinks: list[Sink] | None = None, progress: Progress | None = None,
             actions: list[Actor] | None = None, client: Any = None) -> Pipeline:
    """`client`: the Service client to analyse on (default: a new one from `service:`, none without it)."""
    return Pipeline(
        context=context,
        logs=log_connectors(cfg, job_id),
        metrics=metric_connectors(cfg),
        sinks=output_sinks if output_sinks is not None else sinks(cfg),
        cluster=cfg.cluster,
        client=client if client is not None else service_client(cfg),
        progress=progress,
        actions=actions if actions is not None else actors(cfg, database_url(cfg)),
    )
