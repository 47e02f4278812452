"""Container runtimes and launchers (extract/container.py over catalog/platform.yaml `container_errors`).

Each line is a format string of the program that prints it, filled in by us; the comment names the repository and
file (and, where the whole line is a public paste, the thread)."""

from __future__ import annotations

import pytest

from firstfault.extract import container, gpu
from firstfault.extract.container import container_fields
from tests.extract import helpers
from tests.extract.helpers import assert_fields, holds_literal, scan

EX = container.ContainerErrorExtractor()


@pytest.mark.parametrize(
    ("line", "runtime", "error"),
    [
        # NVIDIA/pyxis pyxis_slurmstepd.c `pyxis: failed to import docker image: %s` under slurmstepd's error prefix
        ("slurmstepd: error: pyxis: failed to import docker image: nvcr.io#nvidia/pytorch:24.01-py3", "pyxis", "start"),
        # NVIDIA/pyxis pyxis_slurmstepd.c `pyxis: --container-mounts: source path does not exist: %s`
        ("slurmstepd: error: pyxis: --container-mounts: source path does not exist: /lustre/datasets", "pyxis", "job"),
        # NVIDIA/enroot src/common.sh `URL %s returned error code: %s %s`, as pyxis prints enroot's log
        ("slurmstepd: error: pyxis:     [ERROR] URL https://nvcr.io/v2/nvidia/pytorch/manifests/99.99-py3 returned "
         "error code: 404 Not Found", "enroot", "job"),
        ("slurmstepd: error: pyxis:     [ERROR] URL https://registry-1.docker.io/v2/library/ubuntu/manifests/22.04 "
         "returned error code: 429 ", "enroot", "registry"),
        # NVIDIA/enroot bin/enroot-nsenter.c err(3): `<prog>: failed to ...: <strerror>`
        ("enroot-nsenter: failed to create user namespace: Operation not permitted", "enroot", "node"),
        # opencontainers/runc libcontainer/process_linux.go, quoted by containerd's CRI in a kubelet event
        ("Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create "
         "failed: unable to start container process: unable to apply cgroup configuration: mkdir "
         "/sys/fs/cgroup/pids/kubepods: no space left on device: unknown", "runc", "node"),
        # runc's exec of an entrypoint not in the image (Go os/exec ErrNotFound), as Docker prints it
        ('docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI '
         'runtime create failed: runc create failed: unable to start container process: exec: "python": executable '
         'file not found in $PATH: unknown.', "runc", "job"),
        # moby's pull error for a repository that does not exist or needs a login, the registry's DENIED last
        ("docker: Error response from daemon: pull access denied for nosuchorg/trainer, repository does not exist or "
         "may require 'docker login': denied: requested access to the resource is denied.", "registry", "job"),
        # moby's words alone (distribution/errors.go), the registry's message cut off
        ("docker: Error response from daemon: pull access denied for nosuchorg/trainer, repository does not exist or "
         "may require 'docker login'", "docker", "job"),
        # the kubelet's image manager (pkg/kubelet/images/image_manager.go `Failed to pull image %q: %v`)
        ('Failed to pull image "pytorch/pytorch:2.3.0": toomanyrequests: You have reached your pull rate limit.',
         "registry", "registry"),
        # libnvidia-container src/cli/configure.c `mount error: %s`, its mount stage finding the host's driver file
        # already in the image (EEXIST): the job's image (NVIDIA/nvidia-container-toolkit#176,
        # NVIDIA/nvidia-docker#1551)
        ("nvidia-container-cli: mount error: file creation failed: /var/lib/docker/overlay2/abc/merged/usr/lib/"
         "x86_64-linux-gnu/libnvidia-ml.so.1: file exists: unknown", "nvidia-container-cli", "job"),
        # the same under Docker 18.06's aufs and runc's hook wrapper (NVIDIA/nvidia-container-runtime#41)
        ('docker: Error response from daemon: OCI runtime create failed: container_linux.go:348: starting container '
         'process caused "process_linux.go:402: container init caused \\"process_linux.go:385: running prestart hook '
         '1 caused \\\\\\"error running hook: exit status 1, stdout: , stderr: exec command: '
         '[/usr/bin/nvidia-container-cli --load-kmods configure --device=all --compute --utility --video --pid=30055 '
         '/var/lib/docker/aufs/mnt/e5827a97]\\\\\\\\nnvidia-container-cli: mount error: file creation failed: '
         '/var/lib/docker/aufs/mnt/e5827a97/usr/bin/nvidia-smi: file exists\\\\\\\\n\\\\\\"\\""": unknown.',
         "nvidia-container-cli", "job"),
        # the mount stage's other errnos are the node's: persistenced's socket (NVIDIA/nvidia-docker#1300)
        ("nvidia-container-cli: mount error: file creation failed: /var/lib/docker/overlay2/d577/merged/run/"
         "nvidia-persistenced/socket: no such device or address", "nvidia-container-cli", "node"),
        # and EEXIST at another stage is no image's file: the stage's words decide (libnvidia-container
        # src/cli/configure.c `ldcache error: %s`, an errno of ours filled in)
        ("nvidia-container-cli: ldcache error: open failed: /var/lib/docker/overlay2/abc/merged/etc/ld.so.cache: "
         "file exists", "nvidia-container-cli", "node"),
        # NVIDIA/nvidia-container-toolkit internal/modifier/cdi/registry.go
        ("failed to inject CDI devices: unresolvable CDI devices nvidia.com/gpu=all: unknown",
         "nvidia-container-toolkit", "node"),
        # NVIDIA/nvidia-container-toolkit cmd/nvidia-container-runtime-hook/main.go, the hook in a mode other than
        # legacy refusing Docker's --gpus, its stderr quoted by runc under Docker (a public Indonesian post on Immich
        # after a toolkit update, its line as pasted there)
        ("Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime "
         "create failed: runc create failed: unable to start container process: error during container init: error "
         "running prestart hook #0: exit status 1, stdout: , stderr: Using requested mode 'cdi' invoking the NVIDIA "
         "Container Runtime Hook directly (e.g. specifying the docker --gpus flag) is not supported. Please use the "
         "NVIDIA Container Runtime (e.g. specify the --runtime=nvidia flag) instead.", "nvidia-container-toolkit",
         "node"),
        # ... and on a line of its own where the paste broke the hook's stderr (a Tegra's CSV mode, before 1.14's words;
        # a public how-to's docker run --gpus on Jetson)
        ("invoking the NVIDIA Container Runtime Hook directly (e.g. specifying the docker --gpus flag) is not "
         "supported. Please use the NVIDIA Container Runtime instead.: unknown.", "nvidia-container-toolkit", "node"),
        # moby/moby distribution/xfer/download.go `failed to register layer: %v`: the daemon's image store on the
        # node's disk full (NVIDIA/nvidia-docker#792, docker pull of DIGITS on AWS; aws/amazon-ecs-agent's status reason
        # before it, azavea/raster-vision#1212 on AWS Batch)
        ("failed to register layer: Error processing tar file(exit status 1): write /usr/share/vim/vim74/syntax/"
         "sisu.vim: no space left on device", "docker", "node"),
        ("CannotPullContainerError: failed to register layer: ApplyLayer exit status 1 stdout: stderr: write /root/"
         ".cache/pip/http/d/c/1/1/c/dc11c115dbb602e6636493addd92f61ac957da65f9166a69f6820fbc: no space left on device",
         "ecs", "node"),
        # ... and with a reason that is no storage errno: the start report alone (moby/moby#23869's title)
        ("failed to register layer: devicemapper: Error running deviceCreate (CreateSnapDeviceRaw) dm_task_run failed",
         "docker", "start"),
        # apptainer/apptainer internal/app/starter/master_linux.go `container creation failed: %s` after `FATAL:`
        ("FATAL:   container creation failed: mount hook function failure: mount /proc/self/fd/3->/var/lib/apptainer/"
         "mnt/session/rootfs error: while mounting image /proc/self/fd/3: kernel reported a bad superblock",
         "apptainer", "start"),
        # apptainer/apptainer cmd/internal/cli/pull.go `While making image from oci registry: %v` with
        # containers/image's registry answer (the distribution spec's DENIED message) filled in
        ("FATAL:   While making image from oci registry: error fetching image to cache: failed to get checksum for "
         "docker://acme/private:1.0: reading manifest 1.0 in docker.io/acme/private: requested access to the "
         "resource is denied", "registry", "job"),
        # distribution/distribution registry/client/errors.go `received unexpected HTTP status: %s`, as Docker prints it
        ("docker: Error response from daemon: received unexpected HTTP status: 503 Service Unavailable.", "registry",
         "registry"),
        # containers/crun's exec error as Podman prints it, with its wrapper after it (libpod/define/errors.go)
        ("Error: crun: executable file `torchrun` not found in $PATH: No such file or directory: OCI runtime attempted "
         "to invoke a command that was not found", "crun", "job"),
        # crun's cgroup set-up, the same wrapper after it
        ("Error: crun: creating cgroup directory `/sys/fs/cgroup/systemd/libpod_parent/libpod-3f1`: No such file or "
         "directory: OCI runtime attempted to invoke a command that was not found", "crun", "node"),
        # NVIDIA/enroot src/docker.sh docker::import `common::err "File already exists: ${filename}"` (the format
        # string; the path ours), as pyxis prints enroot's log and alone: the output the job named already stands
        ("slurmstepd: error: pyxis:     [ERROR] File already exists: /lustre/containers/nvidia+pytorch+24.01-py3.sqsh",
         "enroot", "job"),
        ("[ERROR] File already exists: /home/user/enroot/ubuntu.sqsh", "enroot", "job"),
        # apptainer/apptainer cmd/internal/cli/build_linux.go `While performing build: %v` (a pull from a Docker daemon
        # or an OCI registry runs the build), a public troubleshooting note's line (the MPI-CBG assembly workshop's
        # README, https://git.mpi-cbg.de/assembly/assembly_workshop): the image's blobs in a /tmp too small, the
        # runtime's scratch on the node
        ("FATAL:   While performing build: conveyor failed to get: Error writing blob: write "
         "/tmp/bundle-temp-817373221/oci-put-blob352501850: no space left on device", "apptainer", "node"),
        # ... with a reason of the job's own (an archive `docker save` wrote with two images, a course's post on SMU's
        # M2 cluster): no errno, the start report alone
        ("FATAL:   While performing build: conveyor failed to get: Unexpected tar manifest.json: expected 1 item, "
         "got 2", "apptainer", "start"),
        # NVIDIA/enroot bin/enroot-switchroot.c, its exec of the command the container starts with (`failed to
        # execute: %s` after execvp): a distroless image under pyxis, which starts a shell first (NVIDIA/srt-slurm's
        # docs): the job's image holds no such program
        ("enroot-switchroot: failed to execute: /bin/sh: No such file or directory", "enroot", "job"),
        # ... while its other steps stay the node's (the format `failed to %s`, an errno of ours)
        ("enroot-switchroot: failed to pivot root: Operation not permitted", "enroot", "node"),
        # enroot's row wins over a shorter row that ends at the same place
        ("pyxis:     [ERROR] URL https://nvcr.io/v2/nvidia/pytorch/manifests/99.99-py3 returned error code: 404 Not "
         "Found", "enroot", "job"),
    ],
)
def test_a_container_error_is_read_by_what_it_says(line: str, runtime: str, error: str) -> None:
    assert holds_literal(EX, line)
    (d,) = scan(EX, [line], source="application")
    assert d.kind == "container.error"
    assert_fields(d, {"runtime": runtime, "error": error})


