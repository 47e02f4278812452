"""The verdict store at fleet size: bulk-load N verdicts into a real PostgreSQL, time what the dashboard asks.

    .venv/bin/python bench/store_scale.py --verdicts 1000000          # a private server (tests/store/pg_harness.py)
    .venv/bin/python bench/store_scale.py --url postgresql://u@h/db   # an existing, empty database
    .venv/bin/python bench/store_scale.py --verdicts 20000 --keep     # small; leave the server running

The mix (seeded, deterministic): 70% succeeded jobs (domain none); the rest
hardware, network, software, scheduler, storage, infrastructure, unknown and
ambiguous verdicts made from the verdicts the analyser gives on the shipped
sample bundles, moved onto `--nodes` nodes (20,000) over `--days` (90) of
failure time, in four clusters (a quarter of the nodes each). Workloads run on 1 node (60%), 2-4 (25%),
8-16 (12%) or 32-64 (3%). A few repeat offenders: 40 nodes take 15% of the
hardware and network failures. 2% of the verdicts are analysed days after
the attempt failed (a back-fill).

Rows are made by the store's own write path (repo.child_rows,
repo.fleet_rows_of: the same child and fleet rows a write makes) and loaded
with COPY, 10,000 verdicts a transaction, into a schema created by the
migrations (so the indexes are the migration's); each batch's daily fleet
rollups are upserted in the same transaction by the write path's own
functions (store/rollups.py: deltas, apply).

Then each query the dashboard makes runs 20 times with varying parameters,
in process, through the real router (httpx's ASGI transport, no socket):
the verdict list with each filter, the verdict page, the fleet view over 7
and 30 days, and `firstfault fleet` (its Typer command, in process); with
--prune-day, then retention's prune of the oldest day. It
prints p50/p95/max per query and writes EXPLAIN (ANALYZE, BUFFERS) of every
SQL statement each query issues to OUT/plans.txt, and the figures to
OUT/results.json.
"""

from __future__ import annotations

import argparse
import io
import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

import anyio  # noqa: E402
import httpx  # noqa: E402
import psycopg  # noqa: E402
from fastapi import FastAPI  # noqa: E402
from sqlalchemy import event, text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402
from tests.store.bulkload import Batch  # noqa: E402

from firstfault import records  # noqa: E402
from firstfault.analysis.analyze import Analyzer  # noqa: E402
from firstfault.dashboard import make_router  # noqa: E402
from firstfault.model import (  # noqa: E402
    Enrichment,
    Verdict,
    iso,
)
from firstfault.store import VerdictStore, create_store_engine  # noqa: E402
from firstfault.store import schema as t  # noqa: E402

NOW = datetime(2026, 12, 1, 0, 0, tzinfo=UTC)
CLUSTERS = ("east", "west", "north", "south")
SAMPLES = {  # domain -> bundles whose verdicts serve as templates
    "none": ["tests/scenarios/ok-completed-nccl-noise"],
    "hardware": ["examples/nvlink-xid149", "tests/scenarios/hw-nvswitch-sxid-fatal",
                 "tests/scenarios/hw-slurm-node-fail", "tests/scenarios/hw-trap-node-clock-skew"],
    "network": ["tests/scenarios/net-ib-port-down-mlx5"],
    "software": ["examples/cuda-oom"],
    "scheduler": ["tests/scenarios/sch-slurm-timeout"],
    "storage": ["tests/scenarios/st-lustre-hang"],
    "unknown": ["tests/scenarios/unk-watchdog-only"],
    "ambiguous": ["examples/ambiguous"],
}
MIX = {"none": 0.70, "hardware": 0.09, "network": 0.05, "software": 0.08, "scheduler": 0.04, "storage": 0.015,
       "unknown": 0.02, "ambiguous": 0.005}
BATCH = 10_000
REPEATS = 20


# ---------------------------------------------------------------------------
# generating
# ---------------------------------------------------------------------------


