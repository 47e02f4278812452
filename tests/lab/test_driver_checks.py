"""lab/driver.py's checks that a run's fault fired (a run whose fault did not fire is made again, `NotFired`)."""

from __future__ import annotations

import os
from pathlib import Path

from lab import driver


def test_a_memory_cgroup_that_killed_nothing_is_told_from_one_that_killed(tmp_path: Path) -> None:
    # cgroup v2's memory.events and v1's memory.oom_control, as the kernel writes them (mm/memcontrol.c
    # memory_events_show, mem_cgroup_oom_control_read): `oom_kill N` counts the OOM killer's kills in the cgroup
    v2 = tmp_path / "v2"
    v2.mkdir()
    (v2 / "memory.events").write_text("low 0\nhigh 0\nmax 412\noom 0\noom_kill 0\noom_group_kill 0\n")
    assert driver._memcg_oom_kills(v2) == 0  # the leak was reclaimed at the limit until the peers gave up
    (v2 / "memory.events").write_text("low 0\nhigh 0\nmax 97\noom 1\noom_kill 1\noom_group_kill 0\n")
    assert driver._memcg_oom_kills(v2) == 1
    v1 = tmp_path / "v1"
    v1.mkdir()
    (v1 / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
    assert driver._memcg_oom_kills(v1) == 2
    # near miss: a kernel that counts no kills (no such line, or no such file) says nothing: the run stands
    (v1 / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\n")
    assert driver._memcg_oom_kills(v1) is None
    assert driver._memcg_oom_kills(tmp_path / "missing") is None


def test_a_deepspeed_runs_shared_memory_files_go_with_it(tmp_path: Path) -> None:
    # DeepSpeed's CPU all-reduce workspace, one file per rank (deepspeed/ops/csrc/cpu/comm/shm.cpp: `%s_%d_%s_%s` of
    # its name, getuid(), MASTER_ADDR, MASTER_PORT, then `_<rank>`), never unlinked by DeepSpeed
    uid = os.getuid()
    own = [tmp_path / f"deepspeed_allreduce_buffer_{uid}_127.0.0.1_29500_{r}" for r in range(3)]
    # near misses: another run's (another port; a port that starts with this one's), another user's, not DeepSpeed's
    kept = [tmp_path / f"deepspeed_allreduce_buffer_{uid}_127.0.0.1_29501_0",
            tmp_path / f"deepspeed_allreduce_buffer_{uid}_127.0.0.1_295001_0",
            tmp_path / f"deepspeed_allreduce_buffer_{uid + 1}_127.0.0.1_29500_0",
            tmp_path / "torch_1234_5678_0"]
    for f in own + kept:
        f.write_bytes(b"x")
    driver._remove_ds_shm(29500, tmp_path)
    assert [f for f in own if f.exists()] == []
    assert all(f.exists() for f in kept)