def test_the_deepest_error_of_a_chain_decides() -> None:
    # runc's wrappers first, the registry's answer last: the last row that says why decides, and the message starts
    # at the first container word of the line
    f = container_fields('Error: failed to pull and unpack image "docker.io/library/ubuntu:99": failed to resolve '
                         'reference "docker.io/library/ubuntu:99": docker.io/library/ubuntu:99: not found: '
                         "manifest unknown")
    assert f is not None
    assert f["error"] == "job"
    assert str(f["message"]).startswith("failed to pull and unpack image")


@pytest.mark.parametrize(
    "line",
    [
        # a Go program of the job's own running a tool it lacks: no container's words before it
        'exec: "nvidia-smi": executable file not found in $PATH',
        # a rate-limit word in a workload's own upload log
        "WARNING: upload throttled (toomanyrequests), retrying in 5 s",
        # a registry word outside a pull (a model hub's client)
        "huggingface_hub: manifest unknown for revision main, falling back to the default branch",
        # pyxis's progress line before an import
        "pyxis: importing docker image: nvcr.io#nvidia/pytorch:24.01-py3",
        # a Go program's own EEXIST after a container's words, no toolkit's mount stage (moby's daemon making a
        # directory of its own; the words are Go's os.PathError)
        "docker: Error response from daemon: mkdir /var/lib/docker/volumes/ckpt: file exists.",
        # mount.cifs's own error: no toolkit's
        "mount error(13): Permission denied",
        # DAOS's container (a storage pool's) is no container runtime's
        "daos: container create failed: DER_NO_PERM(-1001): 'No permission'",
        # a bare `[ERROR]` is any program's: an API client's rate limit is no registry's
        "[ERROR] metrics push failed: toomanyrequests: slow down",
        # another program's EEXIST in its own words, without enroot's tag (synthetic)
        "ERROR: File already exists: /home/user/out.csv (use --overwrite)",
        # the toolkit hook's word on the mode it runs in, which it goes on from (cmd/nvidia-container-runtime-hook)
        "Using requested mode 'cdi'",
        # a script's comment that explains the refusal in its own words (no hook's words)
        "# --gpus all invokes the prestart hook directly and the runtime refuses outright in CDI mode",
    ],
)
def test_near_misses_are_not_container_errors(line: str) -> None:
    assert scan(EX, [line], source="application") == []


