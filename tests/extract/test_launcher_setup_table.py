"""Launchers' own words that the job could not start as it was set up, audited against each program's message
catalogue: Open MPI's and PRRTE's help topics (catalog/transport.yaml `local_statuses`, stacks ompi and mca, read by
extract/verbs.py sentence by sentence) and DeepSpeed's launcher (catalog/exceptions.yaml, family setup).

Provenance: the help texts are open-mpi/ompi v4.1.8's orte/ and ompi/ help-*.txt files and openpmix/prrte's src/
help-*.txt files (the topic beside each case), broken where those files break them, with our own values for their
`%s`; the DeepSpeed lines are deepspeedai/DeepSpeed deepspeed/launcher/runner.py's format strings (edaa72212) with
our own values, and the two ssh-check lines the public threads of tests/wild's
sw-apac-hpc-ai-bloom-deepspeed-hostfile-... (Gadi) and sw-deepspeed-cifar-2-node-hostfile-ssh-check-... (the
older DeepSpeed's own CalledProcessError). The near misses are ours."""

from __future__ import annotations

import pytest

from firstfault.catalog.tables import transport_table
from firstfault.model import Event
from tests.extract import helpers
from tests.extract.helpers import last_line


def setup_of(lines: list[str]) -> list[tuple[str, object]]:
    events: list[Event] = helpers.events(lines, "application")
    return [(e.fields["local_status"], e.fields.get("host")) for e in events
            if e.kind == "nccl.error" and e.fields.get("setup") is True]


_HELP_ROWS = [(row.name, t) for row in transport_table().local if row.stack in ("ompi", "mca") for t in row.texts]


@pytest.mark.parametrize(("name", "text"), _HELP_ROWS, ids=[f"{n}:{t[:40]}" for n, t in _HELP_ROWS])
def test_every_help_sentence_of_the_table_is_read_whole_on_its_line(name: str, text: str) -> None:
    # the form a launcher that joins the help text prints (horovodrun, a paste), behind a tag
    assert [n for n, _ in setup_of([f"[1,0]<stderr>:{text}"])] == [name]