class Generator:
    def __init__(self, nodes: int, days: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.nodes = [f"gpu{i:05d}" for i in range(nodes)]
        self.offenders = self.rng.sample(self.nodes, 40)
        self.days = days
        analyzer = Analyzer()
        now = NOW
        self.templates: dict[str, list[dict[str, Any]]] = {}
        for dom, paths in SAMPLES.items():
            self.templates[dom] = [records.to_builtins(analyzer.analyze_path(str(ROOT / p), now=now))
                                   for p in paths]
        self.domains = list(MIX)
        self.weights = [MIX[d] for d in self.domains]

    def _size(self) -> int:
        r = self.rng.random()
        if r < 0.60:
            return 1
        if r < 0.85:
            return self.rng.randint(2, 4)
        if r < 0.97:
            return self.rng.randint(8, 16)
        return self.rng.randint(32, 64)

    def verdict(self, i: int) -> tuple[Verdict, Enrichment]:
        rng = self.rng
        dom = rng.choices(self.domains, self.weights)[0]
        doc = json.loads(json.dumps(rng.choice(self.templates[dom])))  # a deep copy
        old = list(doc["workload"]["nodes"])
        size = max(self._size(), len(old))
        # Each cluster owns a quarter of the nodes; a workload runs on consecutive nodes of one cluster.
        c = i % len(CLUSTERS)
        block = len(self.nodes) // len(CLUSTERS)
        start = c * block + rng.randrange(0, block - size)
        new = self.nodes[start:start + size]
        if dom in ("hardware", "network") and rng.random() < 0.15:
            bad = [n for n in self.offenders if int(n[3:]) // block == c]
            new[0] = rng.choice(bad)  # a repeat offender of the cluster runs the job and is where it broke
        culprit = {n for c in [doc["root_cause"], *doc["candidates"]] if c for n in c["nodes"]}
        # The template's nodes onto the new ones, its culprit(s) first.
        order = sorted(old, key=lambda n: (n not in culprit, n))
        mapping = dict(zip(order, new, strict=False))
        doc = _rename(doc, mapping)
        doc["workload"]["nodes"] = list(dict.fromkeys([*new, *mapping.values()]))
        end = NOW - timedelta(seconds=rng.randrange(self.days * 86400))
        length = timedelta(minutes=rng.randrange(10, 24 * 60))
        lag = timedelta(days=rng.randrange(1, 6)) if rng.random() < 0.02 else timedelta(seconds=rng.randrange(60, 600))
        cluster = CLUSTERS[c]
        doc["workload"]["id"] = f"{cluster}-{100000 + i}"
        doc["workload"]["window"] = {"start": iso(end - length), "end": iso(end)}
        doc["analyzed_at"] = iso(min(end + lag, NOW))
        return records.convert(doc, Verdict), Enrichment(cluster=cluster)


def _rename(x: Any, m: dict[str, str]) -> Any:
    if isinstance(x, dict):
        return {k: (x[k] if k in ("text", "query", "summary", "file") else _rename(v, m)) for k, v in x.items()}
    if isinstance(x, list):
        return [_rename(v, m) for v in x]
    if isinstance(x, str):
        if x in m:
            return m[x]
        head, sep, tail = x.partition("/")
        if sep and head in m:
            return f"{m[head]}/{tail}"
    return x


# ---------------------------------------------------------------------------
# loading
# ---------------------------------------------------------------------------

def load(url: str, gen: Generator, count: int, log: Callable[[str], None], first_index: int = 0) -> float:
    """COPY `count` generated verdicts and upsert their rollups; returns the seconds it took."""
    began = time.monotonic()
    engine = create_store_engine(url)
    with engine.connect() as sconn:
        first = int(sconn.execute(text("SELECT coalesce(max(id), 0) + 1 FROM verdicts")).scalar_one())
        for lo in range(0, count, BATCH):
            batch = Batch()
            for i in range(lo, min(count, lo + BATCH)):
                v, enr = gen.verdict(first_index + i)
                batch.add(v, enr, first + i, datetime.fromisoformat(v.analyzed_at))
            batch.copy(sconn)
            sconn.commit()
            done = min(count, lo + BATCH)
            if done % 100_000 == 0 or done == count:
                log(f"  {done:>9,} verdicts loaded, {time.monotonic() - began:6.0f} s")
        sconn.execute(text("SELECT setval(pg_get_serial_sequence('verdicts', 'id'), (SELECT max(id) FROM verdicts))"))
        sconn.commit()
    engine.dispose()
    dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE)")
    return time.monotonic() - began


# ---------------------------------------------------------------------------
# timing
# ---------------------------------------------------------------------------


class Client:
    def __init__(self, store: VerdictStore) -> None:
        app = FastAPI()
        app.include_router(make_router(lambda: store, clock=lambda: NOW))
        self.app = app

    def get(self, url: str, params: Any = None) -> httpx.Response:
        async def go() -> httpx.Response:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app), base_url="http://b") as c:
                return await c.get(url, params=params)

        r = anyio.run(go)
        if r.status_code != 200:
            raise RuntimeError(f"{url} {params}: {r.status_code} {r.text[:300]}")
        return r


