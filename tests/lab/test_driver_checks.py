"""lab/driver.py's checks that a run's fault fired (a run whose fault did not fire is made again, `NotFired`)."""

from __future__ import annotations

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
