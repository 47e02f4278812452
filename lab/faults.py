"""The lab's faults: how each one is injected and what the verdict must be.

The expectation is decided here, from the fault alone, before any run and
without looking at firstfault's answer. `affected_nodes` uses the placeholder
"{node}" for the node the faulty rank ran on (the real hostname under bare
torchrun, `ffnode1` under the test Slurm); the driver writes the resolved
expected.yaml into the bundle before the job starts.

Rules used to decide the expectations:
- a Python exception raised by the workload: software / app.exception;
- a signal the process raised on itself (SIGSEGV, SIGABRT), in the rank or in
  one of its DataLoader workers: software / app.crash;
- NaN detected by anomaly mode or a NaN guard: software / app.numerics;
- the kernel's memcg OOM killer (with its kernel-log record) or slurmstepd killing the step over its
  --mem: software / host.oom;
- ENOSPC writing a checkpoint: storage / storage.filesystem;
- Slurm time limit / scancel: scheduler / scheduler.time_limit | scheduler.cancelled;
- a hang (a rank stops inside the step; the others time out in a collective or
  in monitored_barrier) and a SIGKILL from outside with no OOM record: nothing
  in the evidence establishes why the rank stopped or who killed it, so
  `unknown` and no affected nodes; a tool naming a definitive cause there is wrong;
- a run that completed, warnings and caught exceptions included: `none`;
  so is a run whose first torchrun attempt failed and whose restart completed;
- a signal sent from outside (SIGTERM, SIGINT, SIGUSR1 through scancel --signal, to a rank or to the
  torchrun agent) with no scheduler record of a cancellation, and a rank that exits by itself with no
  message (os._exit(3), or a clean return while the others wait in a collective), or that never joins
  the process group: nothing establishes why, so `unknown` with no affected nodes;
- a Python MemoryError or a failed tensor allocation under a per-process address-space limit
  (RLIMIT_AS, `ulimit -v`) is an exception the workload raised, not an OOM kill: software / app.exception;
- EROFS writing a checkpoint: storage / storage.filesystem, like ENOSPC.

Third round (new launchers, the job's own set-up, the scheduler acting on nodes, checkpoints read back):
- the same rules hold under every launcher (mpirun + mpi4py, PyTorch Lightning's own launcher, JAX's processes,
  a Ray Train job): an exception is app.exception, a SIGKILL from outside and a hang are `unknown`, a clean
  run is `none`, whatever the launcher then says about the peers (MPI_ABORT, "exited on signal 9", Ray's
  "actor died", Lightning's "terminated with code"); a hang that a launcher's own limit ends (mpirun
  --timeout) is still a hang: the limit names no cause, unlike a scheduler's time limit on a job that was
  only slow;
- the job's own set-up and environment (its master port already taken, a backend the machine lacks, a
  parallel layout that does not fit the world size, an environment variable the rendezvous needs and the
  script does not set): the workload's configuration, software / app.exception on the node that reported
  it, never a network cause, whatever errno a socket call gave;
- a checkpoint that cannot be read back (cut short, a shard missing) with no error from the storage
  itself: the workload's exception reading it, software / app.exception; the storage is the cause only
  when it reports an error (ENOSPC, EROFS, EIO ...);
- a node set DOWN while the job runs (`scontrol update state=down`, as an administrator or a health
  check does with a bad node): slurmctld ends the job NODE_FAIL; the job was lost with its node, below
  the workload: infrastructure / node, on that node (why the node went down is not in the job's evidence);
- a node DRAINed, or a partition set DOWN, while the job runs: Slurm lets the running job finish (both
  stop new work only); it completes: `none`;
- `scontrol requeue` of a running job: Slurm kills it and runs it again; the run that ends the job
  completes: `none`, like a torchrun restart that recovers.

Fifth round (the job's own environment, where the log shows the cause only as a generic error; docs/verdict.md
decides each): a limit the job gives its own processes (the open-file limit, `nofile`), an interface, address or
device the job's set-up names and the host does not have (GLOO_SOCKET_IFNAME, a MASTER_ADDR that does not resolve,
`cuda` on a build without it) are `app.exception.setup` on the node that reported it, never a network or a
hardware cause; a file the job may not write (EACCES on a checkpoint directory: "EACCES on a file is the
workload's I/O", catalog/exceptions.yaml) and a module missing from one rank's path are the workload's own
`app.exception`, never storage.

Sixth round (lab breadth, issue 25; docs/verdict.md decides each):
- the other limits the job's container, login or scheduler gives its processes are the job's environment as `nofile`
  is (verdict.md: "a limit the job's container, scheduler or login gives its processes ... never a crash, a storage
  full"): a process or thread that cannot be made under a pids limit (`nproc`), a file the process may not grow
  past RLIMIT_FSIZE (EFBIG: Python ignores SIGXFSZ, so the write fails), CPU time past RLIMIT_CPU (the kernel's
  SIGXCPU ends the process; a scheduler's CPU-time limit, PBS's `cput`, is set the same way): `app.exception.setup` on
  the node whose process hit it, never `app.crash` for the signal and never storage for the errno;
- the memory cgroup's OOM killer (with its kernel-log record) killing a DataLoader worker rather than the rank is
  `host.oom` as for the rank: the kernel's record names the kill, whichever process of the job it took;
- a checkpoint that the loading code refuses (torch.load's weights-only unpickler refusing an object the file holds,
  a state dict of another shape than the model's) is the workload's exception reading it: `app.exception`;
- a distributed mistake of the training code that PyTorch reports (DDP's parameters that took no part in the loss):
  `app.exception`;
- a compiler the job's environment names and the host does not have (torch.compile's Inductor with no working C++
  compiler, a container image without one): `app.exception.setup` (a tool the job's set-up needs and the host lacks,
  as a backend or a device);
- a launcher refusing the job's own request for more than the host gives (mpirun's ranks over the host's slots,
  Lightning's `accelerator="gpu"` on a host without one): `app.exception.setup` (verdict.md: "what the job asked
  for against what is there");
- a rank stopped from outside (SIGSTOP: frozen, as a debugger, a `kill -STOP` or a cgroup freezer leaves it): the
  peers time out and the launcher ends it, a hang by any other name: `unknown`, no affected nodes;
- a process count the job's JAX set-up names above the processes launched (num_processes 4 for 3): the coordinator
  waits for a process that never comes and times out; the evidence is a missing peer's, which names no cause (as
  rdzv_timeout's node that never came): `unknown`.

Seventh round (lab breadth, issue 25; docs/verdict.md decides each):
- a rank that raises the same exception on every attempt until torchrun's `--max-restarts` is spent: the exception,
  `app.exception`, as for one attempt (the restarts only repeat it);
- a rank that ends the job with MPI_Abort and prints nothing of why (mpi4py's `comm.Abort(3)`): a rank gone by its
  own call with no message, as `os._exit(3)`; MPI_Abort's errorcode names no cause (verdict.md: "never a signal"):
  `unknown`, no affected nodes;
- a host list (mpirun's or DeepSpeed's hostfile) naming a host that does not exist (a name that does not resolve):
  what the job's launch asked for against what is there, as a MASTER_ADDR that does not resolve:
  `app.exception.setup` on the node whose launcher reported it, never a network or a node cause;
- a data file that cannot be read back (a parquet file cut short), read in a DataLoader worker, with no error from
  the storage itself: the workload's exception reading it, `app.exception`, as a checkpoint cut short;
- a DataLoader worker that stalls until the DataLoader's own `timeout=` ends the wait: a hang that the job's own
  limit ends is still a hang (as mpirun --timeout): `unknown`, no affected nodes;
- a file lock on the node that another process holds (a leftover of an earlier job) past the job's own wait
  (filelock's `Timeout`): a resource of the node that another process holds, as the third round's port in use:
  the workload's exception on that node, `app.exception` (the prefix; `.setup` fits too);
- torch.compile refusing one rank's code (Dynamo's `UserError` on a data-dependent branch) and a state dict that one
  rank loads with strict=True and whose keys do not match (saved from the DDP wrapper, `module.` prefixes): the
  workload's exception, `app.exception`, on that rank's node;
- a rank whose stdout's reader went away (the pipe to a log collector closed: BrokenPipeError on its next print):
  the rank's end is the reader's loss, which the evidence does not explain (EPIPE is a peer's side,
  catalog/exceptions.yaml): `unknown`, no affected nodes.

Eighth round (lab breadth, issue 25; docs/verdict.md decides each):
- a file in the checkpoint's place that is no checkpoint (a Git LFS pointer a clone without `git lfs pull` leaves),
  read with torch.load: the workload's exception reading it, `app.exception`, as a checkpoint cut short;
- a checkpoint directory that another rank of the job removed before the save into it (a clean-up of old
  checkpoints racing the save): the workload's own bug, `app.exception` on the node of the rank that raised; no
  storage error (ENOENT on a file is the workload's I/O);
- a launch agent that the job's mpirun is configured with (`plm_rsh_agent`, as an MPI operator's kubexec script or a
  site's `false` gives it) failing to start Open MPI's daemon on a host of the job's host list: what the job's
  launch asked for against what is there, as the seventh round's unresolvable host: `app.exception.setup` on the
  node whose mpirun reported it, never a network or a node cause;
- a batch size that does not fit the world size (DeepSpeed's `train_batch_size` against micro batch x
  accumulation x ranks): verdict.md's "parallel or batch sizes that do not fit the world size",
  `app.exception.setup`;
- an address the job's set-up names where nothing listens (JAX processes given the coordinator port of an earlier
  run, so they dial a port no process has): the evidence is a coordinator that does not answer, as a coordinator not
  up yet or gone gives it (verdict.md: "not a rendezvous that could not reach its store"): `unknown`, no affected
  nodes;
- a task prolog the job gives srun (`--task-prolog`) failing on the node: the job's own set-up of its tasks, no rank
  ran: `app.exception.setup` on that node (the site's Prolog is another matter: below);
- the site's Slurm Epilog failing after the job completed (slurmctld drains the node): verdict.md "its epilog ...
  name[s] no cause of the job's end": the job succeeded, `none`;
- the site's Slurm Prolog failing on the job's node (slurmctld drains the node and requeues the batch job held):
  verdict.md `node.scheduler`, "the job's prolog failing", infrastructure, on that node; the job never ran, so no
  outcome is asserted.

Ninth round (lab breadth, issue 25: storage, network, launchers, the scheduler; docs/verdict.md decides each):
- a FUSE mount the job reads its data through (as gcsfuse, s3fs or mount-s3 serve a bucket) whose daemon is gone
  (killed): the ranks' reads fail with ENOTCONN (`Transport endpoint is not connected`); verdict.md's
  `storage.filesystem` names "a FUSE mount whose daemon is gone (ENOTCONN)": storage, on the node; nothing records
  why the daemon died, but the storage under the job is where its failure began;
- a checkpoint written to a file system whose block device fails under it (ext4 on a loop device whose image file a
  FUSE daemon serves, as a network block device's server does; the daemon dies): the save's fsync fails with EIO
  and the kernel logs the block layer's `I/O error, dev loopN` and ext4's errors (captured with dmesg as the node's
  kernel log): verdict.md's `storage.filesystem`, "the block layer's `I/O error, dev sdX`", "EIO ... on a
  checkpoint": storage, on the node;
- a checkpoint written to a thin-provisioned volume whose backing store is exhausted (ext4 on a loop device over a
  sparse image on a small tmpfs: the file system shows room, its device cannot take the blocks): the save's fsync
  fails with ENOSPC and the kernel logs `critical space allocation error, dev loopN` and `Buffer I/O error`: ENOSPC
  on a checkpoint, `storage.filesystem`, on the node;
- a rank whose TCP connections to its peers a firewall rule drops mid-run (iptables DROP on the rank's own ports,
  both ways): the rank and its peers time out in the collective (gloo, 10 s); a timeout alone is a peer or the
  network and establishes neither, and nothing in the job's evidence names the rule: `unknown`, no affected nodes;
- mpirun asked for a BTL component that does not exist (`--mca btl foo`): "a transport finding no interface,
  component or locked memory the job's set-up gave it": `app.exception.setup` on the node whose mpirun reported it;
- a Slurm job whose time limit an administrator shortens while it runs (`scontrol update jobid=N timelimit=1`):
  slurmctld ends it at the new limit (TIMEOUT); a time limit is the scheduler's end of the job whoever set it:
  `scheduler.time_limit`, outcome timeout, no affected nodes;
- (added after the first six ran, before their own first run) an environment variable the job's launch passes its
  ranks (`mpirun -x PYTHONHOME=...`, a login node's Python that the compute node does not have) that keeps every
  rank's interpreter from starting: the job's own set-up and environment, as the third round's missing MASTER_ADDR:
  `app.exception.setup` on the node;
- a Slurm array job one of whose tasks fails (task 0 completes, task 1's rank 1 raises): the failed task's
  exception, `app.exception` on the node; the array's other task completing changes nothing.

Tenth round (lab breadth, issue 25: checkpoints and data written and read through the libraries jobs use beside
torch.save, h5py / HDF5, netCDF4, orbax-checkpoint over TensorStore; docs/verdict.md decides each):
- a checkpoint or output file written through such a library into a file system that is full (ENOSPC, whatever the
  library's own words around it: HDF5's `file write failed ... errno = 28`, TensorStore's `RESOURCE_EXHAUSTED ... [OS
  error 28]`, or netCDF's `NetCDF: HDF error`, which hides the errno): ENOSPC writing a checkpoint or the job's data,
  storage / storage.filesystem on the node, as the first round's enospc_checkpoint (whose C++ writer named no errno
  either): the expectation is the fault's, not what its evidence happens to say;
- two ranks of one job opening the same HDF5 file for writing at once (the second meets HDF5's file lock, `unable to
  lock file, errno = 11`): a resource the job's own other process holds, the job's own bug: the workload's exception,
  `app.exception` on that rank's node (never storage: the file system did what it should; a lock a mount does not
  give at all, ENOSYS / ENOTSUP, is the set-up's, not made here);
- an output the job asks its library not to write over that is already there (netCDF4's `clobber=False`, `NetCDF:
  File exists && NC_NOCLOBBER`; orbax's save to a step directory an earlier run of the same experiment left,
  `Destination ... already exists.`): verdict.md's "what the job asked for that cannot be (... an output enroot will
  not write over ...)" and "a working directory or output file the node cannot give": `app.exception.setup` on the
  node of the rank that raised;
- an HDF5 checkpoint cut short and read back (`truncated file: eof = ...`) with no error from the storage itself: the
  workload's exception reading it, `app.exception`, as the third round's ckpt_truncated.

Eleventh round (lab breadth, issue 25: Dask as a launcher, torchrun's elastic restarts; docs/verdict.md decides each):
- the same rules hold under Dask (a `dask scheduler`, `dask worker`s under their nannies, a client): a task's
  exception is `app.exception` on the node of the worker that ran it, a clean run is `none`;
- a task that grows past its worker's `--memory-limit` (the job's own limit on each worker process), so that the
  worker's nanny kills the worker over its memory budget (and restarts it, the scheduler retrying the task on
  another worker that dies alike until it gives up with KilledWorker): a memory killer enforcing a memory limit,
  as slurmstepd's over `--mem` or YARN's container limit (verdict.md `host.oom`: "a userspace memory killer ... or
  the scheduler's memory-limit enforcement ... killing a rank"), never a crash: `host.oom` on that node; the
  KilledWorker that ends the client is the retries' end, a symptom;
- a task that kills its own worker process with a signal it raises on itself (SIGSEGV from a NULL dereference) on
  every try, until the scheduler gives up (KilledWorker): a signal the process raised on itself, `app.crash` on the
  node; the first worker's death is where it began, the retries and KilledWorker are its consequence;
- the workers and the client given a scheduler address where nothing listens (a stale port of an earlier run; the
  scheduler listens on another): as the eighth round's JAX coordinator port, the evidence is a scheduler that does
  not answer, which a scheduler not up yet or gone gives alike (verdict.md: "not a rendezvous that could not reach
  its store"): `unknown`, no affected nodes;
- torchrun agents of one elastic job (`--nnodes=1:2`, one c10d rendezvous): the first agent's worker raises with no
  restarts left (`--max-restarts=0`), the agent fails and closes the rendezvous; a second agent that comes late
  meets the closed rendezvous (RendezvousClosedError): the first worker's exception, `app.exception` on its node;
  the closed rendezvous is its consequence;
- a rank that fails in the first attempt (an exception) and, after torchrun restarts the group, fails otherwise
  in the second (a signal it raises on itself) until the restarts are spent: the first attempt's failure is where
  it began, `app.exception` on the node (the second attempt's crash is what the restart met, not the first cause).
Twelfth round (lab breadth, issue 25: Grid Engine as a real scheduler; docs/verdict.md decides each):
- the same rules hold under Grid Engine (Debian's 8.1.9, a cell of the lab's own: `qsub -pe smp 3` of a job script
  that runs torchrun's 3 ranks on the host, its `-o` / `-e` files): an exception is `app.exception` on the node, a
  clean run is `none`;
- a hard run-time limit the job asked for (`qsub -l h_rt=N`) that the job runs past: the execd kills the job when the
  wall clock passes it (qacct `failed 37 : qmaster enforced h_rt, h_cpu, or h_vmem limit`, `exit_status 137`): the
  scheduler's time limit, as Slurm's TIMEOUT: scheduler / `scheduler.time_limit`, outcome timeout, no affected nodes;
- a hard virtual-memory limit the job asked for (`qsub -l h_vmem=`, per slot), which the execd enforces on the job's
  processes together: ranks that leak take the job past it and the execd kills the job (`job N.1 exceeds job hard
  limit "h_vmem" ... sending SIGKILL`): verdict.md `host.oom`, "the scheduler's memory-limit enforcement (... SGE
  h_vmem ...) killing a rank", on the node (the per-process RLIMIT_AS the shepherd also sets, h_vmem x slots, is
  above each leaking rank, so no allocation fails first: that would be the second round's `app.exception`);
- a running job deleted with `qdel` (its owner or an administrator): cancelled by a user, scheduler /
  `scheduler.cancelled`, outcome cancelled, no affected nodes; the SIGKILL and the peers' errors are its consequence.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Mode = Literal["torchrun", "slurm", "mpirun", "lightning", "jax", "ray", "accelerate", "deepspeed", "dask", "tf", "sge"]
# run on this host by lab.driver.run_local
LOCAL_MODES = ("mpirun", "lightning", "jax", "ray", "accelerate", "deepspeed", "dask", "tf")

SOFTWARE_NODE = ["{node}"]


@dataclass(frozen=True)
class Fault:
    name: str
    mode: Mode
    description: str
    domain: str
    category: str | None = None
    outcome: str | None = "failed"
    affected_nodes: list[str] = field(default_factory=lambda: list(SOFTWARE_NODE))
    # injection
    lab_fault: str = ""  # LAB_FAULT for train.py (default: the name)
    ranks: str = "1"
    step: int = 3
    steps: int = 6
    kill_from_outside: bool = False  # the driver kill -9s the faulty rank at its marker
    tmpfs_checkpoint: bool = False  # the checkpoint directory is a 1 MiB tmpfs
    # slurm only
    slurm_output: Literal["label", "per-task"] = "label"
    sbatch_opts: tuple[str, ...] = ()
    scancel_at_marker: bool = False
    memcg_limit: int | None = None  # torchrun only: run the job in a memory cgroup (v1) of this many bytes
    slurm_profile: Literal["harness", "jobacct", "cgroup", "admin", "epilog", "prolog"] = "harness"  # which Slurm
    #                                                                                        (lab/slurm.py)
    mem: str | None = None
    timeout: float = 120.0
    # more injection knobs (all default off)
    outside_signal: int = 9  # the signal kill_from_outside sends (9 SIGKILL, 15 SIGTERM, 2 SIGINT)
    signal_agent: bool = False  # kill_from_outside signals the torchrun agent itself, not the rank
    max_restarts: int = 0  # torchrun --max-restarts
    tmpfs_readonly: bool = False  # tmpfs_checkpoint mounted read-only (EROFS)
    srun_opts: tuple[str, ...] = ()  # slurm only: extra srun options
    scancel_opts: tuple[str, ...] = ()  # slurm only: extra scancel options (--signal=USR1)
    shm_size: str | None = None  # torchrun only: a private /dev/shm of this size (a mount namespace)
    rdzv: tuple[str, ...] = ()  # torchrun only: rendezvous options instead of --standalone ({port}: a free port)
    python: str | None = None  # slurm only: the interpreter path the batch script runs (a wrong one)
    # third round: new launchers, the job's own set-up, the scheduler acting on nodes and partitions
    launcher_opts: tuple[str, ...] = ()  # mpirun only: more mpirun options (--timeout N)
    lane: str = ""  # faults of one lane run one after the other (they share a Slurm node or a Ray cluster)
    occupy_port: bool = False  # torchrun only: something already listens on the rdzv option's {port}
    omit_master_env: bool = False  # slurm only: the batch script does not export MASTER_ADDR / MASTER_PORT
    admin_at_marker: tuple[tuple[str, ...], ...] = ()  # slurm only: scontrol commands once every rank paused
    admin_after: tuple[tuple[str, ...], ...] = ()  # slurm only: scontrol commands that undo them after the job
    term_after_marker: float | None = None  # SIGTERM every launched process this long after the fault's marker
    # fourth round: the launcher's first start on a machine builds something (DeepSpeed JIT-compiles its CPU
    # shared-memory op: minutes on 2 cores), so the quick test run (tests/lab/selection.py's sample) never takes it
    slow_first_start: bool = False
    # fifth round: the job's own environment
    job_env: tuple[tuple[str, str], ...] = ()  # variables the job's environment sets (as its script exports them),
    #                                            for every rank, under any launcher
    drop_dac_override: bool = False  # torchrun only: the job runs without CAP_DAC_OVERRIDE / CAP_DAC_READ_SEARCH
    #                                  (setpriv), so file modes bind it as they bind a user that is not root
    # sixth round: lab breadth
    pids_cgroup: bool = False  # torchrun only: the driver makes a pids cgroup (v1) the fault rank joins and limits
    oversubscribe: bool = True  # mpirun only: --oversubscribe (off: Open MPI holds the job to the hosts' slots)
    # seventh round: lab breadth
    hostfile: tuple[str, ...] = ()  # mpirun, deepspeed: the lines of a hostfile the launcher is given (--hostfile)
    hold_lock: str = ""  # torchrun only: a file (under the job's work directory) the driver holds an flock on
    # eighth round: lab breadth
    task_prolog: str = ""  # slurm only: the body of a task prolog script the driver writes and srun runs
    #                        (--task-prolog) before each task
    ends_held: bool = False  # slurm only: the job ends held in the queue (a failed prolog requeues it held): the
    #                          driver records it once held and then cancels it
    # ninth round: storage under the job, its network, acted on by the driver once the fault ranks paused
    #   (train.py `pause`: a marker, then the ranks wait for the driver's `go` file)
    fuse_data: bool = False  # torchrun only: the ranks read their shards through a FUSE mount (bindfs) of the data
    #                          directory, as a bucket's FUSE client serves it
    loop_checkpoint: Literal["", "fuse", "thin"] = ""  # torchrun only: the checkpoint directory is an ext4 on a loop
    #   device whose image a FUSE daemon serves ("fuse") or lies sparse on a 4 MiB tmpfs ("thin", thin provisioning)
    kill_fuse_at_marker: bool = False  # the driver kill -9s the FUSE daemon once the fault ranks paused
    drop_rank_ports: bool = False  # the driver drops the fault rank's TCP connections (iptables, lo, both ways) once
    #                                it paused, and removes the rules after the job
    kernel_log: bool = False  # the node's kernel log (dmesg -T) for the run's window goes into the bundle
    array: str = ""  # slurm only: sbatch --array (e.g. "0-1%1"); the fault fires in the array task `array_task` only
    array_task: int = 1
    # eleventh round: Dask, torchrun's elastic restarts
    worker_memory_limit: str = ""  # dask only: each `dask worker`'s --memory-limit (its nanny enforces it)
    stale_scheduler_port: bool = False  # dask only: the workers and the client dial a port where nothing listens
    late_agent: bool = False  # torchrun only: the rendezvous store in a process of its own (the rdzv option's
    #   {port}); a second torchrun agent of the same elastic job (its own log, nodes/<host>/torchrun-agent2.log)
    #   starts once the first agent has ended
    # twelfth round: Grid Engine (lab/sge.py; `scancel_at_marker` is qdel there)
    qsub_opts: tuple[str, ...] = ()  # sge only: more qsub options (-l h_rt=60, -l h_vmem=1800M)

    @property
    def train_fault(self) -> str:
        return self.lab_fault or self.name

    def expected(self, node: str) -> dict[str, Any]:
        out: dict[str, Any] = {"description": self.description}
        if self.outcome:
            out["outcome"] = self.outcome
        out["domain"] = self.domain
        if self.category:
            out["category"] = self.category
        out["affected_nodes"] = [node if n == "{node}" else n for n in self.affected_nodes]
        return out


def _sw(name: str, category: str, description: str, **kw: Any) -> Fault:
    return Fault(name=name, mode=kw.pop("mode", "torchrun"), description=description, domain="software",
                 category=category, **kw)


def _unknown(name: str, description: str, **kw: Any) -> Fault:
    return Fault(name=name, mode=kw.pop("mode", "torchrun"), description=description, domain="unknown",
                 category=None, affected_nodes=[], **kw)


def _launcher_faults(mode: Mode, words: str) -> list[Fault]:
    """One launcher's four faults: an exception on rank 1, rank 1 killed from outside, rank 1 hung, a clean run."""
    hang_end = {
        "mpirun": "MPI has no collective timeout: mpirun --timeout 20 ends the job",
        "lightning": "the others time out in the DDP allreduce (gloo, 10 s) and Lightning ends the job",
        "jax": "XLA's gloo all-gather has no timeout and the others wait in it; 15 s later every process gets "
               "SIGTERM from outside and SIGKILL 5 s after (as `timeout --kill-after` does; JAX's preemption notifier "
               "takes the SIGTERM as a notice and goes on)",
        "ray": "the others time out in the DDP allreduce (gloo, 10 s) and Ray Train ends the run",
        "accelerate": "the others time out in the DDP allreduce (gloo, 10 s) and accelerate's torchrun ends the job",
        "deepspeed": "the others time out in the engine's gradient allreduce (gloo, 10 s) and DeepSpeed's launcher "
                     "kills the rest",
    }[mode]
    kw: dict[str, Any] = {"mode": mode, "lane": "ray" if mode == "ray" else ""}
    if mode in ("lightning", "ray"):  # 4 processes import torch and Lightning (Ray: its actors) one after the other
        kw["timeout"] = 300.0 if mode == "lightning" else 420.0
    if mode == "accelerate":  # the launcher and 3 ranks import torch and Accelerate
        kw["timeout"] = 300.0
    if mode == "deepspeed":  # the runner, the launch process and 3 ranks; the first start compiles an op (minutes)
        kw["timeout"] = 600.0
        kw["slow_first_start"] = True
    return [
        _sw(f"{mode}_exception", "app.exception",
            f"{words}: rank 1 raises an exception at step 3; the launcher then ends the other ranks.",
            lab_fault="exception", **kw),
        _unknown(f"{mode}_sigkill_external",
                 f"{words}: the driver kill -9s rank 1 from outside at step 3. No OOM record, no scheduler record: "
                 "nothing establishes who killed it or why, whatever the launcher then says.",
                 lab_fault="sigkill_external", kill_from_outside=True, **kw),
        _unknown(f"{mode}_hang",
                 f"{words}: rank 1 stops inside step 3 (nothing logged about why); {hang_end}. Nothing records why "
                 "rank 1 stopped: unknown.", lab_fault="hang",
                 launcher_opts=("--timeout", "20") if mode == "mpirun" else (),
                 term_after_marker=15.0 if mode == "jax" else None, **kw),
        Fault(f"{mode}_completed", description=f"{words}: a clean run; every rank finishes. Nothing failed.",
              domain="none", outcome="succeeded", affected_nodes=[], lab_fault="none", **kw),
    ]


