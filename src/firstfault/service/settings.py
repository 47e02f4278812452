"""The Service's settings: flags over environment (FIRSTFAULT_*) over a YAML file over defaults.

The settings file is optional: `--config FILE` or FIRSTFAULT_CONFIG. An
unknown key anywhere is an error that names it, so a typo never silently
falls back to a default; a key given twice is an error naming both lines
(the file is read by firstfault's one YAML loader, yamlio), so a second
`tokens: []` can never switch authentication off.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    InitSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from firstfault import yamlio

Scope = Literal["analyze", "catalog"]
ALL_SCOPES: tuple[Scope, ...] = ("analyze", "catalog")


class SettingsError(Exception):
    """The settings are invalid; the message names the setting (and the file)."""


class Token(BaseModel):
    """A bearer token one Blueprint presents; `name` is what the logs show instead of it."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=64)
    secret: SecretStr = Field(min_length=16)
    scopes: list[Scope] = Field(default_factory=lambda: list(ALL_SCOPES))


class ServiceSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="FIRSTFAULT_", extra="forbid", validate_default=True)

    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)
    workers: int = Field(default=1, ge=1, le=64, description="uvicorn worker processes")
    rules: Path | None = Field(default=None, description="catalog directory; default: the shipped catalog")
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    db: str | None = Field(
        default=None,
        description="SQLAlchemy URL of the verdict store (sqlite:///... or postgresql+psycopg://...): "
        "serves the dashboard and the read-only /v1/verdicts and /v1/fleet API",
    )

    # Limits. Bodies are counted as they arrive, decompressed bytes as they are inflated.
    max_body_bytes: int = Field(default=512 << 20, ge=1)
    max_decompressed_bytes: int = Field(default=4 << 30, ge=1)
    max_record_bytes: int = Field(default=64 << 20, ge=1, description="one NDJSON record (line)")
    max_archive_members: int = Field(default=200_000, ge=1)
    max_json_bytes: int = Field(default=64 << 20, ge=1,
                                description="the JSON form, inflated (it is parsed whole; larger: NDJSON)")
    max_connections: int = Field(default=256, ge=1,
                                 description="connections open at once (per worker); beyond: 503 and closed")
    header_timeout: float = Field(default=10.0, gt=0,
                                  description="seconds for a request's head (line and headers) to arrive; beyond: 408")
    max_uploads: int = Field(default=64, ge=1, description="request bodies being received at once; beyond: 503")
    body_timeout: float = Field(default=120.0, gt=0,
                                description="seconds to receive a whole body (before a slot is taken); beyond: 408")
    max_concurrent: int = Field(default=2, ge=1, description="analyses running at once (per worker)")
    max_queue: int = Field(default=8, ge=0, description="analyses waiting for a slot; beyond: 503")
    analysis_timeout: float = Field(default=300.0, gt=0, description="seconds on a slot: inflating, parsing, analysis")
    retry_after: int = Field(default=5, ge=1, description="seconds, the Retry-After of a 503")

    # Bearer tokens; none configured = no authentication. From the environment:
    # a JSON list of {name, secret, scopes} or of plain secrets, or comma-separated secrets.
    tokens: Annotated[list[Token], NoDecode] = Field(default_factory=list)

    @field_validator("tokens", mode="before")
    @classmethod
    def _tokens(cls, v: Any) -> Any:
        import json

        if isinstance(v, str):
            v = v.strip()
            v = json.loads(v) if v.startswith("[") else [s.strip() for s in v.split(",") if s.strip()]
        if isinstance(v, list):
            return [{"name": f"token-{i + 1}", "secret": t} if isinstance(t, str) else t for i, t in enumerate(v)]
        return v


def load_settings(config: Path | str | None = None, **flags: Any) -> ServiceSettings:
    """Settings from flags (non-None values), FIRSTFAULT_* variables and the YAML file.

    Raises SettingsError naming the setting and, for the file, the file.
    """
    path = config if config is not None else os.environ.get("FIRSTFAULT_CONFIG") or None
    if path is not None and not Path(path).is_file():
        raise SettingsError(f"{path}: settings file not found")
    given = {k: v for k, v in flags.items() if v is not None}
    from_file: dict[str, Any] = {}
    if path is not None:
        try:
            doc = yamlio.load_file(Path(path), SettingsError)
        except SettingsError as exc:
            raise SettingsError(f"cannot read settings: {exc}") from exc
        if doc is not None and not isinstance(doc, dict):
            raise SettingsError(f"{path}: cannot read settings: expected a mapping at the top level")
        from_file = doc or {}

    class _Sourced(ServiceSettings):
        @classmethod
        def settings_customise_sources(
            cls,
            settings_cls: type[BaseSettings],
            init_settings: PydanticBaseSettingsSource,
            env_settings: PydanticBaseSettingsSource,
            dotenv_settings: PydanticBaseSettingsSource,
            file_secret_settings: PydanticBaseSettingsSource,
        ) -> tuple[PydanticBaseSettingsSource, ...]:
            return init_settings, env_settings, InitSettingsSource(settings_cls, init_kwargs=from_file)

    try:
        built = _Sourced(**given)
    except ValidationError as exc:
        where = f" (flags, FIRSTFAULT_* environment or {path})" if path else " (flags or FIRSTFAULT_* environment)"
        problems = [
            f"{'.'.join(str(p) for p in e['loc']) or '(root)'}: "
            f"{'unknown setting' if e['type'] == 'extra_forbidden' else e['msg']}"
            for e in exc.errors()
        ]
        raise SettingsError("invalid settings" + where + ":\n" + "\n".join(problems)) from exc
    return ServiceSettings.model_construct(**{k: getattr(built, k) for k in ServiceSettings.model_fields})