def test_the_toolkit_unable_to_reach_the_driver_is_nvmls() -> None:
    # libnvidia-container src/cli/configure.c `initialization error: %s` with NVML's answer: node.driver's table
    line = ("docker: Error response from daemon: OCI runtime create failed: container_linux.go:345: starting container "
            'process caused "process_linux.go:430: container init caused \\"process_linux.go:413: running prestart '
            "hook 0 caused \\\\\\\"error running hook: exit status 1, stdout: , stderr: nvidia-container-cli: "
            'initialization error: nvml error: driver not loaded\\\\\\\\n\\\\\\"\\"": unknown.')
    assert scan(EX, [line], source="application") == []
    drafts = scan(gpu.NvmlErrorExtractor(), [line], source="application")
    assert [d.fields.get("error") for d in drafts] == ["driver"]


# --- Kubernetes: the same words in a pod's or an event's message, and the kubelet's waiting reasons -----------------

_START_MESSAGE = ("failed to create containerd task: failed to create shim task: OCI runtime create failed: runc "
                  'create failed: unable to start container process: exec: \\"torchrun\\": executable file not found '
                  "in $PATH: unknown")
_POD_START_ERROR = """{"apiVersion": "v1", "kind": "PodList", "items": [{
  "metadata": {"name": "trainer-0"}, "spec": {"nodeName": "gpu-node-7"},
  "status": {"phase": "Failed", "containerStatuses": [{"name": "trainer", "state": {"terminated": {
    "exitCode": 128, "reason": "StartError", "finishedAt": "2026-12-01T10:00:00Z",
    "message": "MESSAGE"}}}]}}]}
""".replace("MESSAGE", _START_MESSAGE)


