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
from typing import Annotated, Optional

import typer


def _err(msg: str) -> None:
    typer.echo(f"error: {msg}", err=True)


def serve(
    host: Annotated[Optional[str], typer.Option(help="Address to listen on [default: 127.0.0.1].")] = None,  # noqa: UP045
    port: Annotated[Optional[int], typer.Option(help="Port [default: 8080].")] = None,  # noqa: UP045
    workers: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option(help="Worker processes, each with the same catalog and its own limits; "
                          "one /metrics view over all [default: 1]."),
    ] = None,
    rules: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--rules", help="Catalog directory (catalog.yaml + rules/); default: the shipped catalog."),
    ] = None,
    config: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--config", help="YAML settings file (also FIRSTFAULT_CONFIG)."),
    ] = None,
    max_body_bytes: Annotated[Optional[int], typer.Option(help="Largest request body.")] = None,  # noqa: UP045
    max_concurrent: Annotated[Optional[int], typer.Option(help="Analyses at once per worker.")] = None,  # noqa: UP045
    max_queue: Annotated[Optional[int], typer.Option(help="Analyses waiting; beyond: 503.")] = None,  # noqa: UP045
    analysis_timeout: Annotated[Optional[float], typer.Option(help="Seconds per analysis; beyond: 504.")] = None,  # noqa: UP045
    log_level: Annotated[Optional[str], typer.Option(help="debug, info, warning or error.")] = None,  # noqa: UP045
    db: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--db", help="Verdict store URL (sqlite:///v.db, postgresql+psycopg://...): serve the dashboard."),
    ] = None,
) -> None:
    """Run the firstfault Service (HTTP API, docs at /docs)."""
    from firstfault.engine.catalog import CatalogError
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
        _err(str(exc))
        raise typer.Exit(2) from exc
    try:
        cat = load_service_catalog(settings)
    except CatalogError as exc:
        _err("the rule catalog is invalid:\n" + "\n".join(exc.problems))
        raise typer.Exit(2) from exc
    typer.echo(f"catalog {cat.version}: {len(cat.rules)} rules (sha256 {cat.sha256})", err=True)
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
            typer.echo(f"{settings.workers} workers; metrics of all of them in {metrics_dir}", err=True)
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




if __name__ == "__main__":
    typer.run(serve)
