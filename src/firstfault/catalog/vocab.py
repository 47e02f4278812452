"""The vendor tables' closed vocabularies: the classes, sides and states a row may name, the error a malformed
table raises, and the check of a field that must be a regular expression (tables and rules).

The records of the rows (catalog/tables.py) type their fields with them; the rules read the regex check too.
"""

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Final, Literal


class CatalogTableError(ValueError):
    """A shipped table is malformed: a packaging bug, never user input."""


# True while rows that this check passed are read back (catalog/tables.py `_kept`: the on-disk cache entry of a
# table is keyed by the sha256 of its file and of the sources that validated it, this module among them).
_CHECKED: ContextVar[bool] = ContextVar("checked", default=False)


@contextmanager
def checked_rows() -> Iterator[None]:
    """Rows decoded inside this block were validated when their cache entry was written (tables._kept): their
    regex fields compiled then, with the same Python, so check_regex does not compile them again. Every start-up
    compiled the exception table's 92 message patterns and the end reports' here (20-30 ms of CPU), where the
    readers build them lazily (lazyre), from code kept on disk, at their first use."""
    token = _CHECKED.set(True)
    try:
        yield
    finally:
        _CHECKED.reset(token)


def rows_checked() -> bool:
    """Whether the rows being built are read back from the cache (checked_rows): a record's check that compiles one
    of its regex fields (to read its groups, to match its example) skips that, as check_regex does; it passed when the
    entry was written."""
    return _CHECKED.get()


def check_regex(value: str) -> None:
    """A field that must be a regular expression (a table's, a rule's): a ValueError naming it when it does not
    compile (a record's check raises it; records.py reports it at the record's path). Not compiled again for rows
    read back from the cache (checked_rows)."""
    if rows_checked():
        return
    try:
        re.compile(value)
    except re.error as exc:
        raise ValueError(f"bad regex {value!r}: {exc}") from exc


# The GPU: Xids, SXids, CUDA errors (catalog/xid.yaml, sxid.yaml, cuda.yaml)
XidClass = Literal[
    "memory", "memory_info", "nvlink", "nvlink5", "fallen_off_bus", "firmware", "pcie", "app", "sympathetic",
    "recovery", "informational", "other",
]
SxidClass = Literal["fatal", "nonfatal", "always_fatal", "other"]
CudaClass = Literal[
    "illegal_address", "misaligned_address", "illegal_instruction", "device_assert", "invalid_pc",
    "hardware_stack", "oom", "ecc", "nvlink", "driver", "system_not_ready", "unavailable", "launch_failure",
    "launch_timeout", "deinitialized", "config", "device_choice", "usage", "other",
]
# The CUDA math libraries (and ROCm's BLAS and DNN libraries) whose statuses are rows of catalog/cuda.yaml
# `library_statuses`
CudaLibrary = Literal["cublas", "cusolver", "cusparse", "cufft", "curand", "hipblas", "rocblas", "miopen",
                      "hipfft"]

# The GPU platform from user space (catalog/platform.yaml)
NvmlClass = Literal["driver", "no_devices", "lost", "unresponsive", "unknown", "not_supported"]
# What an NVRM message without an Xid is (catalog/platform.yaml `nvrm_messages`), and the reasons each event takes.
NvrmEvent = Literal["reset_required", "nvml_error", "none"]
NvrmResetReason = Literal["reset_required", "init_failed", "firmware_hung"]
NvrmNoneReason = Literal["banner", "companion"]
# What a line of NVIDIA Fabric Manager's or the IMEX daemon's own log is (catalog/platform.yaml
# `fabric_manager_messages`): gpu.fabricmanager's `fm_event`, or `none` (read, and nothing).
FmEvent = Literal["nvswitch_fatal", "nvswitch_nonfatal", "gpu_nvl_fatal", "gpu_nvl_nonfatal", "trunk_port_failure",
                  "multicast_failure", "topology_mismatch", "fm_failed", "port_down", "imex_failed", "none"]