@pytest.mark.parametrize(
    ("lines", "status"),
    [
        # help-orte-rmaps-base.txt [orte-rmaps-base:all-available-resources-used] (PRRTE's the same), framed
        (["-" * 74, "All nodes which are allocated for this job are already filled.", "-" * 74], "not_enough_slots"),
        # ... [rmaps:too-many-procs]
        (["Your job has requested a conflicting number of processes for the", "application:", "",
          "App: ./a.out", "number of procs:  16"], "not_enough_slots"),
        # orte/mca/rmaps/seq/help-orte-rmaps-seq.txt [seq:not-enough-resources]
        (["A sequential map was requested, but not enough node entries", "were given to support the requested "
          "number of processes:"], "not_enough_slots"),
        # help-orte-rmaps-ppr.txt / PRRTE's help-prte-rmaps-ppr.txt [ppr-too-many-procs]
        (["Your job has requested more processes than the ppr for", "this topology can support:"], "not_enough_slots"),
        # [rmaps:binding-target-not-found]: the sentence after the topic's `%s`
        (["A request was made to bind to l3cache, but an appropriate target could not", "be found on node gpu-07."],
         "binding_failed"),
        # PRRTE's help-prte-rmaps-base.txt [allocation-overload]
        (["A request was made to bind that would require binding", "processes to more cpus than are available in "
          "your allocation:"], "binding_failed"),
        # help-rmaps_rank_file.txt [no-rankfile], Open MPI 4's and PRRTE's
        (["Open RTE was unable to open the rankfile:", "    /home/u/ranks.txt"], "hostfile_invalid"),
        (["prterun was unable to open the rankfile:", "  Filename: /home/u/ranks.txt"], "hostfile_invalid"),
        # help-orterun.txt [orterun:appfile-not-found]
        (["Unable to open the appfile:", "", "    app.txt"], "hostfile_invalid"),
        # [orte-rmaps-base:no-mapped-node]
        (["There are no allocated resources for the application:", "  ./a.out",
          "that match the requested mapping:"], "hosts_outside_allocation"),
        # PRRTE's help-hostfile.txt [hostfile:extra-node-not-found], broken where PRRTE breaks it
        (["A hostfile was provided that contains at least one node not present in", "the allocation:"],
         "hosts_outside_allocation"),
        # help-orte-rmaps-base.txt [invalid-pattern]
        (["The mapping request contains a pattern that doesn't match", "the required syntax of #:object"],
         "mapping_directive_invalid"),
        # help-plm-rsh.txt [no-local-orted]
        (['The rsh PLS component was not able to find the executable "orted" in',
          "your PATH or in the directory where Open MPI/OpenRTE was initially installed,"], "daemon_not_found"),
        # help-ess-base.txt [ess-base:execv-error]
        (['The singleton application was not able to find the executable "orted" in',
          "your PATH or in the directory where Open MPI/OpenRTE was initially installed,"], "daemon_not_found"),
        # PRRTE's help-plm-ssh.txt [agent-not-found]
        (['The value of the MCA parameter "plm_ssh_agent" was set to a path', "that could not be found:", "",
          "  plm_ssh_agent: /usr/bin/rsh"], "launcher_not_found"),
        # help-oob-tcp.txt [no-included-found], [excluded-all]
        (["None of the TCP networks specified to be included for out-of-band communications", "could be found:", "",
          "  Value given: ib0"], "oob_interface_not_found"),
        (["The specified list of networks to be excluded for TCP out-of-band communications",
          "resulted in no networks being available:"], "oob_interface_not_found"),
        # help-oob-tcp.txt [version mismatch], PRRTE's spelling
        (["PRTE detected a mismatch in versions between two processes.  This",
          'typically means that you executed "mpirun" (or "mpiexec") from one'], "version_mismatch"),
        # help-mca-bml-r2.txt [unreachable proc]
        (["At least one pair of MPI processes are unable to reach each other for",
          "MPI communications.  This means that no Open MPI device has indicated", "",
          "  Process 1 ([[2613,1],0]) is on host: gpu-01", "  Process 2 ([[2613,1],1]) is on host: gpu-02",
          "  BTLs attempted: self"], "transport_unreachable"),
    ],
)
def test_a_launch_help_topic_in_its_printed_form_is_the_jobs_setup(lines: list[str], status: str) -> None:
    assert [n for n, _ in setup_of(lines)] == [status]


@pytest.mark.parametrize(
    "lines",
    [
        # help-errmgr-base.txt [failed-daemon-launch]: names possible causes, decides none (the lines above it do)
        ["ORTE was unable to reliably start one or more daemons.", "This usually is caused by:"],
        # ... [failed-daemon]: a daemon that could not call back (a network between the nodes as often as set-up)
        ["An ORTE daemon has unexpectedly failed after launch and before", "communicating back to mpirun. This "
         "could be caused by a number"],
        # help-plm-base.txt [daemon-died-no-signal]
        ["A daemon died unexpectedly with status 127 while attempting", "to launch so we are aborting."],
        # help-orte-rmaps-base.txt [rmaps:membind-not-supported]: a warning, the job goes on
        ["WARNING: a request was made to bind a process. While the system",
         "supports binding the process itself, at least one node does NOT"],
        # [no-available-resources]: nodes marked down count too
        ["No nodes are available for this job, either due to a failure to",
         "allocate nodes to the job, or allocated nodes being marked"],
        # a sentence's head going on in other words on its own line (the binding topic's words after its `%s`)
        ["planner: no slot, but an appropriate target could not be reserved before the deadline"],
        # the mapper's topic with the directive's name first: too common a tail to read alone, no row
        ["The specified mapping policy is not recognized:"],
    ],
)
def test_launch_words_that_name_no_setup_are_not_read_as_one(lines: list[str]) -> None:
    assert setup_of(lines) == []


# ---------------------------------------------------------------- DeepSpeed's launcher


