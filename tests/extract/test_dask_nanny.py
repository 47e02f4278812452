"""Dask's nanny in its own words: the worker process it watches ended by a signal (catalog/exits.yaml printer
dask-signal, extract/launcher.py) and killed over the worker's memory limit (catalog/scheduler.yaml, scheduler dask,
a memory_limit phrase), with the lines that look alike and are neither.

Provenance: the lines are the lab's (tests/lab/captured/dask_killed_worker, dask_worker_memory_limit: distributed
2026.8.0), or filled in from the format strings cited beside them (dask/distributed distributed/nanny.py
WorkerProcess._on_exit, distributed/worker_memory.py NannyMemoryManager.memory_monitor)."""

from __future__ import annotations

import pytest

from firstfault.extract import launcher
from firstfault.extract.reasons import line_literals
from tests.extract import helpers
from tests.extract.helpers import events

NANNY = "2026-12-07 11:10:04,967 - distributed.nanny - INFO - "
MEMORY = "2026-12-07 11:09:42,320 - distributed.nanny.memory - WARNING - "


def signals(line: str) -> list[tuple[str, object, object]]:
    return [(d.kind, d.fields.get("signal"), d.fields.get("by"))
            for d in helpers.scan(launcher.EXTRACTORS, [line], "application") if d.kind == "process.signal"]


@pytest.mark.parametrize(("line", "signal", "by"), [
    # the lab's: a task's NULL dereference, the worker's own fault signal
    (NANNY + "Worker process 6707 was killed by signal 11", "SIGSEGV", "self"),
    # filled in (`Worker process %d was killed by signal %d`): the worker the nanny itself ended over its memory
    # budget, or anyone's SIGTERM: the nanny only saw the end
    (NANNY + "Worker process 6309 was killed by signal 15", "SIGTERM", "launcher"),
])
def test_the_nannys_word_on_a_worker_a_signal_ended(line: str, signal: str, by: str) -> None:
    assert signals(line) == [("process.signal", signal, by)]


@pytest.mark.parametrize("line", [
    # filled in: nanny.py's other ends (an exit value, 255) and the nanny's own signal handler (distributed/_signals.py)
    NANNY + "Worker process 6707 exited with status 1",
    NANNY + "Worker process 6707 was killed by unknown signal",
    "2026-12-07 11:09:51,216 - distributed._signals - INFO - Received signal SIGTERM (15)",
    # another program's words with `killed by signal` (a DataLoader worker's are the traceback reader's)
    "ERROR: process 4242 was killed by signal 11 at step 3",
])
def test_near_miss_other_nanny_words_and_lookalikes_are_no_worker_signal(line: str) -> None:
    assert signals(line) == []


def kills(lines: list[str]) -> list[dict[str, object]]:
    return [dict(ev.fields) for ev in events(lines, "application", node="n1") if ev.kind == "host.oom_kill"]


@pytest.mark.parametrize("line", [
    # the lab's (worker_memory.py: `Worker {address} (pid={pid}) exceeded {fraction}% memory budget. Restarting...`)
    MEMORY + "Worker tcp://127.0.0.1:35923 (pid=6309) exceeded 95% memory budget. Restarting...",
    # filled in: before 2022.02 (nanny.py memory_monitor: `Worker exceeded %d%% memory budget. Restarting`)
    "distributed.nanny - WARNING - Worker exceeded 95% memory budget. Restarting",
])
def test_the_nanny_killing_a_worker_over_its_memory_limit_is_a_memory_kill(line: str) -> None:
    got = kills([line])
    assert len(got) == 1, got
    assert got[0]["proc"] == "dask"
    assert any(w in line for w in line_literals())


@pytest.mark.parametrize("line", [
    # the lab's: the worker's own warnings before the kill (worker_memory.py): no kill
    "2026-12-07 11:09:41,517 - distributed.worker.memory - WARNING - Worker is at 81% memory usage. Pausing worker.  "
    "Process memory: 243.36 MiB -- Worker memory limit: 300.00 MiB",
    "2026-12-07 11:09:40,697 - distributed.worker.memory - WARNING - Unmanaged memory use is high. This may indicate a "
    "memory leak or the memory may not be released to the OS",
    # the nanny restarting a worker for another reason (nanny.py: after any end)
    NANNY + "Restarting worker (status=Status.running)",
    # a budget in a job's own log words, no restart
    "step 3: activations exceeded 95% memory budget of the GPU",
])
def test_near_miss_memory_warnings_and_restarts_are_no_memory_kill(line: str) -> None:
    assert kills([line]) == []


# ------------------------------------------------------------------ a bare TimeoutError: a wait that ran out


def test_a_bare_timeouterror_is_a_wait_that_ran_out() -> None:
    # a fresh run of the lab's dask_scheduler_unreachable: the client's last connect attempt ran out in asyncio's
    # timeout (Lib/asyncio/timeouts.py `raise TimeoutError from exc_val`), no message
    from tests.extract.helpers import last_line

    kinds = [d.kind for d in last_line("TimeoutError")]
    assert "nccl.timeout" in kinds and "app.exception" not in kinds, kinds


@pytest.mark.parametrize("line", [
    # dask/dask-jobqueue#391, the reporter's line: distributed/core.py Server.__await__'s words for a start that did not
    # finish within death_timeout
    "asyncio.exceptions.TimeoutError: Nanny failed to start in 60 seconds",
    # (synthetic) the later spelling of the same wait, distributed/core.py Server.start
    "TimeoutError: Worker start timed out after 60s.",
])
def test_a_dask_server_that_did_not_start_in_time_is_a_wait_that_ran_out(line: str) -> None:
    from tests.extract.helpers import last_line

    kinds = [d.kind for d in last_line(line)]
    assert "nccl.timeout" in kinds and "app.exception" not in kinds, kinds


@pytest.mark.parametrize("line", [
    # near misses: a TimeoutError with words of its own keeps its reading (a socket's errno, a library's message)
    "TimeoutError: [Errno 110] Connection timed out",
    "TimeoutError: the tokenizer server did not start",
    "TimeoutError: Nanny failed to start in 60 seconds: see the scheduler's log",
])
def test_near_miss_a_timeouterror_with_a_message_is_not_the_bare_wait(line: str) -> None:
    from tests.extract.helpers import last_line

    assert [(d.kind, d.fields.get("exc_type")) for d in last_line(line)] == [("app.exception", "TimeoutError")]
