"""The Blueprint's cluster.yaml: validated strictly, secrets never inline.

Unknown keys are errors that name their path and line. A secret (a token,
a password, a webhook key) is given as `*_file` (read from a file) or
`*_env` (read from an environment variable), never as a literal value, so a
config file can be committed and shared.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from firstfault import records, yamlio
from firstfault.bundle import SourceSpec
from firstfault.model import Domain, LineSource, Outcome


def _as_pydantic(type_: type[Any], read: Any = None) -> Any:
    """`type_`, a record (records.py), as the type of a field of these pydantic settings: validated by `read`
    (default: records.convert into it) and written by records.py, its JSON Schema written out in full (pydantic
    resolves every `$ref` among its own definitions); a problem is pydantic's own error at the key path."""
    from typing import Annotated

    from pydantic import PlainSerializer, PlainValidator
    from pydantic_core import InitErrorDetails, PydanticCustomError
    from pydantic_core import ValidationError as PydanticValidationError

    def check(value: Any) -> Any:
        if isinstance(value, type_):
            return value
        try:
            return read(value) if read is not None else records.convert(value, type_)
        except records.ValidationError as exc:  # as pydantic's own error, at the key path under the field
            loc, msg = records.location(exc)
            kind = "extra_forbidden" if msg == "unknown key" else "value_error"
            detail = InitErrorDetails(type=PydanticCustomError(kind, msg.replace("{", "{{").replace("}", "}}")),
                                      loc=loc, input=value)
            raise PydanticValidationError.from_exception_data(type_.__name__, [detail]) from None

    class Schema:
        def __get_pydantic_json_schema__(self, core: Any, handler: Any) -> dict[str, Any]:
            (out,), parts = records.schemas([type_], ref_template="{name}")

            def inline(node: Any) -> Any:
                if isinstance(node, dict):
                    return inline(parts[node["$ref"]]) if "$ref" in node else {k: inline(v) for k, v in node.items()}
                return [inline(v) for v in node] if isinstance(node, list) else node

            found: dict[str, Any] = inline(out)
            return found

    return Annotated[type_, PlainValidator(check), PlainSerializer(records.to_builtins), Schema()]


if TYPE_CHECKING:
    _Source = SourceSpec
else:  # the record, validated by records.py inside these pydantic settings
    _Source = _as_pydantic(SourceSpec)

# Which verdicts alert by default (firstfault.sinks.alertmanager keeps the same tuples).
ALERT_OUTCOMES: tuple[Outcome, ...] = ("failed", "timeout", "cancelled", "preempted", "node_fail", "out_of_memory",
                                       "unknown")
ALERT_DOMAINS: tuple[Domain, ...] = ("hardware", "network", "software", "storage", "infrastructure", "scheduler",
                                     "ambiguous")


class ConfigError(Exception):
    pass


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Secret(_Strict):
    """Where a secret lives: a file or an environment variable."""

    file: Path | None = None
    env: str | None = None

    @model_validator(mode="after")
    def _one(self) -> Secret:
        if (self.file is None) == (self.env is None):
            raise ValueError("give exactly one of `file` or `env`")
        return self

    def read(self) -> str:
        if self.file is not None:
            try:
                return self.file.read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise ConfigError(f"cannot read secret file {self.file}: {exc.strerror or exc}") from exc
        assert self.env is not None
        value = os.environ.get(self.env)
        if value is None:
            raise ConfigError(f"environment variable {self.env} (a secret) is not set")
        return value


class Auth(_Strict):
    bearer: Secret | None = None
    username: str | None = None
    password: Secret | None = None

    @model_validator(mode="after")
    def _pair(self) -> Auth:
        if (self.username is None) != (self.password is None):
            raise ValueError("basic auth needs both `username` and `password`")
        if self.bearer is not None and self.username is not None:
            raise ValueError("give bearer or basic auth, not both")
        return self


class Http(_Strict):
    """Options every remote call shares."""

    timeout: float = Field(default=30.0, gt=0)
    retries: int = Field(default=3, ge=0, le=10)
    concurrency: int = Field(default=8, ge=1, le=256)
    verify_tls: bool = True
    ca_file: Path | None = None
    auth: Auth | None = None


class SlurmConfig(_Strict):
    sacct: str = "sacct"
    scontrol: str = "scontrol"
    squeue: str = "squeue"  # watch --follow: the jobs running now
    cluster: str | None = None
    timezone: str | None = None  # zone of sacct's local times (default: this machine's)
    timeout: float = 30.0


class SlurmRestConfig(_Strict):
    """slurmrestd on its Unix socket (rest_auth/local); used for --job instead of sacct when set."""

    socket: Path
    api_version: str = "v0.0.38"
    cluster: str | None = None
    timeout: float = 30.0


class KueueConfig(_Strict):
    kubeconfig: Path | None = None
    context: str | None = None
    in_cluster: bool = False


class SchedulerConfig(_Strict):
    slurm: SlurmConfig | None = None
    slurmrest: SlurmRestConfig | None = None
    kueue: KueueConfig | None = None


