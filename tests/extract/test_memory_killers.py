"""The node's memory killers in their own words, with the victim each names (catalog/scheduler.yaml's memory_limit
phrases, `{proc}`: extract/reasons.py, extract/jobend.py), and the lines that look alike and are no kill for memory.

Provenance: a line `as posted` is copied from the public thread named beside it; a line `filled in` is ours, written
from the printing program's format string cited beside it."""

from __future__ import annotations

import pytest

from firstfault.extract.reasons import line_literals, text_reasons
from tests.extract.helpers import events

# systemd-oomd's journal line as posted (zenn.dev a0f4b14aabf0d3, Ubuntu 22.04; systemd src/oom/oomd-manager.c)
OOMD = ("12月 17 10:04:41 user systemd-oomd[588]: Killed /user.slice/user-1000.slice/user@1000.service/app.slice/"
        "app-org.gnome.Terminal.slice/vte-spawn-f6518140-41fe-4a13-b828-55c5b8738fb8.scope due to memory pressure for "
        "/user.slice/user-1000.slice/user@1000.service being 57.97% > 50.00% for > 20s with reclaim activity")
OOMD_VICTIM = ("/user.slice/user-1000.slice/user@1000.service/app.slice/app-org.gnome.Terminal.slice/"
               "vte-spawn-f6518140-41fe-4a13-b828-55c5b8738fb8.scope")


def kills(lines: list[str], source: str = "syslog") -> list[dict[str, object]]:
    return [dict(ev.fields) for ev in events(lines, source, node="n1") if ev.kind == "host.oom_kill"]


@pytest.mark.parametrize(
    ("line", "killer", "victim"),
    [
        (OOMD, "systemd-oomd", OOMD_VICTIM),
        # filled in: systemd 248's swap wording (oomd-manager.c: `Killed %s due to swap used (%lu) / total (%lu) being
        # more than %s`)
        ("systemd-oomd[701]: Killed /system.slice/train.service due to swap used (8589017088) / total (8589930496) "
         "being more than 90.00%", "systemd-oomd", "/system.slice/train.service"),
        # filled in: systemd 256's (`Marked %s for killing due to memory pressure for %s being ...`)
        ("systemd-oomd[701]: Marked /user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope for killing "
         "due to memory pressure for /user.slice/user-1000.slice/user@1000.service being 71.20% > 50.00% for > 20s "
         "with reclaim activity", "systemd-oomd",
         "/user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope"),
        # filled in: earlyoom's kill (rfjakob/earlyoom kill.c kill_process: `sending %s to process %d uid %d "%s":
        # oom_score %d, oom_score_adj %d, VmRSS %lld MiB, cmdline "%s"`), a name with a space as the kernel's comm
        # may hold
        ('earlyoom[904]: sending SIGTERM to process 2232050 uid 1000 "python": oom_score 712, oom_score_adj 0, '
         'VmRSS 4514 MiB, cmdline "python train.py"', "earlyoom", "python"),
        ('earlyoom[904]: sending SIGKILL to process 4711 uid 1000 "Web Content": badness 900, VmRSS 3120 MiB',
         "earlyoom", "Web Content"),
        # as posted (transferwise/oomie's README, `kubectl get events`): the kubelet's SystemOOM message
        # (pkg/kubelet/oom/oom_watcher_linux.go) naming its victim
        ("30s         Warning   OOM         pod/demo-app-d944568f6-vnhk5   System OOM encountered, victim process: "
         "nginx, pid: 1270360, uid: 65534", "kubernetes", "nginx"),
    ],
)
def test_a_userspace_killer_names_its_victim(line: str, killer: str, victim: str) -> None:
    got = kills([line])
    assert len(got) == 1, got
    assert got[0]["killer"] == killer
    assert got[0]["proc"] == victim
    assert any(w in line for w in line_literals()), "prefilter: the line holds a literal of the table"


@pytest.mark.parametrize(
    "line",
    [
        # as posted (OpenRLHF/OpenRLHF#187; Ray's worker death, listing what may have killed it): a guess, no kill
        "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: "
        "Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. "
        "(1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. "
        "(3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors.",
        # filled in: earlyoom's decision before a kill that may not come (main.c poll_loop), its self-test (kill.c:
        # sig 0 is `0 (no-op signal)`) and its memory report
        "earlyoom[904]: low memory! at or below SIGTERM limits: mem 10.00%, swap 10.00%",
        'earlyoom[904]: sending 0 (no-op signal) to process 1 uid 0 "systemd": badness 0, VmRSS 12 MiB',
        "earlyoom[904]: mem avail:  1200 of 17518 MiB ( 6.85%), swap free: 13345 of 47119 MiB (28.32%)",
        # filled in: systemd-oomd that killed nothing (oomd-manager.c) and a unit's setting that lets it kill
        "systemd-oomd[588]: Failed to kill any cgroup(s) based on pressure: Operation not permitted",
        "ManagedOOMMemoryPressure=kill",
        # a memory limit in a configuration dump, a low-memory warning with no kill
        "spark.yarn.executor.memoryOverhead=4096 yarn.nodemanager.vmem-check-enabled=false memory limit: 8g",
        "WARNING: host memory is low (1.2 GiB available); consider reducing num_workers",
        # as posted: a SIGKILL alone names no killer (docs/verdict.md): the shell's (baichuan-inc/Baichuan2#119), Open
        # MPI's (kubeflow/mpi-operator#90), Hydra's (an MPLBM report, its EXIT CODE 9), DeepSpeed's launcher's
        # (2U1/Qwen-VL-Series-Finetune#79)
        "Killed",
        "mpirun.real noticed that process rank 1 with PID 39 on node mpi-test-2-mpijob-worker-1 exited on signal 9 "
        "(Killed).",
        "=   EXIT CODE: 9",
        "[ERROR] [launch.py:325:sigkill_handler] exits with return code = -9",
    ],
)
def test_a_line_that_names_memory_or_a_sigkill_is_no_memory_kill(line: str) -> None:
    assert kills([line], "application") == []
    assert kills([line], "syslog") == []