def _admin(name: str, description: str, action: tuple[str, ...], undo: tuple[str, ...] | None,
           **kw: Any) -> Fault:
    """A Slurm fault where scontrol acts on the job's node, partition or the job itself mid-job (`action`, once
    every rank waits at step 3), on a Slurm of its own; `undo` restores the node or partition after the job.
    Unless said otherwise the job completes: none."""
    # 300 s: the markers come once 3 ranks have imported torch, slow on a loaded machine; then it mostly waits
    base: dict[str, Any] = {"domain": "none", "outcome": "succeeded", "affected_nodes": [], "timeout": 300.0}
    return Fault(name=name, mode="slurm", description=description, **{**base, **kw}, lab_fault="pause",
                 lane="slurm-admin", slurm_profile="admin", admin_at_marker=(action,),
                 admin_after=(undo,) if undo else ())


FAULTS: dict[str, Fault] = {f.name: f for f in [
    # ------------------------------------------------------------ bare torchrun
    _sw("value_error", "app.exception",
        "Rank 1 raises ValueError in F.binary_cross_entropy at step 3 (a collate bug dropped one label); ranks 0 "
        "and 2 then fail in the DDP allreduce with gloo 'Connection closed by peer' and torchrun SIGTERMs them."),
    _sw("file_not_found", "app.exception",
        "Rank 1 opens a dataset shard that does not exist at step 3: FileNotFoundError [Errno 2]; the peers fail "
        "in gloo collectives afterwards. A missing dataset file is the workload's own fault."),
    _sw("two_rank_exception", "app.exception",
        "Ranks 1 and 2 both raise the same RuntimeError ('mismatched vocabulary size') at step 3; rank 0 fails in "
        "the allreduce afterwards. One application cause on one node.", ranks="1,2"),
    _unknown("hang_collective",
             "Rank 1 stops inside step 3 (sleeps forever, nothing logged about why); ranks 0 and 2 time out after "
             "10 s in the DDP allreduce (gloo 'Timed out waiting 10000ms'), and torchrun then SIGTERMs rank 1. "
             "Nothing records why rank 1 stopped: unknown, no definitive cause."),
    _unknown("hang_monitored_barrier",
             "Rank 1 stops inside step 3; the other ranks enter dist.monitored_barrier(timeout=10s) and rank 0 "
             "reports that rank 1 failed to pass it. The barrier names the laggard, not why it stopped: unknown "
             "(a laggard_rank lead on rank 1 is welcome, a definitive cause is not)."),
    _unknown("sigkill_external",
             "The driver kill -9s rank 1 from outside at step 3; torchrun reports exitcode -9 (SIGKILL) and the "
             "peers fail in gloo. No OOM record, no scheduler record: nothing establishes who killed it or why.",
             kill_from_outside=True),
    _sw("segv_faulthandler", "app.crash",
        "Rank 1 dereferences NULL (ctypes.string_at(0)) at step 3 with faulthandler enabled: 'Fatal Python "
        "error: Segmentation fault' and the Python stack on its stderr, torchrun exitcode -11 (SIGSEGV)."),
    _sw("segv_plain", "app.crash",
        "Rank 1 dereferences NULL (ctypes.string_at(0)) at step 3 without faulthandler (and without @record, "
        "which would enable it): the rank writes nothing, only torchrun's 'failed (exitcode: -11)' and its "
        "summary 'exitcode : -11 (pid: N)' / 'Signal 11 (SIGSEGV) received by PID N' record it."),
    _sw("abort_faulthandler", "app.crash",
        "Rank 1 calls abort() (SIGABRT) at step 3 with faulthandler enabled: 'Fatal Python error: Aborted' "
        "and torchrun exitcode -6.", lab_fault="abort"),
    _sw("dataloader_worker_segv", "app.crash",
        "A DataLoader worker of rank 1 segfaults in __getitem__ (ctypes.string_at(0)): the main process raises "
        "'RuntimeError: DataLoader worker (pid N) is killed by signal: Segmentation fault.'"),
    _unknown("dataloader_worker_sigkill",
             "A DataLoader worker of rank 1 receives SIGKILL inside __getitem__: 'RuntimeError: DataLoader worker "
             "(pid N) is killed by signal: Killed.' No kernel or cgroup OOM record and no scheduler record: a "
             "SIGKILL with no recorded sender establishes no cause (the usual guess, host OOM, is not evidence)."),
    _sw("nan_anomaly", "app.numerics",
        "Rank 1 produces a NaN loss at step 3 (sqrt of a negative number) with "
        "torch.autograd.set_detect_anomaly(True): anomaly mode warns 'Error detected in MseLossBackward0' with "
        "the forward traceback and raises \"RuntimeError: Function 'MseLossBackward0' returned nan values in its "
        "0th output.\""),
    _sw("nan_guard", "app.numerics",
        "An Inf input on rank 1 at step 3 makes the loss NaN; after the loss allreduce every rank's NaN guard "
        "logs 'loss is nan' and raises FloatingPointError."),
    Fault("enospc_checkpoint", "torchrun",
          "Rank 0 saves the final checkpoint (torch.save(state, path)) to a full 1 MiB filesystem. PyTorch's C++ "
          "writer reports no errno: 'RuntimeError: basic_ios::clear: iostream error' in write_record, then "
          "'[enforce fail at inline_container.cc:672] . unexpected pos N vs M'; the peers fail in the final "
          "barrier. The checkpoint write failed for lack of space: storage.", domain="storage",
          category="storage.filesystem", ranks="0", tmpfs_checkpoint=True),
    Fault("enospc_checkpoint_fileobj", "torchrun",
          "Rank 0 saves the final checkpoint through a Python file object (torch.save(state, f)) to a full 1 MiB "
          "filesystem: 'OSError: [Errno 28] No space left on device'; the peers fail in the final barrier.",
          domain="storage", category="storage.filesystem", ranks="0", tmpfs_checkpoint=True),
    _sw("memcg_oom", "host.oom",
        "torchrun runs inside a memory cgroup limited to 1600 MiB; rank 1 leaks host memory from step 3 and the "
        "kernel's memcg OOM killer kills it ('Memory cgroup out of memory: Killed process N (python)' in the "
        "node's kernel log, captured with dmesg -T for the run's window); torchrun reports exitcode -9 (SIGKILL). "
        "Unlike sigkill_external, the SIGKILL has its OOM record.", lab_fault="memory_leak",
        memcg_limit=1600 << 20),
    Fault("completed_warnings", "torchrun",
          "A clean run: a UserWarning, a caught FileNotFoundError logged with its traceback (logging.exception) "
          "and retried, the usual NumPy/OMP notices; all ranks finish and torchrun exits 0. Nothing failed.",
          domain="none", outcome="succeeded", affected_nodes=[], lab_fault="completed_warnings"),
    # -------------------------------------------------------------- real Slurm
    _sw("slurm_value_error", "app.exception",
        "Under sbatch + srun --label: rank 1 raises ValueError at step 3; srun reports 'task 1: Exited with exit "
        "code 1' and sacct FAILED 1:0.", mode="slurm", lab_fault="value_error"),
    _sw("slurm_segv", "app.crash",
        "Under sbatch + srun --output=app/rank-%t.log (one file per task): rank 1 segfaults at step 3 without "
        "faulthandler; the rank writes nothing, srun reports the task's Segmentation fault and sacct the step's "
        "exit signal.", mode="slurm", lab_fault="segv_plain", slurm_output="per-task"),
    _sw("slurm_oom_cgroup", "host.oom",
        "Under sbatch --mem=1500M on a Slurm with task/cgroup (cgroup v1, ConstrainRAMSpace=yes): rank 1 leaks "
        "host memory from step 3, the kernel's memcg OOM killer kills it, slurmstepd reports 'Detected 1 "
        "oom-kill event(s) in StepId=N.0', srun 'task 1: Out Of Memory', sacct the step OUT_OF_MEMORY.",
        mode="slurm", lab_fault="memory_leak", outcome=None, slurm_profile="cgroup", mem="1500M"),
    _sw("slurm_oom_jobacct", "host.oom",
        "Under sbatch --mem=1500M on a Slurm with jobacct_gather/linux + OverMemoryKill (no cgroups): rank 1 "
        "leaks host memory from step 3 and slurmstepd kills the step ('StepId=N.0 exceeded memory limit (A > B), "
        "being killed', 'Exceeded job memory limit'). sacct shows the job FAILED 9:0 and the step 'CANCELLED by "
        "0': the memory limit, not a user, ended it.", mode="slurm", lab_fault="memory_leak", outcome=None,
        slurm_profile="jobacct", mem="1500M"),
    Fault("slurm_time_limit", "slurm",
          "Under sbatch --time=1 every rank sits in a long evaluation from step 3; slurmctld ends the job at its "
          "1-minute limit ('CANCELLED AT ... DUE TO TIME LIMIT', sacct TIMEOUT).", domain="scheduler",
          category="scheduler.time_limit", outcome="timeout", affected_nodes=[], lab_fault="time_limit",
          sbatch_opts=("--time=1",), timeout=180),
    Fault("slurm_scancel", "slurm",
          "A healthy job is scancel'ed while all ranks are at step 3 (sacct 'CANCELLED by 0'); the SIGTERMs and "
          "gloo errors during teardown are consequences.", domain="scheduler", category="scheduler.cancelled",
          outcome="cancelled", affected_nodes=[], lab_fault="scancel", scancel_at_marker=True),
    Fault("slurm_completed", "slurm",
          "A clean run under sbatch + srun --label with a UserWarning and a caught, logged FileNotFoundError; "
          "sacct COMPLETED 0:0.", domain="none", outcome="succeeded", affected_nodes=[],
          lab_fault="completed_warnings"),
    # ------------------------------------------------ more shapes (bare torchrun)
    _sw("assertion_error", "app.exception",
        "Rank 1 fails an assert on the batch shape at step 3 (AssertionError with a message); the peers fail in "
        "the allreduce afterwards."),
    _sw("key_error", "app.exception",
        "Rank 1 looks up a missing key in its schedule config at step 3: KeyError: 'warmup_steps' (a bare "
        "quoted key as the message); the peers fail in gloo afterwards."),
    _sw("recursion_error", "app.exception",
        "Rank 1 walks a self-referencing config tree at step 3: RecursionError: maximum recursion depth exceeded "
        "(a traceback with a repeated frame, 'Previous line repeated N more times')."),
    _sw("python_memory_error", "app.exception",
        "Rank 1 lowers its address-space limit (RLIMIT_AS, as `ulimit -v` does) at step 3 and then builds a 2 GiB "
        "bytearray: a bare Python 'MemoryError'. No OOM killer, no scheduler limit: an exception the workload "
        "raised.", lab_fault="memory_error_rlimit"),
    _sw("alloc_failure_rlimit", "app.exception",
        "Rank 1 lowers its address-space limit (RLIMIT_AS) at step 3 and then allocates a 2 GiB tensor: PyTorch's "
        "CPU allocator raises 'RuntimeError: [enforce fail at alloc_cpu.cpp] ... DefaultCPUAllocator: can't "
        "allocate memory'. An allocation failure, not an OOM kill."),
    _sw("dataloader_worker_exception", "app.exception",
        "A DataLoader worker of rank 1 raises ValueError in __getitem__ (a corrupt sample): the main process "
        "re-raises 'ValueError: Caught ValueError in DataLoader worker process 0.' with the worker's 'Original "
        "Traceback'. An exception, not a kill."),
    _sw("mismatched_collective_debug", "app.exception",
        "Rank 1 all-reduces a tensor of another size than its peers at step 3 (a bug in a metrics reduction) on "
        "a metrics group made with the debug level at DETAIL (as TORCH_DISTRIBUTED_DEBUG=DETAIL does; set "
        "after DDP, whose init segfaults under DETAIL on the CPU in torch 2.13): the collective fingerprint check "
        "reports the mismatch ('Detected mismatch between collectives on ranks', op and tensor shapes) and "
        "raises. A desync the workload made: software."),
    _unknown("mismatched_collective_hang",
             "The same size mismatch without the debug check: found on the first run that gloo's allreduce does not "
             "report it; every rank, rank 1 included, times out alike ('Timed out waiting 10000ms for send/recv "
             "operation'). Nothing in the evidence says which rank was wrong or why: unknown.",
             lab_fault="mismatched_collective"),
    _sw("sigbus_mmap", "app.crash",
        "Rank 1 reads a memory-mapped dataset file that was truncated under it at step 3: a real SIGBUS (Bus "
        "error), faulthandler 'Fatal Python error: Bus error', torchrun exitcode -7."),
    Fault("erofs_checkpoint", "torchrun",
          "Rank 0 saves the final checkpoint through a Python file object to a read-only mount: 'OSError: [Errno "
          "30] Read-only file system'; the peers fail in the final barrier.", domain="storage",
          category="storage.filesystem", ranks="0", tmpfs_checkpoint=True, tmpfs_readonly=True,
          lab_fault="enospc_checkpoint_fileobj"),
    _unknown("os_exit_code",
             "Rank 1 calls os._exit(3) at step 3: no traceback, no message; torchrun reports 'exitcode: 3' and the "
             "peers fail in gloo. Nothing says why it exited: unknown (a first_exit lead on rank 1 is welcome).",
             lab_fault="os_exit"),
    _unknown("os_exit_torn_error_file",
             "Rank 1 leaves an empty torchelastic error file (as a process killed while writing it does) and calls "
             "os._exit(3) at step 3. torchrun's agent fails to parse that file and itself dies with a "
             "JSONDecodeError traceback raised in its own worker-reaping code; the peers fail in gloo. The agent's "
             "exception is the launcher's fallout, not the workload's: unknown (a first_exit lead on rank 1).",
             lab_fault="os_exit_torn"),
    _unknown("early_exit_clean",
             "Rank 1 leaves the training loop at step 3 and returns cleanly (exit 0, nothing logged about why) "
             "while ranks 0 and 2 wait in the DDP allreduce; they fail in gloo. Nothing says why rank 1 left: "
             "unknown.", lab_fault="early_exit"),
    _unknown("sigterm_external",
             "Something outside sends SIGTERM to rank 1 at step 3 (no scheduler, no record of the sender); torchrun "
             "reports exitcode -15 (SIGTERM) and the peers fail in gloo. Nothing establishes who or why: unknown.",
             lab_fault="sigkill_external", kill_from_outside=True, outside_signal=15),
    _unknown("sigterm_agent",
             "Something outside sends SIGTERM to the torchrun agent at step 3; torchrun forwards it to every rank "
             "and exits raising SignalException ('Process N got signal: 15'). No record of the sender: unknown.",
             lab_fault="sigkill_external", kill_from_outside=True, outside_signal=15, signal_agent=True,
             ranks="0,1,2"),
    _unknown("sigint_external",
             "Something outside sends SIGINT to rank 1 at step 3 (a Ctrl-C aimed at one process): KeyboardInterrupt "
             "traceback on rank 1, torchrun exitcode -2 or 1, the peers fail in gloo. An interrupt from outside is "
             "no failure cause the evidence establishes: unknown.",
             lab_fault="sigkill_external", kill_from_outside=True, outside_signal=2),
    _unknown("store_timeout",
             "Rank 1 never joins the process group (it stalls before init_process_group); ranks 0 and 2 time out "
             "after 10 s waiting for it in the rendezvous store (DistStoreError / wait timeout). Nothing says why "
             "rank 1 stalled: unknown.", lab_fault="stall_before_init"),
    Fault("restart_recovers", "torchrun",
          "torchrun --max-restarts=1: in the first attempt rank 1 raises ValueError at step 3 and torchrun restarts "
          "the group; the second attempt completes and torchrun exits 0. The run succeeded: none, no alarm for the "
          "first attempt's traceback.", domain="none", outcome="succeeded", affected_nodes=[],
          lab_fault="fail_first_attempt", max_restarts=1),
    _sw("thread_exception", "app.exception",
        "A prefetch thread of rank 1 raises ValueError at step 3 ('Exception in thread prefetch:' and its "
        "traceback, printed by threading's excepthook); the main thread waits for it forever, so the peers time "
        "out in the allreduce and torchrun SIGTERMs rank 1. The exception, not the timeouts, is the cause."),
    _sw("logged_exception_exit", "app.exception",
        "Rank 1 catches a JSONDecodeError at step 3, logs it with logging.exception (the traceback under an "
        "'ERROR ... giving up' log line) and calls sys.exit(1); the peers fail in gloo. Unlike the caught and "
        "retried exception of completed_warnings, this one ended the rank."),
    _sw("dataloader_shm_full", "app.exception",
        "torchrun runs in a mount namespace whose /dev/shm is a 1 MiB tmpfs (a container's default shm is "
        "small); rank 1's DataLoader workers hand over 4 MiB batches through it and fail (no space / bus error "
        "in the worker). A too-small /dev/shm is the workload's configuration: software, app.exception.",
        shm_size="1m"),
    _unknown("rdzv_timeout",
             "torchrun --nnodes=2 with the c10d rendezvous (join_timeout 15 s) is started on one node only; the "
             "second node's agent never comes, torchrun raises RendezvousTimeoutError and no rank starts. "
             "Nothing says why the other node is missing: unknown.", lab_fault="none",
             rdzv=("--nnodes=2", "--rdzv-backend=c10d", "--rdzv-endpoint=127.0.0.1:{port}", "--rdzv-id=lab",
                   "--rdzv-conf=join_timeout=15")),
    # ------------------------------------------------ more shapes (real Slurm)
    _sw("slurm_bad_interpreter", "app.exception",
        "The batch script's srun runs an interpreter path that does not exist (a virtualenv that was never "
        "built): slurmstepd 'execve(): ...: No such file or directory', srun 'tasks 0-2: Exited with exit code "
        "2', sacct FAILED. The job's own configuration: software.", mode="slurm", lab_fault="none",
        python="/opt/venvs/train/bin/python3"),
    _sw("slurm_kill_on_bad_exit", "app.exception",
        "srun --kill-on-bad-exit=1 --label: rank 1 raises KeyError at step 3; srun kills the other tasks at once "
        "('task 1: Exited with exit code 1', the others 'Killed' / terminated); sacct FAILED.", mode="slurm",
        lab_fault="key_error", srun_opts=("--kill-on-bad-exit=1",)),
    _unknown("slurm_signal_usr1",
             "scancel --signal=USR1 (no cancellation: only a signal) reaches every task at step 3; the script has no "
             "handler, so each task dies of SIGUSR1 ('User defined signal 1'); sacct records a failure, no CANCELLED "
             "state. No record says why the signal was sent: unknown.", mode="slurm", lab_fault="scancel",
             outcome=None, scancel_at_marker=True, scancel_opts=("--signal=USR1",)),

    # ------------------------------------------------ third round: new launchers (each: exception, kill -9,
    # hang, clean run), so that each launcher's own words for a failed peer are in the lab
    *(f for launcher, words in (
        ("mpirun", "mpirun -np 3 --tag-output python -m mpi4py (Debian's Open MPI), MPI_Allreduce"),
        ("lightning", "PyTorch Lightning Trainer(devices=3, strategy=DDPStrategy on gloo), its own launcher"),
        ("jax", "3 JAX processes, jax.distributed.initialize on 127.0.0.1, gloo all-gathers on the CPU"),
        ("ray", "a local Ray cluster, Ray Train TorchTrainer with 3 workers, DDP on gloo"),
        # fourth round: Hugging Face Accelerate's launcher and DeepSpeed's
        ("accelerate", "accelerate launch --multi_gpu --num_processes 3 (its torchrun path), Accelerator(cpu=True) "
                       "on gloo"),
        ("deepspeed", "deepspeed --num_gpus 3 (DeepSpeed's runner and launch, CPU accelerator), "
                      "deepspeed.init_distributed on gloo and a DeepSpeed engine"),
    ) for f in _launcher_faults(launcher, words)),
    # ------------------------------------------------ third round: the job's own set-up and environment
    _sw("setup_port_in_use", "app.exception",
        "torchrun --nnodes=1 --master-addr=127.0.0.1 --master-port=P while another process already listens on "
        "P (a leftover of an earlier job): torchrun's agent cannot start its TCP store (EADDRINUSE) and no rank "
        "starts. The job's own set-up on this node: software, not the network.", lab_fault="none",
        occupy_port=True, rdzv=("--nnodes=1", "--master-addr=127.0.0.1", "--master-port={port}")),
    _sw("setup_backend_nccl", "app.exception",
        "Every rank calls init_process_group('nccl') on a machine without GPUs and a CPU build of PyTorch: the "
        "backend does not exist here and every rank fails at start. The job's configuration: software.",
        lab_fault="backend_nccl", ranks="0,1,2"),
    _sw("setup_mesh_mismatch", "app.exception",
        "The job asks for a 2 x 2 (data x tensor parallel) device mesh with init_device_mesh, but got 3 "
        "processes: the mesh does not fit the world size and every rank raises. The job's configuration.",
        lab_fault="mesh_mismatch", ranks="0,1,2"),
    _sw("slurm_missing_master_env", "app.exception",
        "The batch script forgets to export MASTER_ADDR / MASTER_PORT; every task's init_process_group (env:// "
        "rendezvous) fails at start ('environment variable MASTER_ADDR expected, but not set'), srun reports "
        "the tasks' exit code 1, sacct FAILED. The job's own environment: software.", mode="slurm",
        lab_fault="none", omit_master_env=True),
    # ------------------------------------------------ third round: checkpoints that cannot be read back
    _sw("ckpt_truncated", "app.exception",
        "At step 3 rank 0 saves a checkpoint with torch.save and the file is cut to half its size (as an "
        "interrupted copy leaves it); every rank then loads it to roll back and torch.load fails (the zip "
        "archive has no central directory). No storage error: the workload's exception reading it.",
        lab_fault="ckpt_truncated", ranks="0,1,2"),
    _sw("ckpt_missing_shard", "app.exception",
        "At step 3 the ranks save a sharded checkpoint (torch.distributed.checkpoint, one file per rank) and "
        "rank 1's shard file is lost before they load it back: every rank reads from that file (the checkpoint "
        "spreads the replicated weights over the ranks' files) and fails with FileNotFoundError inside a "
        "CheckpointException. No storage error: software.",
        lab_fault="ckpt_missing_shard", ranks="0,1,2"),
    # ------------------------------------------------ fifth round: the job's own environment (issue 25)
    _sw("env_nofile_limit", "app.exception.setup",
        "Rank 1's job lowers its open-file limit (RLIMIT_NOFILE, as a container's or login's `ulimit -n` does) to "
        "just above what it holds, under PyTorch's file_descriptor sharing strategy; its 2 DataLoader workers hand "
        "each batch over as file descriptors and the rank cannot receive them (EMFILE: `Too many open files` / "
        "`received 0 items of ancdata`). A limit the job's environment gives its processes (docs/verdict.md, "
        "`nofile`): the job's set-up on that node, not a crash, not storage.", lab_fault="nofile_limit"),
    _sw("env_gloo_ifname", "app.exception.setup",
        "The job exports GLOO_SOCKET_IFNAME=ib9 (an interface of another cluster's nodes) and this host has no "
        "such interface: gloo cannot make its device at init ('Unable to find address for: ib9'): the first rank "
        "there fails (on the first run rank 1) and torchrun ends the others. "
        "A transport finding no interface the job's set-up gave it: app.exception.setup, not the network.",
        lab_fault="none", ranks="0,1,2", job_env=(("GLOO_SOCKET_IFNAME", "ib9"),)),
    _sw("env_master_addr_unresolvable", "app.exception.setup",
        "torchrun --nnodes=1 --master-addr=trainer-head.invalid (a head node's name that does not resolve, as a "
        "typo or another cluster's name in a launch script gives): the rendezvous store's address cannot be "
        "resolved (torchrun's agent retries it until its rendezvous timeout, 20 s here) and no rank trains. An "
        "address the job's set-up names and cannot have: app.exception.setup (like a coordinator address gRPC "
        "cannot resolve), never a network cause.", lab_fault="none",
        rdzv=("--nnodes=1", "--master-addr=trainer-head.invalid", "--master-port={port}",
              "--rdzv-conf=timeout=20")),  # the static rendezvous's store waits 600 s by default
    _sw("env_cuda_missing", "app.exception.setup",
        "The job's configuration says device 'cuda' and every rank moves its model there on a CPU build of "
        "PyTorch: 'AssertionError: Torch not compiled with CUDA enabled' at start. A device the job's set-up "
        "asks for and the build lacks: app.exception.setup.", lab_fault="cuda_missing", ranks="0,1,2"),
    _sw("env_ckpt_eacces", "app.exception",
        "The checkpoint directory is mode 0555 (made by another user's job) and the job runs without the "
        "capability to override file modes, as a user who is not root: rank 0's final torch.save through a Python "
        "file object raises 'PermissionError: [Errno 13] Permission denied'; the peers fail in the final barrier. "
        "EACCES on a file is the workload's own I/O (catalog/exceptions.yaml errnos: EACCES is set-up only on a "
        "socket), not the storage failing: software / app.exception.", lab_fault="ckpt_eacces", ranks="0",
        drop_dac_override=True),
    _sw("env_module_missing", "app.exception",
        "Rank 1 imports the job's tokenizer extension (`lab_fasttok`), which the other ranks find on their "
        "PYTHONPATH and rank 1's does not hold (a node-local package directory that was never synced): "
        "'ModuleNotFoundError: No module named ...' at step 3; the peers fail in gloo afterwards. A missing module "
        "is the workload's configuration: app.exception.", lab_fault="module_missing"),
    # ------------------------------------------------ sixth round: lab breadth (issue 25)
    _sw("env_pids_limit", "app.exception.setup",
        "A pids limit on rank 1 (a container's or a cgroup's pids.max, what `ulimit -u` does for a user): at step 3 "
        "the rank joins a pids cgroup whose limit is the tasks it has, then starts an evaluation DataLoader with 2 "
        "workers; fork fails with EAGAIN ('BlockingIOError: [Errno 11] Resource temporarily unavailable' in "
        "multiprocessing's popen_fork). A limit the job's environment gives its processes (docs/verdict.md, "
        "`nproc`): app.exception.setup on that node.", lab_fault="pids_limit", pids_cgroup=True),
    _sw("env_fsize_limit", "app.exception.setup",
        "Rank 0 runs under a file-size limit (RLIMIT_FSIZE, `ulimit -f` 256 KiB, as a login's or a batch system's "
        "limits set it) and saves its final 4 MiB checkpoint through a Python file object: Python ignores SIGXFSZ, "
        "so the write fails 'OSError: [Errno 27] File too large'; the peers fail in the final barrier. A limit the "
        "job's environment gives its processes, not the storage: app.exception.setup.", lab_fault="fsize_limit",
        ranks="0"),
    _sw("env_cpu_limit", "app.exception.setup",
        "Rank 1 runs under a CPU-time limit (RLIMIT_CPU, `ulimit -t`, as PBS's cput or a login's limits set it) that "
        "its evaluation at step 3 passes: the kernel sends SIGXCPU and the rank dies of it without a word (torchrun "
        "exitcode -24); the peers fail in gloo. The signal is the limit's, sent by the kernel, not a crash of the "
        "program: a limit the job's environment gives its processes, app.exception.setup.",
        lab_fault="cpu_limit"),
    _sw("dataloader_worker_oom", "host.oom",
        "torchrun runs inside a memory cgroup limited to 1600 MiB; a DataLoader worker of rank 1 leaks memory in "
        "__getitem__ at step 3 and the kernel's memcg OOM killer kills the worker, not the rank ('Memory cgroup "
        "out of memory: Killed process N (python)' in the kernel log, dmesg -T for the run's window); the rank "
        "raises 'DataLoader worker (pid N) is killed by signal: Killed.'. The kill has its OOM record: host.oom.",
        memcg_limit=1600 << 20),
    _sw("ckpt_weights_only", "app.exception",
        "At step 3 rank 0 saves a checkpoint that holds the run's arguments as an argparse.Namespace, and every "
        "rank loads it back with torch.load's default (weights_only=True since torch 2.6): the weights-only "
        "unpickler refuses the object ('_pickle.UnpicklingError: Weights only load failed. ... Unsupported global: "
        "GLOBAL argparse.Namespace'). No storage error: the workload's exception reading it.",
        lab_fault="ckpt_weights_only", ranks="0,1,2"),
    _sw("ckpt_size_mismatch", "app.exception",
        "At step 3 every rank loads a checkpoint of a wider model (hidden size 64; the job's model has 32, a "
        "checkpoint of another configuration) into its model: 'RuntimeError: Error(s) in loading state_dict for "
        "Sequential: size mismatch for 0.weight ...'. The workload's exception reading it: app.exception.",
        lab_fault="ckpt_size_mismatch", ranks="0,1,2"),
    _sw("ddp_unused_parameters", "app.exception",
        "The model has an auxiliary head that the loss uses only before step 3 (a warm-up loss); from step 3 its "
        "parameters take no part in the loss and DDP (find_unused_parameters=False) never finishes that step's "
        "reduction: the next step's forward raises 'RuntimeError: Expected to have finished reduction in the "
        "prior iteration before starting a new one.' on every rank. The training code's mistake: app.exception.",
        lab_fault="unused_parameters", ranks="0,1,2"),
    _sw("compile_no_cxx", "app.exception.setup",
        "At step 3 every rank evaluates with a copy of its model compiled by torch.compile (Inductor, CPU) in an "
        "environment whose C++ compiler (CXX, as a slim container image without g++ leaves it) does not exist: "
        "Inductor raises "
        "'InvalidCxxCompiler: No working C++ compiler found'. A tool the job's set-up needs and the host lacks: "
        "app.exception.setup.", lab_fault="compile", ranks="0,1,2",
        job_env=(("CXX", "/usr/local/bin/g++-12"),)),
    _unknown("sigstop_external",
             "Something outside stops rank 1 with SIGSTOP at step 3 (a frozen process: a `kill -STOP`, a debugger, a "
             "cgroup freezer); its peers time out in the DDP allreduce (gloo, 10 s) and torchrun ends the group "
             "(SIGTERM, which a stopped process does not act on, then SIGKILL). Nothing records why rank 1 stopped: "
             "unknown.", lab_fault="sigkill_external", kill_from_outside=True, outside_signal=19),
    _sw("mpirun_not_enough_slots", "app.exception.setup",
        "mpirun -np 3 --host localhost:2 without --oversubscribe: the job asks for 3 ranks on a host list that "
        "gives 2 slots; Open MPI refuses to start it ('There are not enough slots available in the system to "
        "satisfy the 3 slots that were requested by the application'). What the job asked for against what is "
        "there: app.exception.setup.", mode="mpirun", lab_fault="none", oversubscribe=False,
        launcher_opts=("--host", "localhost:2")),
    _sw("lightning_gpu_missing", "app.exception.setup",
        "PyTorch Lightning Trainer(accelerator='gpu', devices=3) on a host without GPUs: Lightning refuses at "
        "set-up ('MisconfigurationException: No supported gpu backend found!') before it starts ranks 1 and 2. A "
        "device the job's set-up asks for and the host lacks: app.exception.setup.", mode="lightning",
        lab_fault="gpu_missing", ranks="0", timeout=300.0),
    _unknown("jax_num_processes_wrong",
             "3 JAX processes are started but each calls jax.distributed.initialize(num_processes=4): the "
             "coordinator waits for a fourth process that never comes until its initialization timeout (20 s here). "
             "The evidence is a missing peer's; nothing in it says why the fourth process is missing: unknown.",
             mode="jax", lab_fault="num_processes_wrong", timeout=180.0),
    # ------------------------------------------------ seventh round: lab breadth (issue 25)
    _sw("restarts_exhausted", "app.exception",
        "torchrun --max-restarts=1: rank 1 raises the same ValueError at step 3 on the first attempt and again on "
        "the restarted one (the bug does not go away); torchrun's restarts are spent and the job fails. The "
        "workload's exception: app.exception.", lab_fault="exception_every_attempt", max_restarts=1),
    _unknown("mpirun_abort",
             "mpirun + mpi4py: rank 1 calls MPI_Abort(MPI_COMM_WORLD, 3) at step 3 (comm.Abort(3)) and prints "
             "nothing of why; Open MPI ends the job ('MPI_ABORT was invoked on rank 1 ... with errorcode 3'). A rank "
             "gone by its own call with no message, as os._exit(3): unknown.", mode="mpirun", lab_fault="abort"),
    _sw("mpirun_host_unresolvable", "app.exception.setup",
        "mpirun --hostfile with 'localhost slots=2' and 'trainer-07.invalid slots=1' (a host name that does not "
        "resolve: a typo, another cluster's node): Open MPI cannot start its daemon there (ssh cannot resolve the "
        "name; 'ORTE was unable to reliably start one or more daemons') and no rank runs. What the job's launch "
        "asked for against what is there: app.exception.setup on this node.", mode="mpirun", lab_fault="none",
        oversubscribe=False, hostfile=("localhost slots=2", "trainer-07.invalid slots=1")),
    _sw("deepspeed_host_unresolvable", "app.exception.setup",
        "deepspeed --hostfile whose only host is 'trainer-07.invalid slots=3' (a name that does not resolve): "
        "DeepSpeed's runner checks passwordless ssh to it before launching, the check fails, and the runner "
        "raises ('... was not reachable via ssh'); no rank starts. What the job's launch asked for against what is "
        "there: app.exception.setup on this node.", mode="deepspeed", lab_fault="none", timeout=300.0,
        hostfile=("trainer-07.invalid slots=3",),
        # the runner fails before any rank builds DeepSpeed's op, but the quick run takes no DeepSpeed fault (its
        # sample stays one per launcher that starts fast): marked as the launcher's others are
        slow_first_start=True),
    _sw("dataloader_parquet_corrupt", "app.exception",
        "Rank 1's dataset reads its sample features from a parquet file that an interrupted copy cut to half its "
        "size; its DataLoader worker (2 workers) reads it at step 3 and pyarrow refuses the file (no footer); "
        "the rank re-raises the worker's exception. No storage error: the workload's exception reading its data.",
        lab_fault="dataloader_worker_parquet"),
    _unknown("dataloader_timeout",
             "Rank 1's DataLoader (2 workers, timeout=5) waits on a worker whose read at step 3 never returns "
             "(nothing logged about why); the DataLoader's own limit ends the wait ('DataLoader timed out after 5 "
             "seconds') and the peers fail in gloo. A hang ended by the job's own limit: unknown.",
             lab_fault="dataloader_worker_stall"),
    _sw("filelock_timeout", "app.exception",
        "At step 3 rank 1 waits 5 s for its node's feature-cache lock (filelock, as Hugging Face datasets' cache "
        "takes it), which another process on the node holds (a leftover of an earlier job: the driver holds the "
        "flock): filelock raises 'Timeout: The file lock ... could not be acquired.'. A resource of the node "
        "another process holds, as a port in use: the workload's exception on that node, app.exception.",
        lab_fault="filelock_timeout", hold_lock="cache/features.lock"),
    _sw("compile_one_rank", "app.exception",
        "Only rank 1 computes an evaluation metric through torch.compile(fullgraph=True), whose function "
        "branches on a tensor's value (.item()): Dynamo cannot trace the data-dependent branch "
        "(torch._dynamo.exc.UserError: 'Could not guard on data-dependent expression') on rank 1 alone; the peers "
        "fail in gloo. The workload's exception.",
        lab_fault="compile_one_rank"),
    _sw("state_dict_prefix", "app.exception",
        "At step 3 every rank saves its state to its node-local directory and resumes from it with "
        "load_state_dict(strict=True); rank 1's copy was saved from the DDP wrapper, its keys prefixed "
        "'module.': 'Error(s) in loading state_dict ... Missing key(s) ... Unexpected key(s)' on rank 1 alone. "
        "The workload's exception: app.exception.", lab_fault="state_dict_prefix"),
    _unknown("stdout_broken_pipe",
             "At step 3 the reader of rank 1's stdout goes away (the pipe to a log collector closes); the rank's next "
             "print raises 'BrokenPipeError: [Errno 32] Broken pipe' and the peers fail in gloo. The rank's end is "
             "the reader's loss, which nothing in the evidence explains: unknown.",
             lab_fault="stdout_broken_pipe"),
    # ------------------------------------------------ eighth round: lab breadth (issue 25)
    _sw("ckpt_not_checkpoint", "app.exception",
        "At step 3 every rank rolls back to the run's checkpoint, but the file in its place is a Git LFS pointer (a "
        "clone of the model repository made without `git lfs pull`: a few lines of text, 'version "
        "https://git-lfs.github.com/spec/v1'); torch.load refuses it. No storage error: the workload's exception "
        "reading it.", lab_fault="ckpt_lfs_pointer", ranks="0,1,2"),
    _sw("ckpt_dir_removed", "app.exception",
        "At step 3 rank 0 makes the step's checkpoint directory and, before it saves into it, rank 1's clean-up of "
        "old checkpoints removes the directory (the ranks agree on the order by barriers, so the race ends the same "
        "way every run); rank 0's torch.save fails ('Parent directory ... does not exist.'), the peers fail in "
        "gloo. The workload's own bug: app.exception on rank 0's node.", lab_fault="ckpt_dir_removed"),
    _sw("mpirun_rsh_agent_failed", "app.exception.setup",
        "mpirun --hostfile with 'localhost slots=2' and '127.0.0.2 slots=1' (a second name for this machine, which "
        "Open MPI takes for another host) and the launch agent the job's configuration names, `--mca plm_rsh_agent "
        "false`, which fails as a broken ssh or kubexec wrapper does: Open MPI cannot start its daemon on the "
        "second host ('ORTE was unable to reliably start one or more daemons') and no rank runs. What the job's "
        "launch asked for against what is there: app.exception.setup on this node.", mode="mpirun",
        lab_fault="none", oversubscribe=False, hostfile=("localhost slots=2", "127.0.0.2 slots=1"),
        launcher_opts=("--mca", "plm_rsh_agent", "false")),
    _sw("deepspeed_batch_size_mismatch", "app.exception.setup",
        "DeepSpeed's config says train_batch_size 16 (written for 4 ranks of micro batch 4) and the job runs 3 "
        "ranks: deepspeed.initialize's check refuses it on every rank ('Check batch related parameters. "
        "train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size'). A batch size "
        "that does not fit the world size: app.exception.setup.", mode="deepspeed", lab_fault="batch_size_mismatch",
        ranks="0,1,2", timeout=600.0, slow_first_start=True),
    _unknown("jax_coordinator_unreachable",
             "JAX processes 1 and 2 are given the coordinator port of an earlier run (their launch script's stale "
             "value), where nothing listens; process 0 starts the coordinator on the right port and waits for them. "
             "Each side times out (initialization limit 20 s). The evidence is a coordinator that does not answer "
             "and peers that never came: unknown.", mode="jax", lab_fault="coordinator_unreachable", ranks="1,2",
             timeout=180.0),
    _sw("slurm_task_prolog_failed", "app.exception.setup",
        "Under sbatch + srun --label: srun is given a task prolog (--task-prolog, the job's own script) that makes "
        "each task's scratch directory under /local/scratch, which this node does not have; the script fails "
        "(mkdir: No such file or directory) and no task runs the training. The job's own set-up of its tasks: "
        "app.exception.setup on the node.", mode="slurm", lab_fault="none", ranks="0,1,2",
        task_prolog='set -e\nmkdir "/local/scratch/$SLURM_JOB_ID.$SLURM_PROCID"\n'),
    Fault("slurm_epilog_failed", "slurm",
          "A clean run under sbatch + srun --label on a Slurm whose site Epilog fails on the node after every job "
          "(its clean-up cannot unmount a scratch directory: exit 1); slurmctld drains the node, the job itself "
          "completed. The epilog names no cause of the job's end: none.", domain="none", outcome="succeeded",
          affected_nodes=[], lab_fault="none", slurm_profile="epilog"),
    Fault("slurm_prolog_failed", "slurm",
          "A batch job on a Slurm whose site Prolog fails on the job's node (its health check finds the node's "
          "scratch file system missing: exit 1); slurmctld drains the node ('Prolog error') and requeues the job "
          "held; the training never starts. The job's prolog failing: infrastructure / node.scheduler on the node.",
          domain="infrastructure", category="node.scheduler", outcome=None, lab_fault="none",
          slurm_profile="prolog", ends_held=True),
    # ------------------------------------------------ ninth round: lab breadth (issue 25)
    Fault("fuse_daemon_killed", "torchrun",
          "Every rank reads its training shards through a FUSE mount of the data directory (bindfs, as gcsfuse or "
          "s3fs serve a bucket); at step 3, once the ranks paused, the FUSE daemon is killed (kill -9): each rank's "
          "next read fails with 'OSError: [Errno 107] Transport endpoint is not connected'. A FUSE mount whose "
          "daemon is gone: storage / storage.filesystem on the node.", domain="storage",
          category="storage.filesystem", lab_fault="fuse_read", ranks="0,1,2", fuse_data=True,
          kill_fuse_at_marker=True),
    Fault("ckpt_block_device_eio", "torchrun",
          "Rank 0 saves a checkpoint at step 3 into an ext4 file system on a loop device whose image file a FUSE "
          "daemon serves (as a network block device's server does); the daemon dies just before (kill -9), the "
          "save's fsync fails with 'OSError: [Errno 5] Input/output error' and the kernel logs 'I/O error, dev "
          "loopN' (the node's kernel log, dmesg). The block device under the checkpoint failed: storage / "
          "storage.filesystem on the node.", domain="storage", category="storage.filesystem",
          lab_fault="ckpt_fsync", ranks="0", loop_checkpoint="fuse", kill_fuse_at_marker=True, kernel_log=True),
    Fault("ckpt_thin_backing_full", "torchrun",
          "Rank 0 saves a 12 MiB checkpoint at step 3 into an ext4 file system (56 MiB, nearly empty) on a loop "
          "device whose sparse image lies on a 4 MiB tmpfs (a thin-provisioned volume whose pool is exhausted): "
          "the save's fsync fails with 'OSError: [Errno 28] No space left on device' and the kernel logs "
          "'critical space allocation error, dev loopN' (dmesg). ENOSPC on a checkpoint: storage / "
          "storage.filesystem on the node.", domain="storage", category="storage.filesystem",
          lab_fault="ckpt_fsync", ranks="0", loop_checkpoint="thin", kernel_log=True),
    _unknown("net_peer_dropped",
             "At step 3 rank 1 pauses and a firewall rule drops every TCP packet to and from its ports (iptables "
             "DROP on lo, both ways, as a node's firewall or a network policy applied mid-run does); it goes on, and "
             "it and its peers time out in the DDP allreduce (gloo, 10 s). A timeout is a peer or the network and "
             "establishes neither; nothing in the job's evidence names the rule: unknown.",
             lab_fault="pause_rank", drop_rank_ports=True),
    _sw("mpirun_btl_missing", "app.exception.setup",
        "mpirun --mca btl foo (a BTL component this Open MPI does not have, as a job script written for another "
        "site's build names one): Open MPI cannot open the component and no rank runs MPI. A transport component "
        "the job's set-up named and the host lacks: app.exception.setup on this node.", mode="mpirun",
        lab_fault="none", launcher_opts=("--mca", "btl", "foo")),
    _sw("mpirun_x_pythonhome", "app.exception.setup",
        "mpirun -x PYTHONHOME=/opt/conda/envs/train (the job script passes its login node's Python to the ranks; "
        "this node has no such install): no rank's interpreter starts ('Fatal Python error: init_fs_encoding: "
        "failed to get the Python codec of the filesystem encoding', 'No module named 'encodings''), mpirun reports "
        "the non-zero exits. The job's own environment: app.exception.setup on this node.", mode="mpirun",
        lab_fault="none", launcher_opts=("-x", "PYTHONHOME=/opt/conda/envs/train")),
    _sw("slurm_array_task_failed", "app.exception",
        "An array job (sbatch --array=0-1%1, one task at a time, srun --label in each): task 0 trains and "
        "completes; in task 1 rank 1 raises ValueError at step 3 and srun reports the task's exit; sacct shows "
        "N_0 COMPLETED, N_1 FAILED. The failed task's exception: app.exception on the node.", mode="slurm",
        lab_fault="value_error", array="0-1%1", timeout=300.0),
    Fault("slurm_timelimit_shortened", "slurm",
          "Under sbatch + srun --label, once every rank sits in a long evaluation at step 3, the job's time limit "
          "is shortened to 1 minute (scontrol update jobid=N timelimit=1, as an administrator does before a "
          "maintenance window); slurmctld ends the job at the new limit (TIMEOUT). A time limit, whoever set it: "
          "scheduler / scheduler.time_limit.", domain="scheduler", category="scheduler.time_limit",
          outcome="timeout", affected_nodes=[], lab_fault="time_limit", lane="slurm-admin", slurm_profile="admin",
          admin_at_marker=(("update", "jobid={jobid}", "timelimit=1"),), timeout=300.0),
    # ------------------------------------------------ tenth round: storage through h5py, netCDF4, orbax (issue 25)
    Fault("h5_ckpt_enospc", "torchrun",
          "Rank 0 saves the final checkpoint as HDF5 (h5py, one dataset per tensor, 4 MiB of optimizer state) to a "
          "full 1 MiB file system: HDF5's sec2 driver's write fails ('file write failed: ... errno = 28, error "
          "message = 'No space left on device''), h5py raises OSError; the peers fail in the final barrier. A "
          "checkpoint write that failed for lack of space: storage / storage.filesystem on the node.",
          domain="storage", category="storage.filesystem", lab_fault="h5_save", ranks="0", tmpfs_checkpoint=True),
    Fault("netcdf_enospc", "torchrun",
          "Rank 0 writes its evaluation predictions (4 MiB) as netCDF-4 (netCDF4-python over HDF5) to a full 1 MiB "
          "file system: netCDF reports only 'RuntimeError: NetCDF: HDF error' (its HDF5 layer's error stack is not "
          "printed); the peers fail in the final barrier. The job's data write failed for lack of space: storage / "
          "storage.filesystem on the node, whatever the library says of it.",
          domain="storage", category="storage.filesystem", lab_fault="netcdf_save", ranks="0", tmpfs_checkpoint=True),
    Fault("orbax_ckpt_enospc", "torchrun",
          "Rank 0 saves the final checkpoint with orbax-checkpoint (StandardCheckpointer, TensorStore's OCDBT "
          "driver, 4 MiB of random optimizer state) to a full 1 MiB file system: TensorStore's write fails "
          "('RESOURCE_EXHAUSTED: Error writing ... No space left on device [os_error_code=28]'), logged by orbax's "
          "background threads and raised as ValueError; the peers fail in the final barrier. A checkpoint write "
          "that failed for lack of space: storage / storage.filesystem on the node.",
          domain="storage", category="storage.filesystem", lab_fault="orbax_save", ranks="0", tmpfs_checkpoint=True),
    _sw("h5_lock_conflict", "app.exception",
        "At step 3 rank 0 opens the run's metrics file (HDF5, h5py mode 'w') and keeps it open; rank 1, by the "
        "job's own mistake, opens the same file for writing too (mode 'a') once rank 0 has it: HDF5's file lock "
        "refuses it ('BlockingIOError: [Errno 11] Unable to synchronously open file (unable to lock file, errno = "
        "11, ...)'); the peers fail in gloo. A resource the job's own other process holds: the workload's exception "
        "on rank 1's node.", lab_fault="h5_lock"),
    _sw("h5_ckpt_truncated", "app.exception",
        "At step 3 rank 0 saves the model as an HDF5 checkpoint (h5py) and an interrupted copy cuts it to half its "
        "size; every rank rolls back to it and HDF5 refuses the file ('OSError: Unable to synchronously open file "
        "(truncated file: eof = N, sblock->base_addr = 0, stored_eof = M)'). No storage error: the workload's "
        "exception reading it, as ckpt_truncated.", lab_fault="h5_truncated"),
    _sw("netcdf_noclobber", "app.exception.setup",
        "At step 3 rank 0 writes its evaluation output with netCDF4.Dataset(path, 'w', clobber=False) to the path an "
        "earlier run of the same experiment left a file at (the run's name reused): netCDF refuses ('OSError: "
        "[Errno -35] NetCDF: File exists && NC_NOCLOBBER'); the peers fail in gloo. An output the job asked not to "
        "write over that is there: app.exception.setup on the node.", lab_fault="netcdf_noclobber", ranks="0"),
    _sw("orbax_step_exists", "app.exception.setup",
        "At step 3 rank 0 saves its checkpoint with orbax-checkpoint (StandardCheckpointer) to the step's directory, "
        "which an earlier run of the same experiment left (the run's name reused, started without resuming): orbax "
        "refuses ('ValueError: Destination .../step-0003 already exists.'); the peers fail in gloo. An output the "
        "job's library will not write over: app.exception.setup on the node.", lab_fault="orbax_exists", ranks="0"),
    # ------------------------------------------------ eleventh round: Dask as a launcher (issue 25)
    Fault("dask_completed", "dask",
          "A Dask job: `dask scheduler`, 3 `dask worker`s (each under its nanny) and a client on 127.0.0.1; the "
          "client computes a dask.array mean and maps 6 shard tasks over the workers; every task finishes. Nothing "
          "failed: none.", domain="none", outcome="succeeded", affected_nodes=[], lab_fault="none", lane="dask",
          timeout=300.0),
    _sw("dask_task_exception", "app.exception",
        "A Dask job (scheduler, 3 workers, a client): the task of step 3 raises ValueError on its worker (a collate "
        "bug dropped a label); the scheduler marks it erred and the client's result() raises it again. The task's "
        "exception: app.exception on the node.", mode="dask", lab_fault="exception", lane="dask", timeout=300.0),
    _sw("dask_worker_memory_limit", "host.oom",
        "A Dask job whose workers run under --memory-limit 300MiB: the task of step 3 grows a cache 10 MiB at a "
        "time; the worker's nanny kills the worker over its memory budget and restarts it; the scheduler gives the "
        "task to another worker, which dies alike, until it gives up (KilledWorker raised in the client). A memory "
        "limit's killer: host.oom on the node.", mode="dask", lab_fault="memory_limit", lane="dask",
        worker_memory_limit="300MiB", timeout=300.0),
    _sw("dask_killed_worker", "app.crash",
        "A Dask job: the task of step 3 dereferences NULL (ctypes.string_at(0)) on every try; its worker process dies "
        "of SIGSEGV, the nanny restarts it, the scheduler retries the task on the other workers until it gives up "
        "(KilledWorker raised in the client). A signal the process raised on itself: app.crash on the node (the "
        "first worker's death is where it began).", mode="dask", lab_fault="segfault", lane="dask", timeout=300.0),
    _unknown("dask_scheduler_unreachable",
             "A Dask job whose workers and client are given the scheduler port of an earlier run (the launch "
             "script's stale value), where nothing listens; the scheduler itself listens on another port. The "
             "workers keep trying to connect; the client gives up after its connect timeout (20 s). The evidence is "
             "a scheduler that does not answer, as one not up yet or gone: unknown.", mode="dask",
             lab_fault="none", lane="dask", stale_scheduler_port=True, timeout=300.0),
    # ------------------------------------------------ eleventh round: torchrun's elastic restarts (issue 25)
    _sw("restart_fails_differently", "app.exception",
        "torchrun --max-restarts=1: in the first attempt rank 1 raises ValueError at step 3; torchrun restarts the "
        "group and in the second attempt rank 1 dereferences NULL at step 3 (SIGSEGV, exitcode -11); the restarts are "
        "spent and the job fails. The first attempt's exception is where it began: app.exception on the node.",
        lab_fault="exception_then_segv", max_restarts=1),
    _sw("elastic_late_agent_closed", "app.exception",
        "An elastic job of two torchrun agents on one c10d rendezvous (--nnodes=1:2, --max-restarts=0; the store in "
        "a process of its own, is_host=false, as etcd serves the etcd backend): the first agent's group starts "
        "alone; its rank 1 raises ValueError at step 3, the agent fails and closes the rendezvous; a second agent of "
        "the same job that comes late meets the closed rendezvous (RendezvousClosedError). The first worker's "
        "exception: app.exception on its node.",
        lab_fault="value_error", late_agent=True,
        rdzv=("--nnodes=1:2", "--rdzv-backend=c10d", "--rdzv-endpoint=127.0.0.1:{port}", "--rdzv-id=lab",
              "--rdzv-conf=last_call_timeout=5,is_host=false")),
    # ------------------------------------------------ third round: the scheduler acting on nodes and partitions
    _admin("slurm_node_down",
           "While every rank waits at step 3 the job's node is set DOWN (scontrol update state=down, as a health "
           "check does with a bad node); the job was submitted --no-requeue, so slurmctld ends it NODE_FAIL. The "
           "job was lost with its node: infrastructure, on that node.",
           ("update", "nodename={node}", "state=down", "reason=lab: node taken out of service"),
           ("update", "nodename={node}", "state=resume"), domain="infrastructure", category="node", outcome=None,
           affected_nodes=list(SOFTWARE_NODE), sbatch_opts=("--no-requeue",)),
    _admin("slurm_node_drain",
           "While every rank waits at step 3 the job's node is DRAINed (scontrol update state=drain); a drain "
           "stops new work only, the running job finishes and completes. Nothing failed: none.",
           ("update", "nodename={node}", "state=drain", "reason=lab: drain for maintenance"),
           ("update", "nodename={node}", "state=resume")),
    _admin("slurm_partition_down",
           "While every rank waits at step 3 the job's partition is set DOWN (scontrol update partitionname=debug "
           "state=down); running jobs go on, the job completes. Nothing failed: none.",
           ("update", "partitionname=debug", "state=down"), ("update", "partitionname=debug", "state=up")),
    _admin("slurm_requeue",
           "While every rank waits at step 3 the job is requeued (scontrol requeue): Slurm kills the running "
           "attempt ('CANCELLED ... DUE TO JOB REQUEUE') and, after the requeue's begin-time delay of about two "
           "minutes, runs the job again; the second run completes. The job succeeded: none.",
           ("requeue", "{jobid}"), None, timeout=480),
]}


