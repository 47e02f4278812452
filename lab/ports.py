"""A free port for a lab job's or a lab server's listener (the driver's rendezvous, Grid Engine's qmaster and execd)."""

from __future__ import annotations

import contextlib
import os
import random
import socket
import time
from pathlib import Path


def _ephemeral_low() -> int:
    """The lowest port the kernel hands out to an outgoing connection (Linux's ip_local_port_range; 32768 where it
    cannot be read)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port() -> int:
    """A port nothing listens on for a job's rendezvous, below the ephemeral range: a port the kernel gave as free
    (bind to 0) is one an outgoing connection of any process (another lab job's peers, a server of the tests) may take
    before the job listens on it (a lab job once failed with EADDRINUSE that way). Drawn at a place per process."""
    low = _ephemeral_low()
    first = max(1024, low - 12_000)
    rng = random.Random(os.getpid() * 1_000_003 + time.monotonic_ns())
    for _ in range(200):
        port = rng.randrange(first, low)
        with contextlib.closing(socket.socket()) as s:
            try:
                s.bind(("", port))
            except OSError:
                continue
            return port
    with contextlib.closing(socket.socket()) as s:  # none found: the kernel's choice, as before
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