@pytest.mark.parametrize(
    "line",
    [
        "ValueError: Hostfile contains multiple entries for worker-1, unable to proceed with launching",
        "ValueError: Hostfile contains a bad entry: worker-1 slots:8, unable to proceed with launching",
        "ValueError: Hostfile is empty or not formatted correctly, unable to proceed with launching.",
        "ValueError: Hostname 'worker-9' not found in hostfile",
        "ValueError: No slot '9' specified on host 'worker-1'",
        "ValueError: Cannot specify num_nodes/gpus with include/exclude",
        "ValueError: Num nodes is >1 but no extra nodes available via hostfile",
        "RuntimeError: Unable to proceed, no GPU resources available",
        "RuntimeError: Unable to detect suitable master address via `hostname -I`, please manually specify one via "
        "--master_addr",
        "RuntimeError: launcher 'pdsh' not installed.",
        # the Gadi thread (tests/wild sw-apac-hpc-ai-bloom-deepspeed-hostfile-gadi-...)
        "RuntimeError: Using hostfile at /home/552/dz9214/hostfile but host=gadi-gpu-v100-0011 was not reachable via "
        "ssh. If you are running with a single node please remove /home/552/dz9214/hostfile or setup passwordless "
        "ssh.",
        # DeepSpeed before the check was wrapped: its command's CalledProcessError (tests/wild sw-deepspeed-cifar-...)
        "subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no 192.168.3.100 hostname' returned "
        "non-zero exit status 255.",
    ],
)
def test_deepspeeds_launcher_refusing_the_launch_is_the_jobs_setup(line: str) -> None:
    drafts = last_line(line)
    assert [(d.kind, d.fields.get("setup")) for d in drafts] == [("app.exception", True)]


@pytest.mark.parametrize(
    "line",
    [
        # the same ssh command run by the job's own script, failing on the host (exit 1 is the command's, not ssh's)
        "subprocess.CalledProcessError: Command 'ssh -o PasswordAuthentication=no worker-1 hostname' returned "
        "non-zero exit status 1.",
        # another ssh command of the job's
        "subprocess.CalledProcessError: Command 'ssh worker-1 nvidia-smi' returned non-zero exit status 255.",
        # a host name in the job's own data, not DeepSpeed's host file
        "KeyError: \"Hostname 'worker-9' not found in inventory\"",
        # the words inside a longer message about something else
        "RuntimeError: retry budget exhausted: Unable to proceed, no GPU resources available in the pool were free",
    ],
)
def test_near_miss_the_launchers_words_elsewhere(line: str) -> None:
    assert [d for d in last_line(line) if d.fields.get("setup")] == []


# ---------------------------------------------------------------- Intel MPI's Hydra bootstrap


@pytest.mark.parametrize(
    "line",
    [
        # tests/wild sw-warpx-ci-intel-pvc-... (BLAST-WarpX/warpx#6980): 2021.x's form, ssh's own 255 on localhost
        "[mpiexec@runner-d8zbrqlyc-project-80-concurrent-0] Error: Unable to run bstrap_proxy on localhost:2 "
        "(pid 13546, exit code 65280)",
        # the older form (the az-hop thread's line) on the launching node itself, with ssh's own status (ours)
        "[mpiexec@hb120v3-3] check_exit_codes (../../../../../src/pm/i_hydra/libhydra/demux/hydra_demux_poll.c:117): "
        "unable to run bstrap_proxy on hb120v3-3.internal.cloudapp.net (pid 12608, exit code 65280)",
    ],
)
def test_hydras_ssh_bootstrap_that_cannot_log_into_its_own_node_is_the_launchs_setup(line: str) -> None:
    assert setup_of([line]) == [("bootstrap_self_refused", None)]


@pytest.mark.parametrize(
    "line",
    [
        # Azure/az-hop#906 (tests/wild unk-azhop-pbs-...): the proxy ran and exited 1 (status 256): not ssh's failure
        "[mpiexec@hb120v3-3] check_exit_codes (../../../../../src/pm/i_hydra/libhydra/demux/hydra_demux_poll.c:117): "
        "unable to run bstrap_proxy on hb120v3-3.internal.cloudapp.net (pid 12608, exit code 256)",
        # ssh's failure on another host: that node may be down or unreachable (ours)
        "[mpiexec@node01] Error: Unable to run bstrap_proxy on node02:8 (pid 4411, exit code 65280)",
        # the words without Hydra's tag (a comment, a forum's paraphrase)
        "# Error: Unable to run bstrap_proxy on localhost:2 (pid 1, exit code 65280)",
    ],
)
def test_near_miss_other_bootstrap_failures_decide_nothing(line: str) -> None:
    assert setup_of([line]) == []


