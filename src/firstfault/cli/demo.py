"""`firstfault demo`: the shipped sample bundles (examples/ and, in a source checkout, tests/scenarios/)
analysed into a local SQLite file, then the Service with the dashboard on 127.0.0.1, its URL printed.
No network is used.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from firstfault.cli.base import PATH, command, err, fail

if TYPE_CHECKING:
    from fastapi import FastAPI


@command()
@click.option("--db", type=PATH, default=Path("firstfault-demo.db"), help="SQLite file the samples are analysed into.")
@click.option("--host", default="127.0.0.1", help="Address to listen on.")
@click.option("--port", type=int, default=8080, help="Port (0: any free port).")
@click.option("--samples", type=PATH, multiple=True, help="Bundle directory, or a directory of bundles (repeat); "
                                                          "default examples/ and tests/scenarios/ of the checkout.")
@click.option("--reset/--no-reset", default=False, help="Start from an empty database file.")
def demo(db: Path, host: str, port: int, samples: tuple[Path, ...], reset: bool) -> None:
    """Analyse the shipped samples into a local SQLite store and serve the dashboard on it."""
    bundles = sample_dirs(list(samples) if samples else None)
    if not bundles:
        raise fail("no sample bundles found: run from the firstfault checkout or pass --samples DIR")
    db = db.resolve()
    if reset:
        for suffix in ("", "-wal", "-shm"):
            Path(str(db) + suffix).unlink(missing_ok=True)
    url = f"sqlite:///{db}"
    click.echo(f"analysing {len(bundles)} sample bundle(s) into {db}", err=True)
    n = load_samples(url, bundles)
    if port == 0:
        port = free_port(host)
    import uvicorn

    app = demo_app(url)
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"{n} verdict(s) stored. Dashboard: http://{shown}:{port}/   (Ctrl-C stops it)")
    sys.stdout.flush()
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)


def sample_dirs(roots: list[Path] | None = None) -> list[Path]:
    """Bundle directories under examples/ and tests/scenarios/ of the checkout (or the given roots)."""
    if not roots:
        here = Path(__file__).resolve()
        for base in (Path.cwd(), *here.parents):
            if (base / "examples").is_dir():
                roots = [base / "examples", base / "tests" / "scenarios"]
                break
        else:
            return []
    found: list[Path] = []
    for root in roots:
        if (root / "workload.yaml").is_file():
            found.append(root)
        elif root.is_dir():
            found += sorted(p.parent for p in root.glob("*/workload.yaml"))
    return found


def load_samples(store_url: str, bundles: list[Path], echo: bool = True) -> int:
    """Analyse each bundle into the store; returns how many distinct verdicts went in.

    Some scenarios are copies of an example (the same workload, window and
    verdict): those are skipped. Each sample is stored as its own "cluster"
    (its directory name) because several samples reuse a job id such as 4242,
    and the store keeps one verdict per (job, attempt, catalog, cluster).
    """
    from firstfault.analysis.analyze import Analyzer
    from firstfault.model import Enrichment
    from firstfault.store import VerdictStore

    analyzer = Analyzer()
    seen: set[tuple[object, ...]] = set()
    written = 0
    with VerdictStore.open(store_url) as store:
        for b in bundles:
            try:
                v = analyzer.analyze_path(str(b))
            except Exception as exc:  # one bad sample must not stop the demo
                err(f"{b}: skipped: {exc}")
                continue
            rc = v.root_cause
            key = (v.workload.id, v.workload.attempt, v.workload.window.start, v.workload.window.end,
                   v.attributed_domain, rc.category if rc else None)
            if key in seen:
                continue
            seen.add(key)
            store.write(v, Enrichment(cluster=b.name))
            written += 1
            if echo:
                click.echo(f"  {v.attributed_domain:<14} {b.name}", err=True)
    return written


def free_port(host: str) -> int:
    import socket

    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def demo_app(store_url: str) -> FastAPI:
    """The Service app with the dashboard over `store_url` (added here if the Service did not add it)."""
    from fastapi import FastAPI

    from firstfault.dashboard import make_router
    from firstfault.store import VerdictStore

    store = VerdictStore.open(store_url)
    try:
        from firstfault.service.app import create_app
        from firstfault.service.settings import ServiceSettings

        app = create_app(ServiceSettings())
    except ImportError:  # an install without the Service: the dashboard alone
        app = FastAPI(title="firstfault dashboard")
    if not any(getattr(r, "path", None) == "/fleet" for r in app.routes):
        app.include_router(make_router(lambda: store))
    return app