@contextmanager
def captured(store: VerdictStore) -> Iterator[list[tuple[str, Any]]]:
    got: list[tuple[str, Any]] = []

    def rec(_c: Any, _cur: Any, statement: str, parameters: Any, _ctx: Any, _many: bool) -> None:
        got.append((statement, parameters))

    event.listen(store.engine, "before_cursor_execute", rec)
    try:
        yield got
    finally:
        event.remove(store.engine, "before_cursor_execute", rec)


def queries(store: VerdictStore, url: str, rng: random.Random,
            gen_nodes: list[str], offenders: list[str]) -> dict[str, Callable[[int], Any]]:
    client = Client(store)
    with store.engine.connect() as conn:
        max_id = int(conn.execute(text("SELECT max(id) FROM verdicts")).scalar_one())
    categories = ["gpu", "gpu.nvlink", "network", "app.cuda", "host", "scheduler.time_limit", "storage"]

    def verdicts(params: Callable[[int], dict[str, Any]]) -> Callable[[int], Any]:
        return lambda i: client.get("/v1/verdicts", params=params(i))

    from click.testing import CliRunner

    from firstfault.cli.fleet import fleet as cli

    runner = CliRunner()

    def cli_fleet(i: int) -> Any:
        res = runner.invoke(cli, ["--db", url, "--since", "7d" if i % 2 else "30d"])
        if res.exit_code != 0:
            raise RuntimeError(res.output)
        return res

    return {
        "list (no filter)": verdicts(lambda i: {"offset": 50 * (i % 3)}),
        "list outcome=node_fail": verdicts(lambda i: {"outcome": ["node_fail", "failed"][i % 2]}),
        "list domain=hardware": verdicts(lambda i: {"domain": ["hardware", "network", "storage", "none"][i % 4]}),
        "list category=prefix": verdicts(lambda i: {"category": categories[i % len(categories)]}),
        "list node=": verdicts(lambda i: {"node": (offenders if i % 2 else gen_nodes)[rng.randrange(40)]}),
        "list since=24h": verdicts(lambda i: {"since": ["24h", "7d"][i % 2]}),
        "list domain+since+node": verdicts(lambda i: {"domain": "hardware", "since": "30d",
                                                      "node": offenders[i % len(offenders)]}),
        "verdict page": lambda i: client.get(f"/verdicts/{rng.randrange(1, max_id + 1)}"),
        "fleet 7d": lambda i: client.get("/v1/fleet", params={"since": "7d"} | (
            {"cluster": CLUSTERS[i % 4]} if i % 4 == 3 else {})),
        "fleet 30d": lambda i: client.get("/v1/fleet", params={"since": "30d"} | (
            {"domain": "network"} if i % 4 == 3 else {})),
        "firstfault fleet (7d/30d)": cli_fleet,
    }