# What a container runtime's or a container launcher's error is (catalog/platform.yaml `container_errors`): the node's
# container plumbing, the image registry, the job's own container spec, or the runtime's words that it did not start.
ContainerClass = Literal["node", "registry", "job", "start"]
# What a storage client's or FUSE daemon's words say (catalog/platform.yaml `storage_words`): the file system failing,
# a loss the client waits out, its recovery, the job's request of the mount, or the node unable to make a FUSE mount.
StorageWordClass = Literal["failure", "transient", "recovery", "job", "node"]
# What a program of the platform under the workload is to a job on its node (catalog/platform.yaml
# `platform_programs`): its device plugin, its driver stack, the container toolkit, its own daemons, the scheduler's
# daemons on it (Slurm's slurmd and the munge it authenticates with), a program that
# watches or configures it, a FUSE mount's daemon, the file systems' drivers and services of the node (CSI plugins,
# client units), a distributed framework's own processes (Ray's raylet, GCS, idle workers), the InfiniBand fabric's
# management (its subnet manager, which may run on a node of the cluster).
PlatformPart = Literal["device_plugin", "driver", "toolkit", "runtime", "scheduler", "monitor", "storage",
                       "storage_driver", "cluster", "fabric", "provision"]
# The part of the node a kernel module belongs to (catalog/platform.yaml `kernel_modules`): the accelerator's own
# driver (node.driver), GPUDirect's peer-to-peer modules (node.driver.gpudirect), the RDMA stack (node.driver.rdma).
ModulePart = Literal["driver", "gpudirect", "rdma"]
# What the reason a module did not load says (catalog/platform.yaml `kernel_module_reasons`): the kernel refused it
# (built for another kernel or stack, unsigned, its init failed), it found none of its hardware, it was loaded already;
# and DKMS's build of it that failed (`not_built`: no row's, the reader's own for DKMS's words).
ModuleReasonClass = Literal["refused", "no_device", "loaded", "not_built", "failing"]
HostSeverity = Literal["uncorrected", "corrected", "informational"]
# Who printed a host memory error (host.mce's `source`): the BMC's SEL, HPE's IML, rasdaemon and ras-mc-ctl, the
# kernel's memory-failure handler, a process told by its signal, a memory tester in user space.
MemoryErrorSource = Literal["bmc", "iml", "rasdaemon", "memory_failure", "sigbus", "memtester"]
# What a message of an accelerator other than NVIDIA's is (catalog/accel.yaml): the Xid classes' words that apply,
# `link` for the GPU-to-GPU interconnect (AMD's XGMI, an NVLink link down), `link_info` for a link's corrected-error
# count, `thermal`, and `hang` (the driver reset an engine or the GPU because a job's work on it did not finish in
# time: a symptom, whose cause the reset does not name).
AccelClass = Literal["memory", "memory_info", "link", "link_info", "fallen_off_bus", "firmware", "hang", "pcie",
                     "thermal", "driver", "app", "other", "informational"]
AccelVendor = Literal["amd", "intel", "aws", "nvidia"]
IpmiSeverity = Literal["uncorrected_fatal", "uncorrected_nonfatal", "corrected"]
# What a BMC's power-supply or power-unit event says of the node's power (catalog/platform.yaml `ipmi_power_events`): a
# supply or the unit that failed, a redundant set left without its spare, the input feed lost (the facility's, not the
# node's part), a failure predicted, the unit switched off or cycled (an action).
IpmiPowerState = Literal["failed", "redundancy_lost", "input_lost", "predictive", "action"]

# The transports' statuses and events (catalog/transport.yaml)
IbWcClass = Literal["path", "local_access", "flush", "remote_access", "resource", "remote", "local", "fatal",
                    "other"]
CompletionStack = Literal["ibv", "mlx5", "efa", "cxi"]
AsyncMeans = Literal["link_down", "device_fatal", "queue_error", "info"]
PeerStack = Literal["ucx", "ompi", "orte", "pmix", "mpich", "nccl", "btl_tcp", "nixl"]
PeerMeans = Literal["timeout", "reset", "unreachable", "refused", "lost", "none"]
LocalStack = Literal["nccl", "mca", "ompi", "impi", "cray", "gloo", "mpich", "ucx", "hydra", "ssh", "nixl",
                     "mooncake", "ccl", "ofi", "petsc", "pslite"]

# Exceptions, status words, errno and object-store codes (catalog/exceptions.yaml)
ExceptionFamily = Literal[
    "object_store", "setup", "peer", "timeout", "collective", "aborted", "accelerator_oom", "gpu_arch", "disk_full",
    "shm", "status", "exception", "envelope", "loader", "fs_service",
]
ErrnoSide = Literal["storage", "setup", "peer", "none"]
# The limit a container, scheduler or login gives a job's processes that a set-up error names (the events' `limit`):
# /dev/shm's size, locked memory (`ulimit -l`), processes and threads (`ulimit -u`), open files (`ulimit -n`), the
# size of a file it writes (`ulimit -f`).
ResourceLimit = Literal["shm", "memlock", "nproc", "nofile", "fsize"]
StoreSide = Literal["store", "workload"]
# What a store-side code says of the store (catalog/exceptions.yaml `object_store_codes` `cause`).
StoreCause = Literal["throttled", "unavailable", "timeout", "internal", "full", "quota"]