# ------------------------------------------------ twelfth round: TensorFlow's multi-worker collectives (issue 25)
# Rules (twelfth round, TensorFlow; docs/verdict.md decides each), written before the faults first ran:
# - the same rules hold under TensorFlow's MultiWorkerMirroredStrategy (one process per worker, each given its
#   TF_CONFIG, gRPC collectives and TensorFlow's coordination service): an exception a worker raises is
#   app.exception on its node, a SIGKILL from outside with no OOM record and a hang are `unknown` with no affected
#   nodes, a clean run is `none`, whatever the peers then say (the collective's UnavailableError, "Socket closed",
#   the coordination service's "tasks are unhealthy (stopped sending heartbeats)", the collective timeout's
#   DeadlineExceededError): those are symptoms of the first failure;
# - TensorFlow's status errors (InvalidArgumentError, FailedPreconditionError, ...) raised by the workload's own op
#   on its own data are the workload's exception, app.exception, as a Python exception is;
# - a hang that the job's own collective timeout ends (CommunicationOptions.timeout_seconds) is still a hang, as
#   mpirun --timeout's or the DataLoader's: the limit names no cause;
# - a worker's address in TF_CONFIG on which another process already listens (a leftover of an earlier job), so
#   that its gRPC server cannot start: the job's own set-up on that node, as the third round's master port in use:
#   app.exception.setup, never a network cause, whatever errno the bind gave.
# The launch (lab/driver.py `run_tf`) ends the other workers once one has failed, as a training operator deletes a
# failed TFJob's running pods: SIGTERM 15 s after the first failed exit, SIGKILL 5 s later.
_TF = "A TensorFlow job of 3 workers (MultiWorkerMirroredStrategy, ring all-reduce over gRPC, TF_CONFIG on 127.0.0.1)"
FAULTS.update({f.name: f for f in [
    Fault("tf_completed", "tf", f"{_TF}: a clean run; every worker finishes its 6 steps. Nothing failed: none.",
          domain="none", outcome="succeeded", affected_nodes=[], lab_fault="none", timeout=300.0),
    _sw("tf_exception", "app.exception",
        f"{_TF}: worker 1's input pipeline decodes a CSV record of its shard that was cut short at step 3 "
        "(tf.io.decode_csv raises InvalidArgumentError, a field missing); the peers' all-reduce is aborted and they "
        "fail after it. The workload's exception on its own data: app.exception on the node.",
        mode="tf", lab_fault="exception", timeout=300.0),
    _unknown("tf_sigkill_external",
             f"{_TF}: the driver kill -9s worker 1 from outside at step 3; the peers' all-reduce fails (gRPC, the "
             "coordination service's heartbeats). No OOM record, no scheduler record: nothing establishes who killed "
             "it or why, whatever TensorFlow then says: unknown (a first_exit lead on worker 1 is welcome).",
             mode="tf", lab_fault="sigkill_external", kill_from_outside=True, timeout=300.0),
    _unknown("tf_hang",
             f"{_TF}: worker 1 stops inside step 3 (nothing logged about why); the others' all-reduce runs into the "
             "job's collective timeout (CommunicationOptions timeout_seconds=10) and they fail; the launch then ends "
             "worker 1. Nothing records why worker 1 stopped: a hang the job's own limit ended: unknown.",
             mode="tf", lab_fault="hang", timeout=300.0),
    _sw("tf_port_in_use", "app.exception.setup",
        f"{_TF}: a leftover process of an earlier job already listens on worker 1's TF_CONFIG port: worker 1's gRPC "
        "server cannot bind it (EADDRINUSE) and the worker fails at start-up; the others wait for it at the "
        "coordination service until the launch ends them. The job's own set-up on this node: app.exception.setup, "
        "never the network.", mode="tf", lab_fault="none", occupy_port=True, timeout=300.0),
]})