def test_a_pods_start_error_names_the_runtimes_reason() -> None:
    # containerd's StartError message with runc's exec error (their formats, filled in)
    from firstfault.extract.kube import read_k8s

    res = read_k8s(_POD_START_ERROR, "k8s-pods", "k8s/pods.json")
    (ev,) = [e for e in res.events if e.kind == "container.error"]
    assert ev.node == "gpu-node-7"
    assert ev.fields["error"] == "job"
    assert ev.fields["reported_by"] == "pod"  # the container's own state: it never ran
    assert ev.time is not None


def test_a_pods_plain_error_is_no_container_error() -> None:
    from firstfault.extract.kube import read_k8s

    text = _POD_START_ERROR.replace("StartError", "Error").replace("executable file not found in $PATH", "boom")
    res = read_k8s(text, "k8s-pods", "k8s/pods.json")
    assert [e for e in res.events if e.kind == "container.error"] == []


def test_an_events_pull_failure_is_read_by_its_message() -> None:
    # the kubelet's `Failed to pull image %q: %v` with containerd's resolver error filled in, in `kubectl get events`
    from firstfault.extract.kubetext import read_kubectl_text

    text = ("LAST SEEN   TYPE      REASON   OBJECT            MESSAGE\n"
            '2m          Warning   Failed   pod/trainer-0     Failed to pull image "nvcr.io/nvidia/pytorch:99.99-py3": '
            'rpc error: code = NotFound desc = failed to pull and unpack image "nvcr.io/nvidia/pytorch:99.99-py3": '
            'failed to resolve reference "nvcr.io/nvidia/pytorch:99.99-py3": nvcr.io/nvidia/pytorch:99.99-py3: '
            "not found: manifest unknown\n"
            '2m          Normal    Pulling  pod/trainer-0     Pulling image "nvcr.io/nvidia/pytorch:99.99-py3"\n')
    res = read_kubectl_text(text, "k8s-table", "k8s/events.txt")
    errs = [e for e in res.events if e.kind == "container.error"]
    assert [(e.fields["error"], e.fields["reported_by"]) for e in errs] == [("job", "event")]  # one try, retried