# ---------------------------------------------------------------- torch.distributed, torchrun, JAX, Lightning


@pytest.mark.parametrize(
    "line",
    [
        # torch/distributed/rendezvous.py _env_error (tests/wild sw-env-rendezvous-master-addr-no-launcher-rife-52's
        # thread prints the MASTER_ADDR one)
        "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable MASTER_ADDR "
        "expected, but not set",
        "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK "
        "expected, but not set",
        "ValueError: Error initializing torch.distributed using tcp:// rendezvous: port number missing",
        "ValueError: Error initializing torch.distributed using file:// rendezvous: world size parameter missing",
        "RuntimeError: No rendezvous handler for tpc://",
        # torch/distributed/run.py
        "ValueError: Unsupported nproc_per_node value: four",
        "ValueError: Cuda is not available.",
        # any program's own check of the device it was told to use (CellBender's remove-background --cuda:
        # `assert torch.cuda.is_available(), "Trying to use CUDA, but CUDA is not available."`)
        "AssertionError: Trying to use CUDA, but CUDA is not available.",
        "RuntimeError: GPU is not available",
        'RuntimeError: nnodes=1:2:3 is not in "MIN:MAX" format',
        # jax/_src/distributed.py
        "ValueError: coordinator_address should be defined.",
        "ValueError: Number of processes must be defined.",
        "ValueError: The process id of the current process must be defined.",
        "ValueError: process_id and num_processes must be nonnegative, with process_id < num_processes. Got "
        "process_id=4, num_processes=4.",
        # Lightning's connector, device parser and CUDA accelerator
        "lightning.fabric.utilities.exceptions.MisconfigurationException: GPUs requested but none are available.",
        "MisconfigurationException: You requested to find 4 devices but this machine only has 2 GPUs.",
        "ValueError: You selected an invalid strategy name: `strategy='dpp'`. It must be either a string or an "
        "instance of `lightning.pytorch.strategies.Strategy`. Example choices: auto, ddp, ddp_spawn, deepspeed, ...",
        "ValueError: You set `strategy=ddp` but strategies from the DDP family are not supported on the MPS "
        "accelerator. Either explicitly set `accelerator='cpu'` or change the strategy.",
        "ValueError: `num_nodes` must be a positive integer, but got 0.",
        "MisconfigurationException: `Trainer(devices='x')` value is not a valid input using cuda accelerator.",
        "MisconfigurationException: `Trainer(strategy='ddp')` is not compatible with an interactive environment. Run "
        "your code as a script, or choose a notebook-compatible strategy: `Trainer(strategy='ddp_notebook')`.",
    ],
)
def test_a_frameworks_launch_check_is_the_jobs_setup(line: str) -> None:
    drafts = last_line(line)
    assert [(d.kind, d.fields.get("setup")) for d in drafts] == [("app.exception", True)]


@pytest.mark.parametrize(
    "line",
    [
        # a rendezvous that could not reach its store: a peer or the network, not these rows
        "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has "
        "failed. See inner exception for details.",
        # the program's own order of calls
        "RuntimeError: distributed.initialize should only be called once.",
        # GPUs another process holds: the node's state, no row
        "MisconfigurationException: You requested to find 4 devices but only 2 are currently available. The devices "
        "[0, 1] are occupied by other processes and can't be used at the moment.",
        # the words quoted inside another message
        "AssertionError: expected the log to say 'coordinator_address should be defined.' on a single host",
        "KeyError: 'Cuda is not available.'",
        # another feature not available, not the device
        "RuntimeError: CUDA graphs are not available in this build",
        "AssertionError: expected \"CUDA is not available\" in the log",
    ],
)
def test_near_miss_a_frameworks_other_words(line: str) -> None:
    assert [d for d in last_line(line) if d.fields.get("setup")] == []


