"""`firstfault run` and `firstfault watch`: the Blueprint from the command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

# rich is imported where a command prints with it: importing this module (every `firstfault` command
# does, to register `run` and `watch`) stays cheap.

ConfigOpt = Annotated[Path, typer.Option("--config", "-c", help="The cluster's cluster.yaml.")]


def _fail(msg: str, code: int = 2) -> typer.Exit:
    from rich.console import Console

    Console(stderr=True).print(f"[bold red]error:[/] {msg}", highlight=False)
    return typer.Exit(code)


def run(
    config: ConfigOpt,
    job: Annotated[Optional[str], typer.Option("--job", help="Slurm job id (4242, 4242_7, 4242+1).")] = None,  # noqa: UP045
    workload: Annotated[
        Optional[str], typer.Option("--workload", help="Kueue Workload as NAMESPACE/NAME.")  # noqa: UP045
    ] = None,
    window: Annotated[
        Optional[tuple[str, str]],  # noqa: UP045
        typer.Option("--window", help="Static window: START END (RFC 3339)."),
    ] = None,
    nodes: Annotated[
        Optional[str], typer.Option("--nodes", help="Static node list, Slurm hostlist syntax: node-[01-04].")  # noqa: UP045
    ] = None,
    ranks_per_node: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option("--ranks-per-node", min=1, help="Static: ranks 0..N-1 on the first node, N..2N-1 on the next..."),
    ] = None,
    attempt_id: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--id", help="Static: the attempt's workload id [default: a hash of window and nodes]."),
    ] = None,
    fmt: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--format", "-f", help="stdout format: text, markdown or json (as analyze); "
                                            "default: outputs.stdout.format."),
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress and no stdout verdict.")] = False,
    width: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option("--width", "-w", min=40,
                     help="Text width; default: COLUMNS, else the terminal's, else 80 (piped or redirected)."),
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Every evidence line, lead and coverage row, not the short form."),
    ] = False,
) -> None:
    """Attribute one workload attempt and write the verdict to every configured output.

    Exit codes: 0 verdict written everywhere; 1 verdict built but an output
    (or a configured drain / cordon) failed; 2 no verdict (bad config,
    unknown job, scheduler unreachable). Recovery actions (cluster.yaml
    `actions:`, docs/actions.md) print each decision on stderr.
    """
    import httpx

    from firstfault.blueprint import build
    from firstfault.blueprint.config import ConfigError, load_config
    from firstfault.client import FirstfaultError
    from firstfault.identify.base import ContextError

    chosen = [x for x in (job, workload, window) if x]
    if len(chosen) != 1:
        raise _fail("give exactly one of --job, --workload or --window START END (with --nodes)")
    if window and not nodes:
        raise _fail("--window needs --nodes")
    if attempt_id is not None and not window:
        raise _fail("--id names a static attempt: it goes with --window (a job or Workload has its own id)")
    if fmt not in (None, "text", "markdown", "json"):
        raise _fail("--format is text, markdown or json")
    from rich.console import Console

    err = Console(stderr=True)
    try:
        cfg = load_config(config)
        if job:
            kind, ref = "slurm", job
            ctx_conn = build.context_connector(cfg, kind)
        elif workload:
            kind, ref = "kueue", workload
            ctx_conn = build.context_connector(cfg, kind)
        else:
            assert window is not None and nodes is not None
            kind, ref = "static", "static"
            static: dict[str, object] = {"start": window[0], "end": window[1], "nodes": nodes}
            if attempt_id is not None:
                static["id"] = attempt_id
            if ranks_per_node:
                from firstfault.hostlist import hostlist_expand

                n = ranks_per_node
                static["ranks"] = {h: f"{i * n}-{i * n + n - 1}" for i, h in enumerate(hostlist_expand(nodes))}
            ctx_conn = build.context_connector(cfg, kind, static)
        sinks = build.sinks(cfg, stdout_format=None if quiet else fmt, stdout_width=width, stdout_verbose=verbose)
        if quiet:
            sinks = [s for s in sinks if s.name != "stdout"]
        # A live status line on stderr while connectors run (a terminal only),
        # so stdout stays the verdict alone for scripts and epilogs.
        with err.status("starting", spinner="dots") as status:
            def progress(msg: str) -> None:
                if not quiet:
                    status.update(msg)
                    if not err.is_terminal:
                        err.print(f"· {msg}", highlight=False, style="dim")

            pipe = build.pipeline(cfg, ctx_conn, job_id=None if kind == "static" else ref, output_sinks=sinks,
                                  progress=progress)
            try:
                identified = pipe.identify(ref)
                verdict = pipe.analyze(identified)
            finally:
                pipe.close()
        try:
            outcomes = pipe.write(verdict, pipe.enrich(identified))
            # Recovery actions (actions: in cluster.yaml) on the stored verdict; each decision on stderr.
            actions = pipe.act(verdict, pipe.stored_id())
        finally:
            for sk in sinks:  # their HTTP connections and database handles
                close = getattr(sk, "close", None)
                if close is not None:
                    close()
        for a in actions:
            err.print(f"action {a.line()}", highlight=False, markup=False, soft_wrap=True)
    except (ConfigError, ContextError) as exc:
        raise _fail(str(exc)) from exc
    except (FirstfaultError, httpx.HTTPError) as exc:
        where = cfg.service.url if cfg.service else "?"
        raise _fail(f"the Service at {where} could not analyse it: {exc}") from exc
    failed = [s for s in outcomes if not s.ok]
    for s in failed:
        err.print(f"[bold red]output {s.sink} failed:[/] {s.message}", highlight=False)
    if failed or any(a.outcome == "error" for a in actions):
        raise typer.Exit(1)


def watch(
    config: ConfigOpt,
    scheduler: Annotated[str, typer.Option("--scheduler", help="slurm or kueue.")] = "slurm",
    once: Annotated[bool, typer.Option("--once", help="One pass, then exit (for cron and tests).")] = False,
    json_log: Annotated[bool, typer.Option("--json", help="One JSON line per attempt on stdout.")] = False,
) -> None:
    """Attribute every workload attempt that ends, exactly once, across restarts.

    The cursor and the processed marks live in the database
    (watch.state_url, or outputs.database.url).
    """
    from firstfault.blueprint import build
    from firstfault.blueprint.config import ConfigError, load_config
    from firstfault.blueprint.watch import Watcher
    from firstfault.store.repo import VerdictStore

    try:
        cfg = load_config(config)
        url = cfg.watch.state_url or build.database_url(cfg)
        if not url:
            raise ConfigError("watch needs a database: set outputs.database.url (or watch.state_url)")
        source = build.context_connector(cfg, scheduler)
        if not hasattr(source, "ended_since"):
            raise ConfigError(f"the {scheduler} connector cannot list ended attempts")
        db = cfg.outputs.database
        store = VerdictStore.open(url, replay_cap=db.replay_evidence_max_bytes) if db else VerdictStore.open(url)
        other_sinks = [s for s in build.sinks(cfg, with_database=False) if not (json_log and s.name == "stdout")]
        actors = build.actors(cfg, url)  # decide against the store the verdicts are committed to
    except ConfigError as exc:
        raise _fail(str(exc)) from exc

    def log(msg: str) -> None:
        if json_log:
            sys.stdout.write(json.dumps({"event": msg}) + "\n")
            sys.stdout.flush()
        else:
            from rich.console import Console

            Console(stderr=True).print(msg, highlight=False)

    watcher = Watcher(
        source=source,  # type: ignore[arg-type]
        store=store,
        make_pipeline=lambda ref: build.pipeline(cfg, source, job_id=ref, output_sinks=other_sinks, actions=actors),
        cluster=cfg.cluster,
        log=log,
    )
    watcher.install_signal_handlers()
    try:
        watcher.run_forever(cfg.watch.poll_interval, max_passes=1 if once else None)
    finally:
        store.close()
