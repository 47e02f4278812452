"""Flight-recorder dumps (pickle / JSON) and stack dumps (py-spy / faulthandler)."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path
from typing import Any

import pytest

from firstfault.extract.flightrec import UnsafeDumpError, load_dump, read_flight_recorder
from firstfault.extract.stackdump import read_stack_dump


def dump(rank: int, last_enq: int, last_done: int, pending_op: str = "all_reduce",
         sizes: tuple[int, ...] = (1024,)) -> dict[str, Any]:
    """A dump in the shape PyTorch writes (torch/distributed/flight_recorder: version, pg_config,
    pg_status, entries with process_group as a (name, desc) tuple)."""
    entries = []
    for i, seq in enumerate(range(max(1, last_enq - 3), last_enq + 1)):
        entries.append({
            "record_id": i, "pg_id": 0, "process_group": ("0", "default_pg"), "collective_seq_id": seq,
            "p2p_seq_id": 0, "op_id": seq, "profiling_name": f"nccl:{pending_op if seq > last_done else 'all_reduce'}",
            "time_created_ns": 1793613600_000000000 + seq * 1000, "input_sizes": [list(sizes)],
            "input_dtypes": ["Float"], "output_sizes": [list(sizes)], "output_dtypes": ["Float"],
            "state": "completed" if seq <= last_done else "started", "time_discovered_started_ns": None,
            "time_discovered_completed_ns": None, "retired": seq <= last_done, "timeout_ms": 600000,
            "is_p2p": False, "frames": [{"name": "train_step", "filename": "train.py", "line": 120}],
        })
    return {
        "version": "2.5", "rank": rank,
        "pg_config": {"0": {"name": "0", "desc": "default_pg", "ranks": "[0, 1]"}},
        "pg_status": {"0": {"last_enqueued_collective": last_enq, "last_started_collective": last_enq,
                            "last_completed_collective": last_done}},
        "entries": entries,
    }


def test_pickle_dump_gives_the_queue_state() -> None:
    res = read_flight_recorder(pickle.dumps(dump(3, 48213, 48212)), "fr/rank-3.pkl", node="node-01", rank=3)
    assert res.issues == []
    (ev,) = res.events
    assert ev.kind == "fr.pg_state" and ev.rank == 3 and ev.node == "node-01"
    f = ev.fields
    assert (f["pg"], f["pg_name"], f["last_enqueued"], f["last_completed"]) == ("0", "default_pg", 48213, 48212)
    assert (f["pending_seq"], f["pending_op"], f["pending_numel_in"]) == (48213, "all_reduce", 1024)
    assert "48213:all_reduce:1024:1024" in str(f["recent"])


def test_json_dump_reads_the_same() -> None:
    doc = dump(3, 10, 9)
    a = read_flight_recorder(pickle.dumps(doc), "a", rank=3).events[0].fields
    b = read_flight_recorder(json.dumps(doc).encode(), "b", rank=3).events[0].fields
    assert a == b


def test_p2p_entries_do_not_count_as_collectives() -> None:
    doc = dump(0, 5, 5)
    doc["entries"].append({"record_id": 99, "process_group": ("0", "default_pg"), "collective_seq_id": 0,
                           "p2p_seq_id": 7, "profiling_name": "nccl:send 0->1", "state": "scheduled",
                           "input_sizes": [[1]], "output_sizes": [[1]], "is_p2p": True})
    (ev,) = read_flight_recorder(pickle.dumps(doc), "f", rank=0).events
    assert "pending_seq" not in ev.fields


class _Evil:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (os.system, (f"touch {self.marker}",))


def test_malicious_pickle_is_refused_and_never_runs(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    payload = pickle.dumps({"version": "2.5", "entries": [_Evil(marker)]})
    with pytest.raises(UnsafeDumpError, match="refused"):
        load_dump(payload)
    res = read_flight_recorder(payload, "fr/rank-0.pkl", rank=0)
    assert res.events == []
    assert len(res.issues) == 1 and "refused" in res.issues[0].message and "system" in res.issues[0].message
    assert not marker.exists()


def test_garbage_is_an_issue_not_a_crash() -> None:
    res = read_flight_recorder(b"\x00\x01not a pickle", "f")
    assert res.events == [] and res.issues and res.issues[0].message.startswith("cannot read")
    res = read_flight_recorder(pickle.dumps([1, 2, 3]), "f")
    assert res.issues and "not a dict" in res.issues[0].message


# ---------------------------------------------------------------- stack dumps

PYSPY = """\
Process 3842: python train.py --config llama.yaml
Python v3.10.12 (/usr/bin/python3.10)

Thread 3842 (idle): "MainThread"
    wait (threading.py:324)
    get (queue.py:180)
    _try_get_data (torch/utils/data/dataloader.py:1133)
    _get_data (torch/utils/data/dataloader.py:1294)
    _next_data (torch/utils/data/dataloader.py:1332)
    __next__ (torch/utils/data/dataloader.py:631)
    train (train.py:88)
    <module> (train.py:200)
Thread 3901 (idle): "pin_memory"
    wait (threading.py:324)
"""

FAULTHANDLER = """\
Thread 0x00007f8b1c7fe700 (most recent call first):
  File "/usr/lib/python3.10/threading.py", line 320 in wait
  File "/usr/lib/python3.10/threading.py", line 600 in run

Current thread 0x00007f8b2e6c1740 (most recent call first):
  File "/opt/venv/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 2050 in all_reduce
  File "/opt/venv/lib/python3.10/site-packages/torch/distributed/c10d_logger.py", line 83 in wrapper
  File "/work/train.py", line 120 in train_step
  File "/work/train.py", line 200 in <module>
"""

# ray-project/ray#3187: an older py-spy (hex thread ids, tab-indented frames, no thread names)
PYSPY_OLD = (
    "Thread 0x7F4AACDE7700 (active)\n"
    "\t _get_next_task_from_local_scheduler (ray/worker.py:988)\n"
    "\t main_loop (ray/worker.py:1005)\n"
    "\t <module> (ray/workers/default_worker.py:105)\n"
)


def test_pyspy_data_loader_frame() -> None:
    (ev,) = read_stack_dump(PYSPY.encode(), "stacks/rank-3.txt", rank=3).events
    assert (ev.kind, ev.rank) == ("stack.frame", 3)
    assert (ev.fields["category"], ev.fields["func"], ev.fields["thread"]) == ("data_loader", "_try_get_data",
                                                                               "MainThread")
    assert ev.evidence.line == 7 and "dataloader.py:1133" in ev.evidence.text


def test_faulthandler_collective_frame() -> None:
    (ev,) = read_stack_dump(FAULTHANDLER.encode(), "s").events
    assert (ev.fields["category"], ev.fields["func"], ev.fields["line"]) == ("collective", "all_reduce", 2050)


def test_old_pyspy_innermost_frame_is_other() -> None:
    (ev,) = read_stack_dump(PYSPY_OLD.encode(), "s").events
    assert (ev.fields["category"], ev.fields["func"]) == ("other", "_get_next_task_from_local_scheduler")


def test_checkpoint_write_in_a_side_thread() -> None:
    text = (
        'Thread 10 (idle): "MainThread"\n'
        "    wait (threading.py:324)\n"
        'Thread 11 (active): "ckpt-writer"\n'
        "    write (torch/serialization.py:650)\n"
        "    save (torch/serialization.py:620)\n"
    )
    (ev,) = read_stack_dump(text.encode(), "s").events
    assert (ev.fields["category"], ev.fields["thread"]) == ("checkpoint", "ckpt-writer")
