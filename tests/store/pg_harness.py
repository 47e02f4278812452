"""A real, private PostgreSQL server for the store tests.

initdb into a temporary directory (as the `postgres` user when we are root:
initdb and pg_ctl refuse to run as root), start it with pg_ctl on 127.0.0.1
and a free port with its Unix socket inside that directory, and stop it with
`pg_ctl -m fast stop` (pg_ctl signals the postmaster PID it recorded). One
server per test session (`shared_server()`, whichever test module asks
first starts it; it stops when the test process exits); each test gets its
own database.
"""

from __future__ import annotations

import atexit
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg


def find_bindir() -> Path | None:
    """The newest installed PostgreSQL's bin directory (Debian layout), or initdb on PATH."""
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name))
    if versions:
        return versions[-1].parent
    found = shutil.which("initdb")
    return Path(found).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgServer:
    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="ff-pg-"))
        self.data = self.root / "data"
        self.port = 0
        self._as: list[str] = []
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            os.chown(self.root, pw.pw_uid, pw.pw_gid)
            self._as = ["runuser", "-u", "postgres", "--"]

    def _run(self, *args: str, timeout: float = 60) -> None:
        cmd = [*self._as, *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
        if proc.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr}\n{tail}")

    def start(self) -> PgServer:
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres",
                  "--no-sync", "-E", "UTF8", "--locale=C")
        for _ in range(3):  # the free port may be taken between probing and binding
            self.port = _free_port()
            opts = f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} -c max_connections=60"
            try:
                self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-o", opts,
                          "-l", str(self.root / "server.log"), "-w", "-t", "30", "start")
                return self
            except RuntimeError:
                continue
        raise RuntimeError(f"PostgreSQL did not start; see {self.root / 'server.log'}")

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def _admin(self) -> psycopg.Connection[tuple[object, ...]]:
        return psycopg.connect(host="127.0.0.1", port=self.port, user="postgres", dbname="postgres",
                               autocommit=True)

    def create_database(self) -> str:
        name = "ff_" + uuid.uuid4().hex[:12]
        with self._admin() as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return name

    def drop_database(self, name: str) -> None:
        with self._admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


_SHARED: list[PgServer] = []


def shared_server() -> PgServer | None:
    """The session's one server (started on first use, stopped at exit); None without the binaries."""
    if not _SHARED:
        bindir = find_bindir()
        if bindir is None:
            return None
        server = PgServer(bindir).start()
        atexit.register(server.stop)
        _SHARED.append(server)
    return _SHARED[0]


@contextmanager
def fresh_database(*, required: bool = False) -> Iterator[str]:
    """The URL of a new database on the session's server, dropped afterwards. Without the binaries the
    test is skipped, or failed when `required` (a test that must run wherever it is collected)."""
    import pytest  # the benches import this module too, without pytest

    pg = shared_server()
    if pg is None:
        (pytest.fail if required else pytest.skip)("PostgreSQL binaries (initdb, pg_ctl) are not installed")
    name = pg.create_database()
    try:
        yield pg.url(name)
    finally:
        pg.drop_database(name)


@contextmanager
def store_url(backend: str, tmp_path: Path, *, required: bool = False) -> Iterator[str]:
    """A verdict store's URL for a test parametrised over "sqlite" (a file in tmp_path) and "postgresql"
    (fresh_database)."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'verdicts.db'}"
        return
    with fresh_database(required=required) as url:
        yield url
