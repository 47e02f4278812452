"""Filter parameters of the dashboard pages and the read-only API, validated once.

The same models serve the HTML pages, GET /v1/verdicts, GET /v1/fleet and
`firstfault fleet`, so a link copied from the browser means the same thing
to the API. Bad values are a 422 naming the parameter, never a 500.

Times (`since`, `until`) are either a duration back from now ("90m", "24h",
"7d", "2w") or an ISO 8601 date or date-time ("2026-11-02",
"2026-11-02T10:00:00Z"; no zone means UTC). `since` is inclusive, `until`
exclusive; the verdict list's apply to when a verdict was analysed, the
fleet's to when the attempt failed (its window's end).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

from firstfault.model import CAUSE_DOMAINS, Domain, Outcome

Clock = Callable[[], datetime]

OUTCOMES: tuple[str, ...] = get_args(Outcome)
DOMAINS: tuple[str, ...] = get_args(Domain)
_DURATION = re.compile(r"^(\d{1,6})([smhdw])$")
MAX_SPAN = timedelta(days=36_500)
# Far enough for any real verdict, near enough that "since - 1 day" and bucket arithmetic cannot overflow.
MIN_TIME = datetime(1970, 1, 1, tzinfo=UTC)
MAX_TIME = datetime(2999, 12, 31, tzinfo=UTC)
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
CATEGORY = r"^[a-z0-9_]+(\.[a-z0-9_]+)*$"
# Node names: hostnames, Kubernetes node names, anything without spaces or control characters.
NODE = r"^[^\s\x00-\x1f]{1,253}$"


def parse_when(value: str) -> timedelta | datetime:
    """A duration (back from now) or an absolute UTC time; ValueError with the accepted forms."""
    s = value.strip()
    if m := _DURATION.match(s):
        span = timedelta(**{_UNITS[m.group(2)]: int(m.group(1))})
        if span > MAX_SPAN:
            raise ValueError(f"{value!r} reaches back more than {MAX_SPAN.days} days")
        return span
    try:
        d = datetime.fromisoformat(s.replace("Z", "+00:00") if s.endswith("Z") else s)
        d = d.replace(tzinfo=UTC) if d.tzinfo is None else d.astimezone(UTC)
    except (ValueError, OverflowError):
        raise ValueError(
            f"{value!r} is not a time: use a duration back from now (90m, 24h, 7d, 2w) or an ISO 8601 date or "
            "date-time (2026-11-02, 2026-11-02T10:00:00Z)"
        ) from None
    if not MIN_TIME <= d <= MAX_TIME:
        raise ValueError(f"{value!r} is outside {MIN_TIME.year}-{MAX_TIME.year}")
    return d


def resolve(value: str | None, now: datetime) -> datetime | None:
    if value is None:
        return None
    w = parse_when(value)
    return now - w if isinstance(w, timedelta) else w


def _blank_to_none(v: Any) -> Any:
    # HTML forms send every field, empty ones as "": an empty filter is no filter.
    if isinstance(v, str) and not v.strip():
        return None
    if isinstance(v, list):
        return [x for x in v if not (isinstance(x, str) and not x.strip())]
    return v


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)
    until_is_now: ClassVar[bool] = False  # an open window ends now (the fleet) or is open (the list)

    @field_validator("*", mode="before")
    @classmethod
    def _blank(cls, v: Any) -> Any:
        return _blank_to_none(v)

    @field_validator("since", "until", check_fields=False)
    @classmethod
    def _time(cls, v: str | None) -> str | None:
        if v is not None:
            parse_when(v)
        return v

    def window(self, now: datetime) -> tuple[datetime | None, datetime | None]:
        """(since, until) as UTC datetimes; ValueError when since is not before until."""
        since = resolve(getattr(self, "since", None), now)
        until = resolve(getattr(self, "until", None), now)
        if until is None and self.until_is_now:
            until = now
        if since is not None and until is not None and since >= until:
            raise ValueError("since must be before until")
        return since, until


class VerdictFilters(_Params):
    """Filters of the verdict list (GET /v1/verdicts, /verdicts)."""

    outcome: list[Outcome] = Field(default_factory=list, description="one or more outcomes")
    domain: list[Domain] = Field(default_factory=list, description="one or more attributed domains")
    category: Annotated[str | None, Field(pattern=CATEGORY, max_length=200)] = Field(
        default=None, description="dotted category prefix over root cause and candidates (gpu.nvlink)")
    node: Annotated[str | None, Field(pattern=NODE)] = Field(default=None, description="an affected node")
    since: str | None = Field(default=None, description="inclusive: 7d, 24h or an ISO 8601 time")
    until: str | None = Field(default=None, description="exclusive: 7d, 24h or an ISO 8601 time")
    limit: int = Field(default=50, ge=1, le=500)
    offset: int = Field(default=0, ge=0, le=10_000_000)

    def query(self, **changes: Any) -> str:
        """This filter set as a URL query string (for shareable links and paging)."""
        from urllib.parse import urlencode

        data = self.model_dump() | changes
        pairs: list[tuple[str, str]] = []
        for k, v in data.items():
            default = type(self).model_fields[k].get_default(call_default_factory=True)
            if v is None or v == default:
                continue
            pairs += [(k, str(x)) for x in v] if isinstance(v, list) else [(k, str(v))]
        return urlencode(pairs)


CauseDomain = Annotated[str, Field(pattern="^(" + "|".join(CAUSE_DOMAINS) + ")$")]
# What a fleet table ranks (`--by` / `by=`), and the report's table of each.
FleetBy = Literal["node", "device", "host-port", "switch-port", "switch", "cable"]
BY_TABLE: dict[str, str] = {"node": "nodes", "device": "devices", "host-port": "host_ports",
                            "switch-port": "switch_ports", "switch": "switches", "cable": "cables"}


class FleetParams(_Params):
    """The fleet window (GET /v1/fleet, /fleet, `firstfault fleet`)."""

    since: str = Field(default="30d", description="inclusive: 7d, 24h or an ISO 8601 time")
    until: str | None = Field(default=None, description="exclusive; default now")
    domain: list[CauseDomain] = Field(
        default_factory=list, description="cause domains that count; default hardware, network, infrastructure")
    limit: int = Field(default=20, ge=1, le=1000, description="rows per table")
    cluster: list[Annotated[str, Field(max_length=253)]] = Field(
        default_factory=list, description="clusters that count (the Blueprint's cluster name); default all")
    by: list[FleetBy] = Field(
        default_factory=list, description="the tables to rank: node, device, host-port, switch-port, switch, "
                                          "cable (repeat); default all")

    until_is_now: ClassVar[bool] = True

    def tables(self) -> list[str]:
        """The report's tables these parameters ask for, in the report's order (fleet.KINDS)."""
        wanted = {BY_TABLE[b] for b in self.by}
        return [k for k in BY_TABLE.values() if not wanted or k in wanted]

    def span(self, now: datetime) -> tuple[datetime, datetime]:
        since, until = self.window(now)
        assert since is not None and until is not None  # since has a default; until defaults to now
        return since, until

    @field_validator("since", mode="before")
    @classmethod
    def _since_default(cls, v: Any) -> Any:
        return "30d" if v is None or (isinstance(v, str) and not v.strip()) else v