# Why schedulers and orchestrators end jobs (catalog/scheduler.yaml)
SchedReasonName = Literal[
    "time_limit", "memory_limit", "preemption", "node_failure", "cancelled", "admin_cancelled", "eviction",
    "backoff_limit", "resource_limit", "count_limit", "setup", "host_maintenance", "device_plugin", "placement",
]
# Who ends a job or kills its process, in its own words: the schedulers, orchestrators and managed services, and the
# node's userspace memory killers (systemd-oomd, earlyoom, Dask's nanny), which catalog/scheduler.yaml's memory_limit
# phrases name
SchedulerName = Literal["sge", "pbs", "pbspro", "torque", "moab", "lsf", "flux", "kubernetes", "htcondor", "docker",
                        "ecs", "nomad", "slurm", "gcp", "aws", "azure", "ray", "sagemaker", "vertex", "modal",
                        "systemd-oomd", "earlyoom", "yarn", "pals", "dask", "kaggle", "colab", "submitit",
                        "github_actions", "buildkite"]
# The cloud APIs among them: their words are about a VM (a preemption that takes a node back, a quota or a stock-out
# that refused to create one), never about the job's own process
CLOUD_SCHEDULERS: Final = frozenset({"gcp", "aws", "azure"})
# Which field of a record a word is a value of: a reason, a Flux result, a pod phase, a node's readiness, a node
# condition's reason (any condition's, not only Ready's), HTCondor's HoldReasonCode, a job state (Slurm's), the MOM's
# own (negative) Exit_status (PBS's); a cloud's notice to the guest: GCE's metadata `maintenance-event`, an Azure
# Scheduled Event's `EventType`, an EC2 Spot interruption's `instance-action`; a managed batch or training service's own
# record: Google Cloud Batch's reserved task `exitCode`, an Azure Batch node's `state` and job's `terminateReason`, a
# SageMaker training job's `SecondaryStatus`, an ECS task's `stopCode`.
ReasonField = Literal["reason", "result", "phase", "node_status", "condition_reason", "hold_code", "state",
                      "exit_status", "maintenance_event", "event_type", "instance_action", "exit_code", "node_state",
                      "terminate_reason", "secondary_status", "stop_code", "exit_type"]
# What the value of a key of a workload manager's record says (catalog/scheduler.yaml `keys`; extract/endstate.py):
# a reason word (`reason: OOMKilled`), a message in prose (`message: The node was low on resource: memory.`),
# a flag whose true names its reason (docker's `"OOMKilled": true`), a code of the table (`HoldReasonCode = 34`).
EndKeyRole = Literal["reason", "message", "flag", "code"]
# How a run ended in its own programs' words (catalog/ends.yaml): the outcome a line gives, and what it is about
# (the launcher's record of every process, one process's exit, the training loop's planned end, a notice printed
# while a process exits).
EndOutcome = Literal["succeeded", "failed", "stopped", "restart", "code"]
EndScope = Literal["job", "process", "stage", "exit"]
# What a stall or hang detector's message says (catalog/ends.yaml `stalls`): the run did not progress, or a wait
# it prints at healthy starts too.
StallReading = Literal["stall", "wait"]
# How a printer's exit number reads (catalog/exits.yaml): an exit value with the shell's 128+N, Python's -N too, a
# raw wait status, either of the first and the third (by whether the process exited), a signal's number, the
# batch system's 256+N, or the program's own code with no signal in it.
ExitMeans = Literal["shell", "negative", "wait", "either", "signal", "offset", "value"]
# Who failed, by Slurm's own error words (catalog/slurm.yaml `side`): the job's own request or set-up, the node's or the
# cluster's Slurm plumbing below it, or no one (a race, a retry, a state waited out).
SlurmSide = Literal["job", "node", "none"]
# What a Slurm node reason says of the node (catalog/slurm.yaml `node_reasons`).
NodeReasonMeans = Literal["lost", "node", "health_check", "symptom", "none"]
# The part of a node a health check examines (catalog/health.yaml `checks`); `none`: no part of it.
HealthPart = Literal["gpu", "gpu_memory", "nvlink", "network", "filesystem", "host", "driver", "none"]
# The Slurm-form job states a reason may stand for (extract/scheduler.SLURM_STATES).
ReasonState = Literal["TIMEOUT", "OUT_OF_MEMORY", "PREEMPTED", "NODE_FAIL", "CANCELLED", "FAILED"]
