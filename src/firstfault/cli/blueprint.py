"""`firstfault run` and `firstfault watch`: the Blueprint from the command line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from firstfault.cli.base import PATH, command, fail, verbose_option, width_option

config_option = click.option("--config", "-c", type=PATH, required=True, help="The cluster's cluster.yaml.")


@command()
@config_option
@click.option("--job", help="Slurm job id (4242, 4242_7, 4242+1).")
@click.option("--workload", help="Kueue Workload as NAMESPACE/NAME.")
@click.option("--window", type=(str, str), default=None, help="Static window: START END (RFC 3339).")
@click.option("--nodes", help="Static node list, Slurm hostlist syntax: node-[01-04].")
@click.option("--ranks-per-node", type=click.IntRange(min=1),
              help="Static: ranks 0..N-1 on the first node, N..2N-1 on the next...")
@click.option("--id", "attempt_id", help="Static: the attempt's workload id [default: a hash of window and nodes].")
@click.option("--format", "-f", "fmt", help="stdout format: text, markdown or json (as analyze); "
                                            "default: outputs.stdout.format.")
@click.option("--quiet", "-q", is_flag=True, help="No progress and no stdout verdict.")
@width_option
@verbose_option
def run(config: Path, job: str | None, workload: str | None, window: tuple[str, str] | None, nodes: str | None,
        ranks_per_node: int | None, attempt_id: str | None, fmt: str | None, quiet: bool, width: int | None,
        verbose: bool) -> None:
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
    from firstfault.identify.base import IdentifyError

    chosen = [x for x in (job, workload, window) if x]
    if len(chosen) != 1:
        raise fail("give exactly one of --job, --workload or --window START END (with --nodes)")
    if window and not nodes:
        raise fail("--window needs --nodes")
    if attempt_id is not None and not window:
        raise fail("--id names a static attempt: it goes with --window (a job or Workload has its own id)")
    if fmt not in (None, "text", "markdown", "json"):
        raise fail("--format is text, markdown or json")
    from rich.console import Console
    from rich.markup import escape

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
                    status.update(escape(msg))
                    if not err.is_terminal:
                        err.print(f"· {msg}", highlight=False, markup=False, style="dim")

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
    except (ConfigError, IdentifyError) as exc:
        raise fail(str(exc)) from exc
    except (FirstfaultError, httpx.HTTPError) as exc:
        where = cfg.service.url if cfg.service else "?"
        raise fail(f"the Service at {where} could not analyse it: {exc}") from exc
    failed = [s for s in outcomes if not s.ok]
    for s in failed:
        err.print(f"[bold red]output {s.sink} failed:[/] {escape(s.message)}", highlight=False)
    if failed or any(a.outcome == "error" for a in actions):
        raise SystemExit(1)


@command()
@config_option
@click.option("--scheduler", default="slurm", help="slurm or kueue (static: --follow only).")
@click.option("--once", is_flag=True, help="One pass, then exit (for cron and tests).")
@click.option("--follow", is_flag=True, help="Also follow the attempts that run: a provisional verdict as soon as "
                                             "their evidence shows a cause (cluster.yaml follow:).")
@click.option("--json", "json_log", is_flag=True, help="One JSON line per attempt on stdout.")
@click.option("--concurrency", "-j", type=click.IntRange(1, 64),
              help="Attempts of a pass settled at once, by that many threads (default: watch.concurrency "
                   "in cluster.yaml, else 4). Without service: in cluster.yaml (the embedded engine) "
                   "attempts go one at a time whatever this says.")
def watch(config: Path, scheduler: str, once: bool, follow: bool, json_log: bool, concurrency: int | None) -> None:
    """Attribute every workload attempt that ends, exactly once, across restarts.

    The cursor and the processed marks live in the database
    (watch.state_url, or outputs.database.url). Each attempt's verdict and
    mark commit in one transaction; the cursor moves when every attempt of
    the pass is settled. SIGTERM lets the attempts in flight commit, then stops.

    With --follow, the attempts that run are followed too (their files,
    Loki, pod logs and Prometheus, as configured): when a cause appears on
    one of their nodes, a provisional verdict (outcome running) goes to the
    outputs, once per attempt and cause; the final verdict supersedes it.
    """
    from rich.console import Console

    from firstfault.blueprint import build
    from firstfault.blueprint.config import ConfigError, load_config
    from firstfault.blueprint.watch import SharedService, Watcher, serialized
    from firstfault.store.repo import VerdictStore

    err = Console(stderr=True)
    try:
        cfg = load_config(config)
        url = cfg.watch.state_url or build.database_url(cfg)
        if not url:
            raise ConfigError("watch needs a database: set outputs.database.url (or watch.state_url)")
        source = build.context_connector(cfg, scheduler) if scheduler != "static" else None
        if source is not None and not hasattr(source, "ended_since"):
            raise ConfigError(f"the {scheduler} connector cannot list ended attempts")
        if source is None and not follow:
            raise ConfigError("--scheduler static lists running attempts only: it goes with --follow")
        running = build.running_source(cfg, scheduler) if follow else None
        db = cfg.outputs.database
        store = VerdictStore.open(url, replay_cap=db.replay_evidence_max_bytes) if db else VerdictStore.open(url)
        other_sinks = [s for s in build.sinks(cfg, with_database=False) if not (json_log and s.name == "stdout")]
        # Decide against the store the verdicts are committed to (one engine, its pool shared by the threads).
        actors = build.actors(cfg, url, store=store)
        early_actors = build.provisional_actors(cfg, store) if follow else []
    except ConfigError as exc:
        raise fail(str(exc)) from exc

    asked = concurrency if concurrency is not None else cfg.watch.concurrency
    threads = asked if asked is not None else 4
    memory = store.engine.url.get_backend_name() == "sqlite" and store.engine.url.database in (None, "", ":memory:")
    if cfg.service is None or memory:
        # The embedded engine's analysis is CPU-bound Python (threads would only take turns), and an
        # in-memory SQLite store is one connection: attempts go one at a time.
        if asked is not None and asked > 1:
            why = ("no service: in the config (the embedded engine analyses in this process)" if cfg.service is None
                   else "an in-memory SQLite store (one connection)")
            err.print(f"watch: {why}: attempts are settled one at a time (concurrency {asked} ignored)",
                      highlight=False, markup=False, soft_wrap=True)
        threads = 1
    shared = SharedService(build.service_client(cfg)) if cfg.service is not None else None
    # --follow: the follower and the watch passes write from two threads.
    serial_sinks = serialized(other_sinks) if threads > 1 or follow else other_sinks

    def log(msg: str) -> None:
        err.print(msg, highlight=False, markup=False, soft_wrap=True)

    def event(msg: str, fields: dict[str, object]) -> None:
        sys.stdout.write(json.dumps({"event": msg, **fields}) + "\n")
        sys.stdout.flush()

    from firstfault.store.provisional import ProvisionalLedger

    watcher = None
    if source is not None:
        watcher = Watcher(
            source=source,  # type: ignore[arg-type]
            store=store,
            make_pipeline=lambda ref: build.pipeline(cfg, source, job_id=ref, output_sinks=serial_sinks,
                                                     actions=actors, client=shared),
            cluster=cfg.cluster,
            log=log,
            event=event if json_log else None,
            concurrency=threads,
            begin_pass=shared.new_pass if shared is not None else None,
            provisional=ProvisionalLedger(store),
        )
    daemon = None
    if running is not None:
        from firstfault.blueprint.follow import FollowDaemon

        daemon = FollowDaemon(
            source=running, store=store, make_followers=lambda ident, cur: build.followers(cfg, ident, cur),
            sinks=serial_sinks, cluster=cfg.cluster,
            ledger=f"{running.name}@{cfg.cluster}" if cfg.cluster else running.name, actions=early_actors,
            interval=cfg.follow.interval, list_interval=cfg.follow.list_interval,
            max_attempts=cfg.follow.max_attempts,
            log=(lambda msg, fields: event(msg, fields)) if json_log else (lambda msg, _fields: log(msg)))

    def stop(*_: object) -> None:
        if watcher is not None:
            watcher.stop()
        if daemon is not None:
            daemon.stop()

    import signal
    import threading

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, stop)
    background = None
    try:
        if daemon is None:
            assert watcher is not None
            watcher.run_forever(cfg.watch.poll_interval, max_passes=1 if once else None)
        elif once:
            daemon.run_forever(max_steps=1)
            if watcher is not None:
                watcher.run_pass()
        else:
            if watcher is not None:  # the ended attempts on a thread of their own: a long pass never delays a poll
                w = watcher
                background = threading.Thread(target=lambda: w.run_forever(cfg.watch.poll_interval),
                                              name="ff-watch-passes", daemon=True)
                background.start()
            daemon.run_forever()
    finally:
        stop()
        if background is not None:
            background.join()
        if shared is not None:
            shared.shutdown()
        for sk in other_sinks:  # their HTTP connections
            close = getattr(sk, "close", None)
            if close is not None:
                close()
        store.close()