class FilesConfig(_Strict):
    """Local files, like a bundle's sources; `{job}` in `root` and in source paths is the job id."""

    root: str
    sources: list[_Source]


class LokiConfig(_Strict):
    url: str
    queries: dict[LineSource, str]
    node_label: str = "host"
    rank_label: str | None = None
    limit: int = Field(default=5000, ge=1, le=100000)
    max_window: float = Field(default=3600.0, gt=0)  # seconds per query_range call
    http: Http = Field(default_factory=Http)


class K8sLogsConfig(_Strict):
    namespace: str
    # Which pods: a label selector; `{workload}` is replaced by the workload's name
    # (e.g. "batch.kubernetes.io/job-name={workload}").
    label_selector: str
    rank_env: str | None = "RANK"


class PrometheusConfig(_Strict):
    url: str
    node_label: str = "Hostname"
    step: float = Field(default=15.0, gt=0)
    margin: float = Field(default=600.0, ge=0)  # seconds before the window, for baselines
    http: Http = Field(default_factory=Http)


class LogsConfig(_Strict):
    files: FilesConfig | None = None
    loki: LokiConfig | None = None
    kubernetes: K8sLogsConfig | None = None


class MetricsConfig(_Strict):
    prometheus: PrometheusConfig | None = None


class FabricConfig(_Strict):
    """What the hosts' ports are cabled to, read once per attempt (docs/blueprint.md, "The fabric"): a file
    the site keeps, or the output of a command run then (an argument list, no shell)."""

    format: Literal["ibnetdiscover", "iblinkinfo", "fabric-csv"]
    file: Path | None = None
    command: list[str] | None = Field(default=None, min_length=1)
    timeout: float = Field(default=60.0, gt=0)

    @model_validator(mode="after")
    def _one(self) -> FabricConfig:
        if (self.file is None) == (self.command is None):
            raise ValueError("give exactly one of `file` or `command` (lldpctl's JSON is one file per host: "
                             "a `fabric` source with {node} under logs.files)")
        return self


class ServiceConfig(_Strict):
    url: str
    token: Secret | None = None
    timeout: float = 120.0


class StdoutOutput(_Strict):
    format: Literal["text", "markdown", "json"] = "text"


class DatabaseOutput(_Strict):
    url: str  # SQLAlchemy URL; put the password in `password`, not here
    password: Secret | None = None
    # Compressed bytes of replay evidence kept per verdict (firstfault rules replay); 0 keeps none.
    replay_evidence_max_bytes: int = Field(default=4 << 20, ge=0, le=1 << 30)


class WebhookOutput(_Strict):
    url: str
    secret: Secret
    dead_letter: Path
    timeout: float = 10.0
    retries: int = Field(default=5, ge=0, le=20)


class AlertmanagerOutput(_Strict):
    """POST verdicts as alerts to one Alertmanager (list each peer of an HA cluster; docs/alertmanager.md)."""

    url: str  # the Alertmanager's base URL (http://alertmanager:9093); alerts go to {url}/api/v2/alerts
    dashboard_url: str | None = None  # the dashboard's base URL, for the `dashboard` annotation
    outcomes: list[Outcome] = Field(default_factory=lambda: list(ALERT_OUTCOMES), min_length=1)
    domains: list[Domain] = Field(default_factory=lambda: list(ALERT_DOMAINS), min_length=1)
    alertname: str = Field(default="FirstfaultVerdict", min_length=1)
    # Provisional verdicts (watch --follow) alert under their own name, resolved when the final verdict lands.
    provisional_alertname: str = Field(default="FirstfaultProvisional", min_length=1)
    labels: dict[str, str] = Field(default_factory=dict)  # added to every alert (severity, team)
    resolve_after: float = Field(default=6 * 3600.0, gt=0)  # seconds an alert stays active after a send
    max_alerts: int = Field(default=32, ge=1, le=1000)  # per verdict (one per node of each cause)
    http: Http = Field(default_factory=lambda: Http(timeout=10.0))

    @model_validator(mode="after")
    def _labels(self) -> AlertmanagerOutput:
        from firstfault.sinks.alertmanager import LABEL_NAME, OWN_LABELS

        for k in self.labels:
            if not LABEL_NAME.match(k):
                raise ValueError(f"labels: {k!r} is not an Alertmanager label name ([a-zA-Z_][a-zA-Z0-9_]*)")
            if k in OWN_LABELS:
                raise ValueError(f"labels: {k!r} is set by firstfault itself")
        if self.provisional_alertname == self.alertname:
            raise ValueError("provisional_alertname must differ from alertname")
        return self


class OutputsConfig(_Strict):
    stdout: StdoutOutput | None = Field(default_factory=StdoutOutput)
    database: DatabaseOutput | None = None
    webhooks: list[WebhookOutput] = Field(default_factory=list)
    alertmanager: list[AlertmanagerOutput] = Field(default_factory=list)