# ------------------------------------------------ twelfth round: Grid Engine (issue 25; lab/sge.py, lane "sge")
SGE_WORDS = "Under Grid Engine 8.1.9 (qsub -pe smp 3 of a job script running torchrun's 3 ranks, its -o / -e files)"
FAULTS.update({f.name: f for f in [
    _sw("sge_value_error", "app.exception",
        f"{SGE_WORDS}: rank 1 raises ValueError at step 3; torchrun ends the other ranks and the job script exits 1 "
        "(qacct failed 0, exit_status 1). The workload's exception: app.exception on the node.",
        mode="sge", lab_fault="value_error", lane="sge"),
    Fault("sge_completed", "sge",
          f"{SGE_WORDS}: a clean run with a UserWarning and a caught, logged FileNotFoundError; qacct failed 0, "
          "exit_status 0. Nothing failed: none.", domain="none", outcome="succeeded", affected_nodes=[],
          lab_fault="completed_warnings", lane="sge"),
    Fault("sge_h_rt", "sge",
          f"{SGE_WORDS} with qsub -l h_rt=60: every rank sits in a long evaluation from step 3; the execd kills the "
          "job when its wall clock passes the hard run-time limit it asked for (qacct failed 37 'qmaster enforced "
          "h_rt, h_cpu, or h_vmem limit', exit_status 137). The scheduler's time limit: scheduler.time_limit.",
          domain="scheduler", category="scheduler.time_limit", outcome="timeout", affected_nodes=[],
          lab_fault="time_limit", qsub_opts=("-l", "h_rt=60"), lane="sge", timeout=240.0),
    _sw("sge_h_vmem", "host.oom",
        f"{SGE_WORDS} with qsub -l h_vmem=900M (per slot: 2.6 GiB for the job's processes together as the execd "
        "counts them, about 1.1 GiB of it after import): every rank leaks host memory from step 3 and the execd kills "
        "the job over its hard virtual-memory limit ('exceeds job hard limit \"h_vmem\" ... sending SIGKILL'; qacct "
        "failed 37, exit_status 137). The scheduler's memory-limit enforcement: host.oom on the node. (Every rank "
        "leaks, not rank 1 alone: the shepherd's RLIMIT_AS per process is the job's limit too, and one rank leaking "
        "alone meets it about when the execd does; the first run, with rank 1 alone under 1800M, never reached the "
        "limit before the peers' 10 s gloo timeout ended the job.)",
        mode="sge", lab_fault="memory_leak", ranks="0,1,2", outcome=None, qsub_opts=("-l", "h_vmem=900M"),
        lane="sge", timeout=240.0),
    Fault("sge_qdel", "sge",
          f"{SGE_WORDS}: a healthy job is deleted with qdel while every rank is at step 3; the execd kills it. "
          "Cancelled by a user: scheduler.cancelled (the SIGKILL and the peers' errors are consequences).",
          domain="scheduler", category="scheduler.cancelled", outcome="cancelled", affected_nodes=[],
          lab_fault="scancel", scancel_at_marker=True, lane="sge"),
]})