def test_hydra_unable_to_open_the_host_file_is_the_launchs_setup() -> None:
    # pmodels/mpich lib/utils/args.c HYDU_parse_hostfile's format string, mpiexec's tag before it (our host and file)
    assert setup_of(["[mpiexec@login01] HYDU_parse_hostfile (lib/utils/args.c:324): unable to open host file: hosts",
                     "[mpiexec@login01] mpiexec_get_parameters (mpiexec/get_parameters.c:313): error parsing hostfile"
                     ]) == [("hostfile_invalid", None)]
    # the words in prose about a host file that was opened
    assert setup_of(["note: the launcher reported it was unable to open host file lists before 4.0"]) == []


# A launcher that finds no scheduler, or a build without the backend the distributed set-up asks for (catalog/
# exceptions.yaml, family setup): facebookincubator/submitit slurm/slurm.py, auto/auto.py and local/local.py;
# horovod/horovod runner/launch.py, common/basics.py, common/util.py and torch/cuda_util.cc; PaddlePaddle/Paddle's
# PADDLE_THROW texts and its pybind bindings' class names; PyTorch's c10d bindings (their format strings with our
# values; the Paddle AttributeError and the submitit ones as posted in PaddlePaddle/PaddleOCR#3493,
# facebookresearch/audiocraft#342 and IDEA-Research/DINO#70).
@pytest.mark.parametrize("line", [
    'RuntimeError: Could not detect "srun", are you indeed on a slurm cluster?',
    "ValueError: LocalExecutor can use only one node. Use nodes=1",
    "RuntimeError: Did not found an available executor among dict_keys(['debug', 'local', 'slurm']).",
    "ValueError: Horovod has not been built with MPI support. Ensure MPI is installed and reinstall Horovod with "
    "HOROVOD_WITH_MPI=1 to debug the build error.",
    "ValueError: Gloo support has not been built.  If this is not expected, ensure CMake is installed and reinstall "
    "Horovod with HOROVOD_WITH_GLOO=1 to debug the build error.",
    "ImportError: Extension horovod.torch has not been built: /opt/venv/horovod/torch/mpi_lib_v2.so not found",
    "RuntimeError: (Unavailable) PaddlePaddle should be compiled with NCCL and NCCL version >= 2.7.3 is needed.",
    "OSError: (PreconditionNotMet) PaddlePaddle should compile with GPU.",
    "AttributeError: module 'paddle.fluid.core_avx' has no attribute 'NCCLParallelContext'",
    "AttributeError: module 'paddle.base.libpaddle' has no attribute 'ProcessGroupNCCL'",
    "ImportError: cannot import name 'ProcessGroupNCCL' from 'torch._C._distributed_c10d' (unknown location)",
    "AttributeError: module 'torch.distributed' has no attribute 'init_process_group'",
    "RuntimeError: [enforce fail at operator.cc:46] op. Cannot create operator of type 'NCCLAllreduce' on the device "
    "'CUDA'. Verify that implementation for the corresponding device exist. It might also happen if the binary is not "
    "linked with the operator implementation code.",
])
def test_a_missing_scheduler_or_backend_is_the_launchs_setup(line: str) -> None:
    assert [d.kind for d in last_line(line) if d.fields.get("setup")] == ["app.exception"]


@pytest.mark.parametrize("line", [
    # another attribute of the same compiled modules: the program's own (a renamed API)
    "AttributeError: module 'paddle.fluid.core_avx' has no attribute 'set_feed_variable'",
    "AttributeError: module 'torch.distributed' has no attribute 'all_gather_into_tensr'",
    # submitit's other refusals of a parameter: the job's own call
    "ValueError: Provided visible_gpus=3 is not an instance of Sequence.",
    # the words about a future build, not this one
    "RuntimeError: PaddlePaddle should compile with GPUs in a later release",
    # an NCCL system error inside Caffe2 names no missing build (its cause is said elsewhere, or not at all)
    "RuntimeError: [enforce fail at cuda_nccl_gpu.cc:24] status == ncclSuccess. 2 vs 0.  Error at: cuda_nccl_gpu.cc24: "
    "system error",
])
def test_near_miss_other_words_of_those_programs(line: str) -> None:
    assert [d for d in last_line(line) if d.fields.get("setup")] == []