def explain(store: VerdictStore, statements: list[tuple[str, Any]]) -> str:
    out = io.StringIO()
    raw = store.engine.raw_connection()
    try:
        cur = raw.cursor()
        for sql, params in statements:
            if not sql.lstrip().upper().startswith("SELECT"):
                continue
            cur.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, params)
            out.write(sql.strip() + "\n" + "\n".join("    " + r[0] for r in cur.fetchall()) + "\n\n")
        raw.rollback()
    finally:
        raw.close()
    return out.getvalue()


def measure(store: VerdictStore, url: str, gen: Generator, out: Path, log: Callable[[str], None]) -> dict[str, Any]:
    rng = random.Random(7)
    results: dict[str, Any] = {}
    plans = io.StringIO()
    for name, run in queries(store, url, rng, gen.nodes, gen.offenders).items():
        run(0)  # warm: the first call also imports and compiles
        times = []
        for i in range(REPEATS):
            began = time.perf_counter()
            run(i)
            times.append(time.perf_counter() - began)
        with captured(store) as stmts:
            run(1)
        plans.write(f"=== {name}\n\n{explain(store, stmts)}")
        times.sort()
        p95 = times[min(len(times) - 1, round(0.95 * len(times)) - 1)]
        results[name] = {"p50_s": round(statistics.median(times), 4), "p95_s": round(p95, 4),
                         "max_s": round(times[-1], 4), "statements": len(stmts)}
        log(f"  {name:<28} p50 {results[name]['p50_s']:7.3f} s   p95 {p95:7.3f} s   max {times[-1]:7.3f} s")
    (out / "plans.txt").write_text(plans.getvalue())
    return results


def prune_day(url: str, log: Callable[[str], None]) -> dict[str, Any]:
    """Retention's daily job at this size: the verdicts of the oldest UTC day, 1,000 a batch."""
    from firstfault.store.retention import prune

    with VerdictStore.open(url, auto_migrate=False) as store:
        with store.engine.connect() as conn:
            oldest = conn.execute(text("SELECT min(failed_at) FROM verdicts")).scalar_one()
        cutoff = oldest.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
        t0 = time.perf_counter()
        r = prune(store, cutoff, batch=1000)
        took = time.perf_counter() - t0
    log(f"pruned the day before {cutoff:%Y-%m-%d}: {r.deleted:,} verdicts in {r.batches} batches, {took:.1f} s "
        f"({r.deleted / took:,.0f} verdicts/s)")
    return {"cutoff": cutoff.isoformat(), "deleted": r.deleted, "batches": r.batches, "seconds": round(took, 2)}


def sizes(dsn: str) -> dict[str, Any]:
    with psycopg.connect(dsn) as conn:
        total = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]  # type: ignore[index]
        rows = conn.execute(
            "SELECT c.relname, pg_total_relation_size(c.oid), c.reltuples::bigint FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r' "
            "ORDER BY 2 DESC").fetchall()
    return {"database_bytes": int(total), "tables": {r[0]: {"bytes": int(r[1]), "rows": int(r[2])} for r in rows}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--verdicts", type=int, default=1_000_000)
    ap.add_argument("--nodes", type=int, default=20_000)
    ap.add_argument("--days", type=int, default=90)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--url", help="an existing, empty PostgreSQL database (default: a private server)")
    ap.add_argument("--shared-buffers", default="2GB", help="private server only (default 2GB)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out" / "store_scale")
    ap.add_argument("--keep", action="store_true", help="leave the private server running (prints its URL)")
    ap.add_argument("--resume", action="store_true",
                    help="with --url: load only what is missing up to --verdicts (a load cut short), then measure")
    ap.add_argument("--prune-day", action="store_true",
                    help="after measuring, prune the oldest UTC day of verdicts (retention, batch 1000) and time "
                         "it (this deletes them)")
    ap.add_argument("--measure-only", action="store_true",
                    help="with --url: time the queries over what that database holds (a load stopped early)")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)

    def log(msg: str) -> None:
        print(msg, flush=True)

    server = None
    url = args.url
    try:
        return _run(args, url, log, server_box := [])
    finally:
        for server in server_box:
            if args.keep:
                log(f"kept: PostgreSQL on 127.0.0.1:{server.port}  (stop: pg_ctl -D {server.data} stop)")
            else:
                server.stop()


