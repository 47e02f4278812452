"""`firstfault serve`: the Service under uvicorn.

Flags win over FIRSTFAULT_* variables, which win over the settings file.
The catalog is loaded and validated before the server starts: a bad
catalog stops the start with its file:line problems (exit 2). Tokens are
deliberately not a flag (a command line is visible to every user of the
machine): set FIRSTFAULT_TOKENS or put them in the settings file.
"""

from __future__ import annotations

import os
from pathlib import Path

import click

from firstfault.cli.base import PATH, command, fail, rules_option


@command()
@click.option("--host", help="Address to listen on [default: 127.0.0.1].")
@click.option("--port", type=int, help="Port [default: 8080].")
@click.option("--workers", type=int, help="Worker processes, each with the same catalog and its own limits; "
                                          "one /metrics view over all [default: 1].")
@rules_option
@click.option("--config", type=PATH, help="YAML settings file (also FIRSTFAULT_CONFIG).")
@click.option("--max-body-bytes", type=int, help="Largest request body.")
@click.option("--max-concurrent", type=int, help="Analyses at once per worker.")
@click.option("--max-queue", type=int, help="Analyses waiting; beyond: 503.")
@click.option("--analysis-timeout", type=float, help="Seconds per analysis; beyond: 504.")
@click.option("--log-level", help="debug, info, warning or error.")
@click.option("--db", help="Verdict store URL (sqlite:///v.db, postgresql+psycopg://...): serve the dashboard.")
def serve(host: str | None, port: int | None, workers: int | None, rules: Path | None, config: Path | None,
          max_body_bytes: int | None, max_concurrent: int | None, max_queue: int | None,
          analysis_timeout: float | None, log_level: str | None, db: str | None) -> None:
    """Run the firstfault Service (HTTP API, docs at /docs)."""
    from firstfault.engine.loader import CatalogError
    from firstfault.service.app import load_service_catalog
    from firstfault.service.settings import SettingsError, load_settings

    flags = {
        "host": host, "port": port, "workers": workers, "rules": rules, "max_body_bytes": max_body_bytes,
        "max_concurrent": max_concurrent, "max_queue": max_queue, "analysis_timeout": analysis_timeout,
        "log_level": log_level, "db": db,
    }
    try:
        settings = load_settings(config, **flags)
    except SettingsError as exc:
        raise fail(str(exc)) from exc
    try:
        cat = load_service_catalog(settings)
    except CatalogError as exc:
        raise fail("the rule catalog is invalid:\n" + "\n".join(exc.problems)) from exc
    click.echo(f"catalog {cat.version}: {len(cat.rules)} rules (sha256 {cat.sha256})", err=True)
    # Worker processes rebuild the settings from the environment: hand the flags down that way.
    if config is not None:
        os.environ["FIRSTFAULT_CONFIG"] = str(config)
    for key, value in flags.items():
        if value is not None:
            os.environ[f"FIRSTFAULT_{key.upper()}"] = str(value)
    import uvicorn

    from firstfault.service.workers import supervisor_env

    with supervisor_env(cat.sha256, settings.workers) as metrics_dir:
        if metrics_dir is not None:
            click.echo(f"{settings.workers} workers; metrics of all of them in {metrics_dir}", err=True)
        uvicorn.run(
            "firstfault.service.app:create_app_from_env",
            factory=True,
            host=settings.host,
            port=settings.port,
            workers=settings.workers,
            access_log=False,  # the app logs one structured line per request itself
            log_level=settings.log_level,
            timeout_graceful_shutdown=30,
            # h11 with a header timeout, a header size limit and a connection cap (service/protocol.py)
            http="firstfault.service.protocol:ServiceProtocol",
        )