@pytest.mark.parametrize(("status", "due_to"), [("CreateContainerConfigError", "setup"), ("InvalidImageName", "setup"),
                                               ("ImagePullBackOff", None), ("ContainerCreating", None)])
def test_the_kubelets_waiting_reasons(status: str, due_to: str | None) -> None:
    # `kubectl get pods -o wide` rows: the kubelet's words for a spec it cannot give are the job's set-up; a pull that
    # backs off names no side by its word
    from firstfault.extract.kubetext import read_kubectl_text

    text = ("NAME        READY   STATUS   RESTARTS   AGE   IP           NODE\n"
            f"trainer-0   0/1     {status}   0          5m    10.0.0.12    gpu-node-7\n")
    res = read_kubectl_text(text, "k8s-table", "k8s/pods.txt")
    pods = [e for e in res.events if e.kind == "k8s.pod"]
    assert [e.fields.get("due_to") for e in pods] == ([due_to] if due_to else [])


def test_the_kubelets_own_log_of_one_try_says_so() -> None:
    # staging/src/k8s.io/cri-client/pkg/remote_runtime.go's klog line with runc's cgroup error filled in: a try the
    # kubelet retries; Docker's CLI tries once
    kubelet = ('E1204 10:00:01.000000     812 remote_runtime.go:343] "StartContainer from runtime service failed" '
               'err="rpc error: code = Unknown desc = failed to create containerd task: failed to create shim task: '
               "OCI runtime create failed: runc create failed: unable to start container process: unable to apply "
               'cgroup configuration: mkdir /sys/fs/cgroup/pids/kubepods: no space left on device: unknown"')
    f = container_fields(kubelet)
    assert f is not None
    assert (f["error"], f.get("reported_by")) == ("node", "kubelet")
    docker = ("docker: Error response from daemon: failed to create task for container: failed to create shim task: "
              "OCI runtime create failed: runc create failed: unable to start container process: unable to apply "
              "cgroup configuration: no space left on device: unknown.")
    f = container_fields(docker)
    assert f is not None
    assert (f["error"], f.get("reported_by")) == ("node", None)


# ---------------------------------------------------------------- a storage errno inside the runtime's own error