def _run(args: argparse.Namespace, url: str | None, log: Callable[[str], None], server_box: list[Any]) -> int:
    server = None
    if url is None:
        from tests.store.pg_harness import PgServer, find_bindir

        bindir = find_bindir()
        if bindir is None:
            log("PostgreSQL binaries (initdb, pg_ctl) are not installed")
            return 2
        server = PgServer(bindir).start()
        server_box.append(server)
        with server._admin() as admin:
            for key, value in (("shared_buffers", args.shared_buffers), ("work_mem", "32MB"),
                               ("maintenance_work_mem", "512MB"), ("max_wal_size", "4GB")):
                admin.execute(f"ALTER SYSTEM SET {key} = '{value}'")
        # -l: the restarted postmaster must not hold our stdout pipe open.
        server._run(str(server.bindir / "pg_ctl"), "-D", str(server.data), "-l", str(server.root / "server.log"),
                    "-m", "fast", "-w", "restart")
        url = server.url(server.create_database())
        log(f"PostgreSQL {bindir.parent.name} on 127.0.0.1:{server.port} (shared_buffers {args.shared_buffers})")
    dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
    if True:
        with VerdictStore.open(url):  # the schema and indexes, by the migrations
            pass
        gen = Generator(args.nodes, args.days, args.seed)
        have = 0
        if args.measure_only:
            with psycopg.connect(dsn, autocommit=True) as conn:
                args.verdicts = int(conn.execute("SELECT count(*) FROM verdicts").fetchone()[0])  # type: ignore[index]
                conn.execute("VACUUM (ANALYZE)")
            load_s = 0.0
            log(f"measuring the {args.verdicts:,} verdicts stored")
        elif args.resume:
            with psycopg.connect(dsn) as conn:
                have = int(conn.execute("SELECT count(*) FROM verdicts").fetchone()[0])  # type: ignore[index]
            gen.rng.seed(args.seed + 1)  # the same nodes and offenders; more of the same mix, new workload ids
            log(f"resuming: {have:,} verdicts stored, loading {args.verdicts - have:,} more")
            load_s = load(url, gen, args.verdicts - have, log, first_index=have)
        else:
            log(f"loading {args.verdicts:,} verdicts ({args.nodes:,} nodes, {args.days} days)")
            load_s = load(url, gen, args.verdicts, log)
        size = sizes(dsn)
        loaded = args.verdicts - have if args.resume else args.verdicts
        rate = f"{loaded:,} in {load_s:.0f} s, {loaded / load_s:,.0f} verdicts/s" if load_s else "earlier"
        log(f"loaded ({rate}); database {size['database_bytes'] / 2**30:.2f} GiB")
        rolled = {tb.name for tb in t.ROLLUP_TABLES}
        for i, (name, s) in enumerate(size["tables"].items()):
            if i < 12 or name in rolled:  # the largest tables, and the rollups whatever their size
                log(f"  {name:<18} {s['rows']:>12,} rows {s['bytes'] / 2**20:>10,.0f} MiB")
        log(f"timing each query {REPEATS} times (p95 target < 1 s)")
        with VerdictStore.open(url, auto_migrate=False) as store:
            results = measure(store, url, gen, args.out, log)
        doc = {"verdicts": args.verdicts, "nodes": args.nodes, "days": args.days, "load_s": round(load_s, 1),
               "size": size, "queries": results}
        if args.prune_day:
            doc["prune_day"] = prune_day(url, log)
        (args.out / "results.json").write_text(json.dumps(doc, indent=2))
        log(f"wrote {args.out / 'results.json'} and {args.out / 'plans.txt'}")
        slow = [n for n, r in results.items() if r["p95_s"] >= 1.0]
        if slow:
            log(f"over 1 s at p95: {', '.join(slow)}")
        return 1 if slow else 0


if __name__ == "__main__":
    raise SystemExit(main())