def test_the_victim_placeholder_is_read_only_where_a_row_has_one() -> None:
    # a phrase without `{proc}` names no victim (the kubelet's eviction names the container in its own words)
    hits = text_reasons("The node was low on resource: memory. Container egg was using 5053216Ki.")
    assert hits and all(h.victim is None for h in hits)


@pytest.mark.parametrize(
    "line",
    [
        # as posted: jmonlong/PopSV#7 (jobacct_gather's kill); the cgroup plugin's count in its wordings: before
        # 21.08 (lanl/PyBNF#118), since (ccpem/affinity-vae#192), cgroup/v2's (allenai/OLMo#788); its plural filled
        # in from the format (`Detected %lu oom_kill event%s in %ps`)
        "slurmstepd: error: Job 42664148 exceeded memory limit (10889240 > 4194304), being killed",
        "slurmstepd: error: Detected 2 oom-kill event(s) in step 3756240.batch cgroup. Some of your processes may "
        "have been killed by the cgroup out-of-memory handler.",
        "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=487912.batch cgroup. Some of your processes may "
        "have been killed by the cgroup out-of-memory handler.",
        "slurmstepd: error: Detected 1 oom_kill event in StepId=9178265.0. Some of the step tasks have been OOM "
        "Killed.",
        "slurmstepd: error: Detected 2 oom_kill events in StepId=4242.4. Some of the step tasks have been OOM Killed.",
        # filled in: common_jag.c's virtual memory twin (`Step %u.%u exceeded virtual memory limit (%lu > %lu), being
        # killed`)
        "slurmstepd: error: Step 4242.0 exceeded virtual memory limit (52428800 > 41943040), being killed",
    ],
)
def test_slurmstepd_kills_for_memory_are_rows_of_the_table(line: str) -> None:
    got = kills([line], "application")
    assert [k.get("proc") for k in got] == ["slurm"]
    assert any(w in line for w in line_literals())


@pytest.mark.parametrize(
    "line",
    [
        # filled in: the cgroup plugin's end-of-step word (task_cgroup_memory.c): a limit reached, its page cache
        # counted too, no kill by itself
        "slurmstepd: error: Exceeded step memory limit at some point.",
        "slurmstepd: error: Exceeded job memory limit at some point.",
        # a person's account of a job, no killer's record
        "I think my job exceeded memory limit, how do I raise --mem?",
    ],
)
def test_slurm_words_on_a_limit_reached_are_no_kill(line: str) -> None:
    assert kills([line], "application") == []


# ---------------------------------------------------------------- the kernel's announcement before 5.0

# as posted (NervanaSystems/deepspeech#48): a kernel before 5.0 names the task it chose, then the one it killed
ANNOUNCED = "[3017506.733819] Out of memory: Kill process 25635 (python) score 974 or sacrifice child"
KILLED = "[3017506.736861] Killed process 25635 (python) total-vm:55518724kB, anon-rss:23902876kB, file-rss:154436kB"


def test_an_excerpt_cut_after_the_kernels_announcement_is_the_kill() -> None:
    got = kills([ANNOUNCED], "kernel")
    # no victim: a child of the task named may be the one killed (`or sacrifice child`)
    assert got == [{"invoked": True, "cgroup": False}]


@pytest.mark.parametrize(("line", "cgroup"), [
    # filled in: the same format (mm/oom_kill.c oom_kill_process `%s: Kill process %d (%s) score %u or sacrifice
    # child`) with the memory cgroup's message and the oom_kill_allocating_task sysctl's
    ("[812.5] Memory cgroup out of memory: Kill process 4242 (python) score 1000 or sacrifice child", True),
    ("[812.5] Out of memory (oom_kill_allocating_task): Kill process 4242 (python) score 0 or sacrifice child", False),
])
def test_the_announcement_in_every_message_of_the_kernel(line: str, cgroup: bool) -> None:
    assert kills([line], "kernel") == [{"invoked": True, "cgroup": cgroup}]


def test_the_kill_after_the_announcement_names_the_victim() -> None:
    # both are read; engine/normalise.py keeps the `Killed process` alone (test below, through the analysis)
    got = kills([ANNOUNCED, KILLED], "kernel")
    assert [k.get("proc") for k in got] == [None, "python"]


@pytest.mark.parametrize("line", [
    # a person's account quoting the words, no kernel's record (no pid, no score)
    "the kernel said Out of memory: Kill process or sacrifice child and my job died",
    # filled in: the kernel's own report that it chose no task (mm/oom_kill.c out_of_memory, `Out of memory and no
    # killable processes...`): no kill
    "[812.5] Out of memory and no killable processes...",
])
def test_words_alike_are_no_announcement(line: str) -> None:
    assert kills([line], "kernel") == []