# NVIDIA/nvidia-container-toolkit#2028's "Before" (the toolkit 1.20.0 hook that made a directory under a read-only
# /etc/nvidia), Docker's CLI with runc's report of the createContainer hook and the hook's stderr on one line
_HOOK_EROFS = ('docker: Error response from daemon: failed to create task for container: failed to create shim task: '
               'OCI runtime create failed: runc create failed: unable to start container process: error during '
               'container init: error running createContainer hook #6: exit status 1, stdout: , stderr: '
               'time="2026-08-26T21:50:49Z" level=error msg="failed to create application profiles directory: mkdirat '
               'etc/nvidia/nvidia-application-profiles-rc.d: read-only file system"')


def _kinds(lines: list[str]) -> list[tuple[str, object]]:
    return [(e.kind, e.fields.get("error") or e.fields.get("errno")) for e in helpers.events(lines)]


def test_a_storage_errno_in_the_runtimes_own_error_is_the_nodes_container_plumbing() -> None:
    assert _kinds([_HOOK_EROFS]) == [("container.error", "node")]
    # the same report posted as the runtime prints its quote of the hook's stderr, on the lines after it (synthetic:
    # the line above cut where its stderr begins)
    head = _HOOK_EROFS.partition(" time=")[0]
    lines = [head, "failed to create application profiles directory:",
             "mkdirat etc/nvidia/nvidia-application-profiles-rc.d: read-only file system"]
    assert ("container.error", "node") in _kinds(lines)
    assert not [k for k, _ in _kinds(lines) if k == "storage.error"]


@pytest.mark.parametrize("lines", [
    # the job's own write after its container started (synthetic): no runtime's words before it
    ["Epoch 3: saving checkpoint", "OSError: [Errno 30] Read-only file system: '/ckpt/epoch3.pt'"],
    # the runtime's report that opens no quote, then the job's errno later in the stream (synthetic)
    ["error running createContainer hook #6: exit status 1", *(f"step {i}" for i in range(6)),
     "tee: train.log: No space left on device"],
])
def test_near_miss_a_storage_errno_outside_the_runtimes_error_stays_storage(lines: list[str]) -> None:
    kinds = _kinds(lines)
    assert any(k == "storage.error" for k, _ in kinds)
    assert ("container.error", "node") not in kinds


# a node's copied syslog given as its kernel source (docs/evidence-bundle.md: /var/log/messages, syslog): slurmd's SPANK
# epilog with pyxis's words in it (awslabs/awsome-distributed-ai#141, enroot's data directory not writable)
HYPERPOD_EPILOG = [
    "Feb 16 19:30:06 ip-10-1-101-117 slurmd[53634]: spank-epilog: error: pyxis: couldn't execute enroot command",
    "Feb 16 19:30:06 ip-10-1-101-117 slurmd[53634]: spank-epilog: error: pyxis:     mkdir: cannot create directory "
    "'/opt/dlami/nvme/tmp/enroot/data': Permission denied",
    "Feb 16 19:30:06 ip-10-1-101-117 slurmd[53634]: spank-epilog: error: spank: required plugin spank_pyxis.so: "
    "job_epilog() failed with rc=-1",
]


def test_a_containers_words_in_a_nodes_syslog_given_as_its_kernel_source() -> None:
    got = [(e.fields["runtime"], e.fields["error"])
           for e in helpers.events(HYPERPOD_EPILOG, "kernel", file="nodes/n1/syslog", node="n1")
           if e.kind == "container.error"]
    assert ("pyxis", "node") in got


def test_near_miss_the_kernels_own_lines_in_that_source_are_no_container_error() -> None:
    # the kernel's cgroup and overlay words are its own (no runtime's row), read in the same source
    lines = ["Feb 16 19:30:06 n1 kernel: [  12.3] overlayfs: upper fs does not support tmpfile.",
             "Feb 16 19:30:06 n1 kernel: [  12.4] cgroup: cgroup2: unknown option \"memory_recursiveprot\""]
    assert [e for e in helpers.events(lines, "kernel", file="nodes/n1/syslog", node="n1")
            if e.kind == "container.error"] == []