class WatchConfig(_Strict):
    poll_interval: float = Field(default=60.0, gt=0)
    # Where the cursor and the processed marks live (default: outputs.database).
    state_url: str | None = None
    # Attempts of one pass settled at once, by that many threads (None: the default, 4). With no
    # `service:` (the embedded engine analyses in-process, CPU-bound) attempts go one at a time.
    concurrency: int | None = Field(default=None, ge=1, le=64)


class StaticAttempt(_Strict):
    """A running attempt to follow without a scheduler to ask (watch --follow --scheduler static)."""

    id: str = Field(min_length=1)
    start: str  # RFC 3339
    nodes: str | list[str]  # a Slurm hostlist (node-[01-04]) or a list
    ranks: dict[str, str | int | list[int]] | None = None
    name: str | None = None


class FollowConfig(_Strict):
    """`watch --follow`: attempts followed while they run (docs/blueprint.md, "watch --follow")."""

    interval: float = Field(default=2.0, gt=0)  # seconds between two reads of the followed evidence
    list_interval: float = Field(default=10.0, gt=0)  # seconds between asking the scheduler what runs
    metrics_interval: float = Field(default=15.0, gt=0)  # seconds between Prometheus instant queries
    loki_lag: float = Field(default=2.0, ge=0)  # seconds behind now a Loki read stops (late ingestion)
    resolve_every: float = Field(default=30.0, gt=0)  # seconds between resolving the file templates again
    max_attempts: int = Field(default=1000, ge=1, le=100000)  # attempts followed at once
    static: list[StaticAttempt] = Field(default_factory=list)


class DrainActionConfig(_Strict):
    """Slurm: `scontrol update nodename=N state=drain reason="firstfault: <category> <verdict id>"`."""

    dry_run: bool = True  # print and record what it would do; set false to drain
    scontrol: str = "scontrol"
    sinfo: str = "sinfo"
    timeout: float = Field(default=30.0, gt=0)


class CordonActionConfig(_Strict):
    """Kubernetes: spec.unschedulable plus a NoSchedule taint (client settings default to scheduler.kueue's)."""

    dry_run: bool = True
    kubeconfig: Path | None = None
    context: str | None = None
    in_cluster: bool | None = None
    taint_key: str = "firstfault.io/fault"
    pool_label: str | None = None  # bound the share per value of this node label (default: the whole cluster)
    timeout: float = Field(default=30.0, gt=0)


class JobActionConfig(_Strict):
    """Slurm, on a provisional verdict only: `scontrol requeue JOB` (or `scancel JOB`) once its cause's nodes
    are out of service, so that the job starts again without them."""

    dry_run: bool = True
    scontrol: str = "scontrol"
    scancel: str = "scancel"
    timeout: float = Field(default=30.0, gt=0)


class ActionsConfig(_Strict):
    """Recovery actions after the outputs (docs/actions.md); one policy for all of them."""

    categories: list[str] = Field(default_factory=lambda: ["gpu.*", "host.hardware", "network.link"])
    max_per_hour: int = Field(default=2, ge=0, le=10000)  # nodes per hour and cluster, per action
    max_share: float = Field(default=0.1, ge=0, le=1)  # of a partition / pool out of service, at most
    drain: DrainActionConfig | None = None
    cordon: CordonActionConfig | None = None
    # watch --follow: also act on provisional verdicts (drain / cordon the cause's nodes, then the job action).
    provisional: bool = False
    requeue: JobActionConfig | None = None
    cancel: JobActionConfig | None = None

    @model_validator(mode="after")
    def _safe(self) -> ActionsConfig:
        if self.requeue is not None and self.cancel is not None:
            raise ValueError("give requeue or cancel, not both: the job is either started again or ended")
        if (self.requeue is not None or self.cancel is not None) and not self.provisional:
            raise ValueError("requeue and cancel act on provisional verdicts: set provisional: true")
        from firstfault.actions.policy import forbidden_category

        if not self.categories:
            raise ValueError("categories: give at least one category (e.g. gpu.*)")
        for c in self.categories:
            if forbidden_category(c):
                raise ValueError(f"categories: {c!r} covers software or scheduler categories; "
                                 "no action is ever taken for those")
        return self


class BlueprintConfig(_Strict):
    cluster: str
    scheduler: SchedulerConfig = Field(default_factory=SchedulerConfig)
    logs: LogsConfig = Field(default_factory=LogsConfig)
    metrics: MetricsConfig = Field(default_factory=MetricsConfig)
    fabric: FabricConfig | None = None  # absent: no cable is known (a `fabric` source under logs.files also gives them)
    service: ServiceConfig | None = None  # absent: the embedded engine
    outputs: OutputsConfig = Field(default_factory=OutputsConfig)
    watch: WatchConfig = Field(default_factory=WatchConfig)
    follow: FollowConfig = Field(default_factory=FollowConfig)
    actions: ActionsConfig | None = None  # absent: nothing is ever drained or cordoned


def load_config(path: str | os.PathLike[str]) -> BlueprintConfig:
    return yamlio.load_model(Path(path), BlueprintConfig, ConfigError)
