"""HPC container runtimes in a Slurm job's stderr (issue 25): Slurm's SPANK stack and NVIDIA's pyxis over enroot,
squashfs-tools under enroot, Apptainer, Charliecloud (catalog/platform.yaml `container_errors`).

Lines marked "ours" are the program's format string filled in by us (the comment names the repository and file);
the others are public pastes, with their thread."""

from __future__ import annotations

import copy

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.extract import container
from firstfault.extract import traceback as tb
from firstfault.extract.container import container_owns
from firstfault.model import Verdict
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract.helpers import assert_fields, events, holds_literal, scan

EX = container.ContainerErrorExtractor()


@pytest.mark.parametrize(
    ("line", "runtime", "error"),
    [
        # ours: NVIDIA/pyxis pyxis_slurmstepd.c before commit dcdf11e (`pyxis: couldn't start container`, `pyxis: child
        # %d failed with error code: %d`), as slurmstepd prints a SPANK plugin's slurm_error
        ("slurmstepd: error: pyxis: couldn't start container", "pyxis", "start"),
        ("slurmstepd: error: pyxis: child 15359 failed with error code: 1", "pyxis", "start"),
        # ours: NVIDIA/pyxis pyxis_slurmstepd.c, the step's other tasks waiting on the first one's set-up
        ("slurmstepd: error: pyxis: a previous task terminated unexpectedly during container setup", "pyxis", "start"),
        # SchedMD/slurm src/common/spank.c and slurmstepd's exec_task, as NVIDIA/pyxis's users post them (the pyxis
        # issue tracker's pastes: `spank: required plugin spank_pyxis.so: task_init() failed with rc=-1`)
        ("slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1", "spank", "start"),
        ("slurmstepd: error: Failed to invoke spank plugin stack", "spank", "start"),
        # ours: NVIDIA/enroot bin/enroot-aufs2ovlfs.c err(3) with ENOSPC, as pyxis prints enroot's log
        ("slurmstepd: error: pyxis:     enroot-aufs2ovlfs: failed to create opaque ovlfs whiteout: "
         "/run/enroot/user-1000/x/1/usr/lib: No space left on device", "enroot", "node"),
        ("slurmstepd: error: pyxis:     enroot-mksquashovlfs: failed to mount overlay: 0:1:2: Invalid argument",
         "enroot", "node"),
        # ours: NVIDIA/enroot conf/hooks/98-nvidia.sh (`Command not found: nvidia-container-cli, see ...`) under pyxis
        ("slurmstepd: error: pyxis:     [ERROR] Command not found: nvidia-container-cli, see "
         "https://github.com/NVIDIA/libnvidia-container", "enroot", "node"),
        # ours: NVIDIA/enroot src/common.sh common::runparts, a hook of the node's that failed: its own line says why
        ("slurmstepd: error: pyxis:     [ERROR] /etc/enroot/hooks.d/98-nvidia.sh exited with return code 1", "enroot",
         "start"),
        # a pyxis user's paste (ENROOT_RUNTIME_PATH the node would not make): coreutils' mkdir under pyxis
        ("slurmstepd: error: pyxis:     mkdir: cannot create directory ‘/run/user/1000’: Permission denied", "enroot",
         "node"),
        # a pyxis user's paste: the image's WorkingDir that its rc script (NVIDIA/enroot src/docker.sh) cannot enter
        ("1: slurmstepd: error: pyxis:     /etc/rc: line 4: cd: /workspace: No such file or directory", "enroot",
         "job"),
        # ours: plougher/squashfs-tools mksquashfs.c write_destination (ERROR, then BAD_ERROR's `FATAL ERROR:`) under
        # pyxis: the node's path that enroot writes the image's squashfs to
        ("slurmstepd: error: pyxis:     Write failed because No space left on device", "squashfs", "node"),
        ("slurmstepd: error: pyxis:     FATAL ERROR: Failed to write to output filesystem", "squashfs", "node"),
        # ours: apptainer/apptainer pkg/util/loop/loop.go under the engine's and the starter's wrappers
        ("FATAL:   container creation failed: mount /proc/self/fd/3->/var/lib/apptainer/mnt/session/rootfs error: "
         "while mounting image /proc/self/fd/3: failed to find loop device: could not attach image file to loop "
         "device: no loop devices available", "apptainer", "node"),
        # ours: apptainer/apptainer cmd/starter/c/starter.c nserror (EPERM on CLONE_NEWUSER)
        ("FATAL:   Failed to create user namespace: not allowed to create user namespace", "apptainer", "node"),
        # ours: sylabs/singularity cmd/starter/c/starter.c nserror (EPERM on another namespace), SingularityCE's words
        ("FATAL:   Failed to create mount namespace: mount namespace requires privileges, check Singularity "
         "installation", "apptainer", "node"),
        # ours: apptainer/apptainer internal/pkg/runtime/launch/launcher_linux.go, the SIF unpacked into a sandbox in
        # the node's temporary directory, which filled up
        ("FATAL:   while extracting /scratch/u/pytorch.sif: root filesystem extraction failed: extract command "
         "failed: write /tmp/rootfs-1234/usr/lib/libcudnn.so.9: no space left on device", "apptainer", "node"),
        # ours: apptainer/apptainer internal/pkg/build/build.go with Go's exec.LookPath error: a tool the node lacks,
        # which the entrypoint row (the same Go words, the job's) must not take
        ('FATAL:   While making image from oci registry: error fetching image to cache: while building SIF from '
         'layers: unable to create new build: while searching for mksquashfs: exec: "mksquashfs": executable file '
         'not found in $PATH', "apptainer", "node"),
        ('FATAL:   container creation failed: exec: "nvidia-container-cli": executable file not found in $PATH',
         "apptainer", "node"),
        # hpc/charliecloud's ch-run fatal error (its own test suite's words and doc/faq.rst's form)
        ("ch-run[25750]: error: can't execve(2): python: No such file or directory (ch_core.c:480 2)", "charliecloud",
         "job"),
        ("ch-run[25750]: can't find image: foo: No such file or directory (ch-run.c:107 2)", "charliecloud", "job"),
    ],
)
def test_an_hpc_runtimes_failure_is_read_by_what_it_says(line: str, runtime: str, error: str) -> None:
    assert holds_literal(EX, line)
    (d,) = scan(EX, [line], source="application")
    assert d.kind == "container.error"
    assert_fields(d, {"runtime": runtime, "error": error})


@pytest.mark.parametrize(
    "line",
    [
        # pyxis's progress lines (NVIDIA/pyxis pyxis_slurmstepd.c slurm_spank_log / slurm_info) in a job that ran
        "slurmstepd: error: pyxis: importing docker image: nvcr.io#nvidia/pytorch:24.01-py3",
        "pyxis: imported docker image: nvcr.io#nvidia/pytorch:24.01-py3",
        "pyxis: creating container filesystem: pyxis_4242.0",
        "pyxis: completed container setup in 5123 ms",
        # Apptainer's warning that the host has no NVIDIA libraries to bind (launcher_linux.go sylog.Warningf), and
        # its note before unpacking a SIF: neither stops the container
        "WARNING: Could not find any nv files on this host!",
        "INFO:    Converting SIF file to temporary sandbox...",
        # the same words outside any container's report: any program's
        "[ERROR] Command not found: jq",
        "mkdir: cannot create directory '/scratch/u/out': File exists",
        "Write failed because No space left on device",
        "+ ./prepare.sh exited with return code 0",
        "/etc/rc: line 4: cd: /workspace: No such file or directory",
        # a Go tool of the job's own that lacks a program: no container's words (the entrypoint row's near miss too)
        'exec: "mksquashfs-helper": executable file not found in $PATH',
    ],
)
def test_progress_warnings_and_bare_words_are_no_container_errors(line: str) -> None:
    assert scan(EX, [line], source="application") == []


def test_a_runtimes_scratch_space_is_not_the_jobs_storage() -> None:
    # the ENOSPC that enroot's helper (or Apptainer's sandbox) ends with is the node's runtime path: one
    # container.error of class node, no storage.error beside it
    line = ("slurmstepd: error: pyxis:     enroot-aufs2ovlfs: failed to create opaque ovlfs whiteout: "
            "/run/enroot/user-1000/x/1/usr/lib: No space left on device")
    assert container_owns(line)
    kinds = [(e.kind, e.fields.get("error")) for e in events([line])]
    assert kinds == [("container.error", "node")]


def test_a_programs_own_enospc_stays_the_storages() -> None:
    # near miss: the same errno in a program's own words (no container's row reads it) is the file system's
    line = "tee: /lustre/ckpt/step-1000.log: No space left on device"
    assert not container_owns(line)
    assert [e.kind for e in events([line])] == ["storage.error"]
    # and a container's start word before it decides nothing about the errno either (a start row is no node row)
    assert not container_owns("slurmstepd: error: pyxis: container start failed with error code: 1")


# --- through the whole analysis ----------------------------------------------------------------------------------

# pyxis's progress line (NVIDIA/pyxis pyxis_slurmstepd.c slurm_spank_log), under slurmstepd's prefix
_IMPORTING = ("2026-11-02 10:00:30,000 slurmstepd: error: pyxis: importing docker image: "
              "nvcr.io#nvidia/pytorch:24.01-py3\n")
_STEPS = "".join(f"2026-11-02 10:0{m}:00,000 INFO step {m}\n" for m in range(5))


def _analyze(make_bundle: BundleMaker, text: str, state: str = "FAILED") -> Verdict:
    wl = copy.deepcopy(WORKLOAD)
    wl["workload"]["terminal_state"] = state
    ranks = {f"app/rank-{r}.log": _STEPS for r in range(6)}
    ranks["app/rank-2.log"] = _STEPS + text
    return Analyzer().analyze_path(str(make_bundle(ranks, wl)))


# ours, in the order pyxis prints an import that failed (the pyxis issue tracker's pastes: its wrappers, enroot's log
# line by line, the SPANK stack's words, srun's report), with squashfs-tools' words for a runtime path that is full
_IMPORT_ENOSPC = """2026-11-02 10:05:00,000 slurmstepd: error: pyxis: child 4242 failed with error code: 1
slurmstepd: error: pyxis: failed to import docker image
slurmstepd: error: pyxis: printing enroot log file:
slurmstepd: error: pyxis:     [INFO] Creating squashfs filesystem...
slurmstepd: error: pyxis:     Write failed because No space left on device
slurmstepd: error: pyxis:     FATAL ERROR: Failed to write to output filesystem
slurmstepd: error: pyxis: couldn't start container
slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1
slurmstepd: error: Failed to invoke spank plugin stack
srun: error: node-02: task 2: Exited with exit code 1
"""


def test_an_image_import_that_fills_the_nodes_runtime_path_is_the_nodes_container_plumbing(
        make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, _IMPORT_ENOSPC)
    assert v.root_cause is not None
    assert (v.attributed_domain, v.root_cause.category, v.root_cause.nodes) == ("infrastructure", "node.container",
                                                                                ["node-02"])
    assert [s.category for s in v.symptoms if s.category.startswith("container.")] == ["container.start_failed"]


def test_an_image_that_does_not_exist_is_the_jobs_set_up_under_the_spank_words(make_bundle: BundleMaker) -> None:
    # NVIDIA/enroot src/common.sh's registry answer (a tag that does not exist) under the same wrappers: the SPANK
    # stack's words are only that the step did not start
    text = _IMPORT_ENOSPC.replace(
        "slurmstepd: error: pyxis:     [INFO] Creating squashfs filesystem...\n"
        "slurmstepd: error: pyxis:     Write failed because No space left on device\n"
        "slurmstepd: error: pyxis:     FATAL ERROR: Failed to write to output filesystem\n",
        "slurmstepd: error: pyxis:     [ERROR] URL https://registry-1.docker.io/v2/vllm/vllm-openai/manifests/"
        "nightly-4663 returned error code: 404 Not Found\n")
    v = _analyze(make_bundle, text)
    assert v.root_cause is not None
    assert (v.root_cause.category, v.root_cause.nodes) == ("app.exception.setup", ["node-02"])


def test_pyxis_progress_lines_in_a_job_that_trained_are_nothing(make_bundle: BundleMaker) -> None:
    text = (_IMPORTING + "pyxis: imported docker image: nvcr.io#nvidia/pytorch:24.01-py3\n"
            "2026-11-02 10:06:00,000 INFO training finished\n")
    v = _analyze(make_bundle, text, state="COMPLETED")
    assert v.attributed_domain == "none"
    assert all(not s.category.startswith("container.") for s in v.symptoms)


def test_pyxis_progress_lines_before_another_failure_name_no_container(make_bundle: BundleMaker) -> None:
    # near miss: the import went well and the job then ran out of GPU memory: the OOM, not the container
    text = (_IMPORTING + "pyxis: imported docker image: nvcr.io#nvidia/pytorch:24.01-py3\n"
            "2026-11-02 10:06:00,000 ERROR step 6 failed\n"
            "Traceback (most recent call last):\n"
            '  File "/opt/train.py", line 88, in <module>\n'
            "    loss.backward()\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
            "79.10 GiB of which 1.10 GiB is free.\n")
    v = _analyze(make_bundle, text)
    assert v.root_cause is not None and v.root_cause.category == "app.cuda_oom"


def test_an_apptainer_warning_is_not_fatal(make_bundle: BundleMaker) -> None:
    text = ("2026-11-02 10:00:30,000 WARNING: Could not find any nv files on this host!\n"
            "INFO:    Converting SIF file to temporary sandbox...\n"
            "2026-11-02 10:06:00,000 INFO training finished\n")
    v = _analyze(make_bundle, text, state="COMPLETED")
    assert v.attributed_domain == "none"


def test_apptainer_without_loop_devices_is_the_nodes(make_bundle: BundleMaker) -> None:
    text = ("2026-11-02 10:05:00,000 FATAL:   container creation failed: mount /proc/self/fd/3->/var/lib/apptainer/mnt/"
            "session/rootfs error: while mounting image /proc/self/fd/3: failed to find loop device: could not attach "
            "image file to loop device: no loop devices available\n"
            "srun: error: node-02: task 2: Exited with exit code 255\n")
    v = _analyze(make_bundle, text)
    assert v.root_cause is not None
    assert (v.root_cause.category, v.root_cause.nodes) == ("node.container", ["node-02"])


def test_a_runtimes_word_with_a_digit_does_not_silence_lines_of_its_shape() -> None:
    # the application's reading remembers a "nothing" by the body with its digits zeroed (extract/exceptions.py); a
    # line that a container row took from the storage reading must not be remembered so: a line of the same shape
    # whose digit spells no row (a program of the job's own) is still the storage's, read after it
    from firstfault.collect.scan import Extraction, all_line_extractors

    ex = Extraction(all_line_extractors())
    owned = ("slurmstepd: error: pyxis:     enroot-aufs2ovlfs: failed to create opaque ovlfs whiteout: "
             "/scratch/x/1/usr/lib: No space left on device")
    other = owned.replace("aufs2ovlfs", "aufs3ovlfs")
    assert [e.kind for e in events([owned], extraction=ex)] == ["container.error"]
    assert [e.kind for e in events([other], extraction=ex)] == ["storage.error"]


# --- every format string of the three runtimes, read from their source (brief scan46) --------------------------------
# `format:` lines are the program's format string filled in by us (no posted line was at hand); the comment names the
# repository and file. NVIDIA/pyxis 0.24.0 (1075199), NVIDIA/enroot 8ea147d, apptainer/apptainer 917d665.


@pytest.mark.parametrize(
    ("line", "runtime", "error"),
    [
        # format: NVIDIA/pyxis args.c, the job's options srun refuses
        ("srun: error: pyxis: --container-image specified multiple times", "pyxis", "job"),
        ("srun: error: pyxis: --container-name: flag must be \"auto\", \"create\", \"exec\" or \"no_exec\"", "pyxis",
         "job"),
        ("srun: error: pyxis: both --container-writable and --container-readonly were specified", "pyxis", "job"),
        # format: NVIDIA/pyxis pyxis_slurmstepd.c, what the job asked of a named container, its --container-workdir
        ("slurmstepd: error: pyxis: error: a container with name \"train\" does not exist, and --container-image is "
         "not set", "pyxis", "job"),
        ("slurmstepd: error: pyxis: couldn't chdir to /workspace/run: No such file or directory", "pyxis", "job"),
        # ... and the container's own cwd, which enroot made: the node's (the longer row decides)
        ("slurmstepd: error: pyxis: couldn't chdir to container cwd /proc/4242/cwd: Permission denied", "pyxis",
         "node"),
        # format: NVIDIA/pyxis config.c and pyxis_slurmstepd.c: plugstack.conf, SPANK items, the step's set-up
        ("slurmstepd: error: pyxis: runtime_path: path too long: /run/pyxis/xxxx", "pyxis", "node"),
        ("slurmstepd: error: pyxis: couldn't get job uid: Invalid argument", "pyxis", "node"),
        ("slurmstepd: error: pyxis: couldn't join mount namespace: Operation not permitted", "pyxis", "node"),
        ("slurmstepd: error: pyxis: couldn't execute enroot command", "pyxis", "node"),
        # format: NVIDIA/pyxis importer.c, the importer's failure: its log follows
        ("slurmstepd: error: pyxis: importer /usr/local/bin/import.sh failed with exit code 1", "pyxis", "start"),
        # format: NVIDIA/enroot src/common.sh common::curl, the rest of its status table
        ("slurmstepd: error: pyxis:     [ERROR] URL https://proxy.example/v2/ returned error code: 407 Proxy "
         "Authentication Required", "enroot", "node"),
        ("slurmstepd: error: pyxis:     [ERROR] URL https://nvcr.io/v2/nvidia/pytorch/manifests/24.01-py3 returned "
         "error code: 408 Request Time-out", "enroot", "registry"),
        ("slurmstepd: error: pyxis:     [ERROR] URL https://nvcr.io/v2/ returned error code: 400 Bad Request",
         "enroot", "job"),
        # format: NVIDIA/enroot src/docker.sh, the registry's answers it could not read
        ("slurmstepd: error: pyxis:     [ERROR] Could not parse authentication realm from https://nvcr.io/v2/",
         "enroot", "registry"),
        # format: NVIDIA/enroot src/runtime.sh, conf/hooks: what the job named
        ("slurmstepd: error: pyxis:     [ERROR] Invalid argument: FOO", "enroot", "job"),
        ("slurmstepd: error: pyxis:     [ERROR] Unknown NVIDIA driver capability: video2", "enroot", "job"),
        ("slurmstepd: error: pyxis:     [ERROR] Unknown MELLANOX device id: 9", "enroot", "job"),
        # aws-samples/aws-parallelcluster-post-install-scripts#20 (tests/wild b33): plougher/squashfs-tools mksquashfs.c
        # under pyxis, its output under pyxis's runtime_path already there and not a squashfs (another node's)
        ("slurmstepd: error: pyxis:     Failed to read existing filesystem - will not overwrite - ABORTING!",
         "squashfs", "node"),
        # format: NVIDIA/enroot bin/*.c errx(3): an image's whiteout (the job's), the node's kernel
        ("slurmstepd: error: pyxis:     enroot-aufs2ovlfs: unsupported aufs whiteout: /run/enroot/x/1/.wh..wh.plnk",
         "enroot", "job"),
        ("slurmstepd: error: pyxis:     enroot-nsenter: kernel lacks support for ambient capabilities, consider using "
         "--remap-root instead", "enroot", "node"),
        # format: apptainer/apptainer internal/pkg/runtime/engine/apptainer/container_linux.go, process_linux.go and
        # launcher_linux.go under the starter's wrapper: what the job named
        ("FATAL:   container creation failed: mount /scratch/u/data->/data error: while mounting /scratch/u/data: "
         "mount source /scratch/u/data doesn't exist", "apptainer", "job"),
        ("FATAL:   could not open image /home/u/train.sif: failed to retrieve path for /home/u/train.sif: lstat "
         "/home/u/train.sif: no such file or directory", "apptainer", "job"),
        ("FATAL:   exec python3 failed: a shared library is likely missing in the image", "apptainer", "job"),
        ("FATAL:   image targets 'arm64', cannot run on 'amd64'", "apptainer", "job"),
        ("FATAL:   Image file already exists: \"pytorch_24.01.sif\" - will not overwrite", "apptainer", "job"),
        # format: the same: the node's apptainer.conf, its kernel, its fakeroot
        ("FATAL:   container creation failed: configuration disallows users from running sandbox containers",
         "apptainer", "node"),
        ("FATAL:   container creation failed: --writable-tmpfs requires 'enable overlay', but set to 'no' by "
         "administrator", "apptainer", "node"),
        ("FATAL:   container creation failed: mount /etc/localtime->/etc/localtime error: destination /etc/localtime "
         "doesn't exist in container", "apptainer", "node"),
        ("FATAL:   --fakeroot requires either being in /etc/subuid, unprivileged user namespaces, or the fakeroot "
         "command", "apptainer", "node"),
        # format: sylabs/singularity prepare_linux.go, its own words for the same refusal
        ("FATAL:   container creation failed: --writable-tmpfs requires 'enable overlay = yes': set to 'no' by "
         "administrator", "apptainer", "node"),
        ("FATAL:   container creation failed: unpacking image to temporary sandbox dir required, but is prohibited by "
         "'tmp sandbox = no' in singularity.conf or --no-tmp-sandbox command-line flag", "apptainer", "node"),
        # format: apptainer/apptainer cmd/internal/cli/pull.go: the pull's wrapper, the reason after it
        ("FATAL:   While pulling image from oci registry: error fetching image to cache", "apptainer", "start"),
    ],
)
def test_every_format_string_reads_by_what_its_code_does(line: str, runtime: str, error: str) -> None:
    assert holds_literal(EX, line)
    (d,) = scan(EX, [line], source="application")
    assert_fields(d, {"runtime": runtime, "error": error})


@pytest.mark.parametrize(
    "line",
    [
        # format: NVIDIA/pyxis args.c: a warning; the step goes on without a container
        "srun: error: pyxis: ignoring --container-mounts because neither --container-image nor --container-name is set",
        # format: NVIDIA/pyxis pyxis_slurmd.c: the epilog's cleanup after the job, which names no cause of its end
        "slurmd: error: pyxis: epilog: couldn't get job uid: Invalid argument",
        # format: NVIDIA/pyxis common.c: the job cancelled, pyxis passing the signal on
        "slurmstepd: error: pyxis: received SIGTERM, forwarding to child 4242",
        # format: NVIDIA/enroot src/runtime.sh create/load under pyxis: the file is pyxis's own squashfs under its
        # runtime_path as often as an image the job named, and the words do not say which (b33's ParallelCluster
        # thread: the runtime path shared by two nodes)
        "slurmstepd: error: pyxis:     [ERROR] No such file or directory: /fsx/pyxis/1000/385.0.squashfs",
        "slurmstepd: error: pyxis:     [ERROR] Invalid image format: /lustre/u/images/train.tar",
        # mksquashfs refusing to append to a file that is not squashfs, outside pyxis (a user's own mksquashfs run)
        "Failed to read existing filesystem - will not overwrite - ABORTING!",
        # enroot's words with no container's words before them: any program's
        "[ERROR] No such file or directory: /scratch/u/in.csv",
        "[ERROR] Invalid argument: --epochs",
        "[ERROR] Could not change directory: /scratch/u",
        # Apptainer's warnings (container_linux.go sylog.Warningf; fs/files/passwd.go, logged): the container starts
        "WARNING: Skipping mount /etc/localtime [binds]: /etc/localtime doesn't exist in container",
        "WARNING: passwd file doesn't exist in container, not updating",
        # the same fixed words in a program's own log: no container's words before them
        "mount source /scratch/u/data doesn't exist, skipping",
        "ERROR could not open image /data/cat.png: cannot identify image file",
    ],
)
def test_warnings_cleanup_and_bare_words_of_the_three_runtimes_are_no_errors(line: str) -> None:
    assert scan(EX, [line], source="application") == []


def test_a_named_container_the_job_lacks_is_its_set_up(make_bundle: BundleMaker) -> None:
    # format: NVIDIA/pyxis pyxis_slurmstepd.c, then the SPANK stack's words and srun's report
    text = ("2026-11-02 10:05:00,000 slurmstepd: error: pyxis: couldn't chdir to /workspace/run: No such file or "
            "directory\n"
            "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1\n"
            "slurmstepd: error: Failed to invoke spank plugin stack\n"
            "srun: error: node-02: task 2: Exited with exit code 1\n")
    v = _analyze(make_bundle, text)
    assert v.root_cause is not None
    assert (v.root_cause.category, v.root_cause.nodes) == ("app.exception.setup", ["node-02"])


def test_apptainer_conf_that_disallows_the_image_is_the_nodes(make_bundle: BundleMaker) -> None:
    # format: apptainer/apptainer prepare_linux.go under the starter's wrapper
    text = ("2026-11-02 10:05:00,000 FATAL:   container creation failed: configuration disallows users from running "
            "sandbox containers\n"
            "srun: error: node-02: task 2: Exited with exit code 255\n")
    v = _analyze(make_bundle, text)
    assert v.root_cause is not None
    assert (v.attributed_domain, v.root_cause.category, v.root_cause.nodes) == ("infrastructure", "node.container",
                                                                                ["node-02"])


def test_an_apptainer_bind_source_that_is_not_there_is_the_jobs(make_bundle: BundleMaker) -> None:
    # format: apptainer/apptainer container_linux.go (`mount source %s doesn't exist`) under the starter's wrapper
    text = ("2026-11-02 10:05:00,000 FATAL:   container creation failed: mount /scratch/u/data->/data error: while "
            "mounting /scratch/u/data: mount source /scratch/u/data doesn't exist\n"
            "srun: error: node-02: task 2: Exited with exit code 255\n")
    v = _analyze(make_bundle, text)
    assert v.root_cause is not None
    assert (v.root_cause.category, v.root_cause.nodes) == ("app.exception.setup", ["node-02"])


def test_apptainer_skipping_a_bind_in_a_job_that_trained_is_nothing(make_bundle: BundleMaker) -> None:
    # near miss: the warning's words hold the node row's text without a container's error before it
    text = ("2026-11-02 10:00:30,000 WARNING: Skipping mount /etc/localtime [binds]: /etc/localtime doesn't exist in "
            "container\n"
            "2026-11-02 10:06:00,000 INFO training finished\n")
    v = _analyze(make_bundle, text, state="COMPLETED")
    assert v.attributed_domain == "none"
    assert all(not s.category.startswith("container.") for s in v.symptoms)


def test_an_enroot_registry_answer_it_cannot_read_is_the_registrys(make_bundle: BundleMaker) -> None:
    # format: NVIDIA/enroot src/docker.sh under pyxis's wrappers: the platform's registry (weak), not the job
    text = ("2026-11-02 10:05:00,000 slurmstepd: error: pyxis: child 4242 failed with error code: 1\n"
            "slurmstepd: error: pyxis: failed to import docker image\n"
            "slurmstepd: error: pyxis: printing enroot log file:\n"
            "slurmstepd: error: pyxis:     [ERROR] Could not parse authentication realm from https://nvcr.io/v2/\n"
            "slurmstepd: error: Failed to invoke spank plugin stack\n"
            "srun: error: node-02: task 2: Exited with exit code 1\n")
    v = _analyze(make_bundle, text)
    assert v.root_cause is not None
    assert (v.root_cause.category, v.root_cause.nodes) == ("node.container.registry", ["node-02"])


def test_enroots_helper_naming_itself_at_the_lines_start_is_no_host_tag() -> None:
    # SemiAnalysisAI/InferenceX#1477: `enroot import` on one node; the helper's err(3) report (NVIDIA/enroot
    # bin/enroot-aufs2ovlfs.c) begins the line with its own name, which holds a digit as a host name would
    line = "enroot-aufs2ovlfs: failed to set capabilities: Operation not permitted"
    [ev] = [e for e in events([line], "application") if e.kind == "container.error"]
    assert (ev.fields["runtime"], ev.fields["error"], ev.node) == ("enroot", "node", None)


def test_near_miss_a_pdsh_tag_before_the_helper_still_names_the_host() -> None:
    # ours: the same line relayed by pdsh from a node (`host: line`): the host is still the tag's
    from firstfault.extract.prefix import split_prefixes
    got = split_prefixes("gpu-node-12: enroot-aufs2ovlfs: failed to set capabilities: Operation not permitted")
    assert got.host == "gpu-node-12" and got.body.startswith("enroot-aufs2ovlfs: failed to")


# --- Shifter, Charliecloud, Singularity 2.x and the runtimes' own level tags (brief ctr98) ---------------------------
# NERSC/shifter 84b7d34, hpc/charliecloud 23de6ee, apptainer/apptainer 917d665 (and 3da34fe^, Singularity 2.x's C),
# nextflow-io/nextflow SingularityCache.groovy.


@pytest.mark.parametrize(
    ("line", "runtime", "error"),
    [
        # NERSC/shifter#241 (verbatim): shifter_core.c loopMount's stat("/dev/loop0") failed, its message glued to the
        # caller's wrapper (no newline after it): the node's
        ("ERROR: no apparent support for loop devices!FAILED to loop mount image: /images/f33084b4b6032f9c77744a16517"
         "4368fa4aed696ac301bfe504fa5533121690f.squashfs", "shifter", "node"),
        # format: NERSC/shifter src/shifter_core.c loopMount, the kernel without the image's file system
        ("ERROR: no apparent support for squashfs!", "shifter", "node"),
        # NERSC/shifter#265 (verbatim): a -V destination the image lacks, where Shifter makes no mount point
        ('FAILED to create volume "to": /var/udiMount//cromwell-executions/runblastplus_sub/7dbb416c-c861-403b-8f5d-'
         'd83163751a57/call-shard, cannot create mount points in that location', "shifter", "job"),
        # format: NERSC/shifter src/shifter_core.c, a -V source that is not there
        ('FAILED to find volume "from": /global/cscratch1/u/missing', "shifter", "job"),
        # NERSC/shifter#241 / #265 (verbatim): the wrappers after the reason
        ("FAILED to mount image on loop device.", "shifter", "start"),
        ("FAILED to setup user-requested mounts.", "shifter", "start"),
        ("FAILED to setup image.", "shifter", "start"),
        # hpc/charliecloud#133 (verbatim, ch-run's older tag without the pid): unshare(CLONE_NEWUSER) refused
        ("ch-run: can't init user+mount namespaces: Operation not permitted (ch-run.c:519 1)", "charliecloud",
         "node"),
        # format: hpc/charliecloud bin/ch_core.c bind_mount, a --bind the job named
        ("ch-run[4242]: error: can't bind: destination not found: /var/tmp/img/data (ch_core.c:238)", "charliecloud",
         "job"),
        ("ch-run[4242]: error: can't bind: source not found: /scratch/u/in (ch_core.c:231)", "charliecloud", "job"),
        # biocorecrg/master_of_pores#6 (verbatim): Singularity 2.x's bind.c, its loop device (EAGAIN)
        ("ERROR  : Failed to set loop flags on loop device: Resource temporarily unavailable", "apptainer", "node"),
        # format: Singularity 2.x core/lib/image/bind.c (apptainer 3da34fe^), the node's loop devices used up
        ("ERROR  : No more available loop devices, try increasing 'max loop devices' in singularity.conf",
         "apptainer", "node"),
        # sylabs/singularity#5274 (verbatim): Apptainer's sylog FATAL tag, no row's words, a storage errno at the end:
        # the runtime's own read of the image's rootfs (process_linux.go `failed to open %s for inspection`)
        ("FATAL:   failed to open /bin/sh for inspection: read /bin/sh: stale NFS file handle", "apptainer", "node"),
        # format: apptainer/apptainer cmd/starter/c/message.c's tag with an errno of a write of its own
        ("ERROR  : Failed to write session file /var/lib/apptainer/mnt/session/x: No space left on device",
         "apptainer", "node"),
        # the runtime's stderr as Nextflow quotes it, indented under `message:` (nextflow SingularityCache.groovy)
        ("      FATAL:   While making image from oci registry: error fetching image to cache: write "
         "/home/u/.apptainer/cache/blob/x: disk quota exceeded", "apptainer", "node"),
        # nextflow-io/nextflow#4823 (verbatim): Nextflow's own wrapper around the pull
        ("Failed to pull singularity image", "nextflow", "start"),
    ],
)
def test_shifter_charliecloud_and_singularity_words_read_by_what_their_code_does(line: str, runtime: str,
                                                                                 error: str) -> None:
    assert holds_literal(EX, line)
    (d,) = scan(EX, [line], source="application")
    assert_fields(d, {"runtime": runtime, "error": error})


@pytest.mark.parametrize(
    "line",
    [
        # a tag as a person retyped it or another program prints it (PostgreSQL's `FATAL:  `, two spaces; Flux's
        # `FATAL: `): no runtime's, so the storage errno after it stays the storage's (below)
        "FATAL: failed to open /scratch/u/in.h5: stale NFS file handle",
        "FATAL:  could not write to file \"pg_wal/xlogtemp.123\": No space left on device",
        # the runtime's tag with no errno and no row's words: nothing is said of the node (a bad argument, an image
        # the job named wrongly)
        "FATAL:   Unable to handle docker://nope/x:latest uri: failed to get checksum",
        "ERROR  : Unknown option --foo",
        # Shifter's wrappers' words in another program's own sentence, and Charliecloud's with another verb
        "could not setup image. retrying",
        "ch-run[4242]: warning: can't bind-mount /etc/hosts, skipping",
    ],
)
def test_near_misses_of_the_runtimes_tags_and_wrappers_are_no_container_errors(line: str) -> None:
    assert scan(EX, [line], source="application") == []


def test_a_storage_errno_under_the_runtimes_own_tag_is_no_storage_error() -> None:
    line = "FATAL:   failed to open /bin/sh for inspection: read /bin/sh: stale NFS file handle"
    assert container_owns(line)
    assert [(e.kind, e.fields.get("error")) for e in events([line])] == [("container.error", "node")]
    # near miss: the same words without the runtime's tag (one space: no sylog prefix) are no container's (the last
    # resort of a failed attempt reads them as the file system's: traceback.words_cause)
    other = "FATAL: failed to open /scratch/u/in.h5: stale NFS file handle"
    assert not container_owns(other)
    assert not [e for e in events([other]) if e.kind == "container.error"]
    cause = tb.words_cause(other)
    assert cause is not None and cause.kind == "storage.error"


# nextflow-io/nextflow#4823 (verbatim, cut): the pull that Nextflow killed at its pullTimeout
_PULL_143 = [
    "Caused by:",
    " Failed to pull singularity image",
    " command: singularity pull  --name ghcr.io-x-latest.img.pulling.1710721200833 docker://ghcr.io/x:latest > "
    "/dev/null",
    " status : 143",
    " message:",
    "   INFO:    Converting OCI blobs to SIF format",
]


def test_a_pull_nextflow_killed_at_its_own_timeout_is_the_jobs_set_up() -> None:
    got = [(e.kind, e.fields.get("runtime"), e.fields.get("error")) for e in events(_PULL_143)]
    assert ("container.error", "nextflow", "job") in got
    assert ("container.error", "nextflow", "start") in got


@pytest.mark.parametrize("lines", [
    # another status is the runtime's own failure, whose lines under `message:` say why (a quoted paste, nf-core's
    # troubleshooting page: mksquashfs missing, read by its own row)
    [*_PULL_143[:3], " status : 255", " message:"],
    # a status line with no wrapper before it (another program's), and one too far below the wrapper
    ["status : 143"],
    [*_PULL_143[:3], *(f"line {i}" for i in range(4)), " status : 143"],
])
def test_near_miss_a_pull_status_that_is_not_nextflows_kill(lines: list[str]) -> None:
    got = [(e.kind, e.fields.get("error")) for e in events(lines)]
    assert ("container.error", "job") not in got


def test_shifter_without_a_loop_device_is_the_nodes(make_bundle: BundleMaker) -> None:
    # NERSC/shifter#241's three lines, stamped, on node-02's rank log
    text = ("2026-11-02 10:05:00,000 ERROR: no apparent support for loop devices!FAILED to loop mount image: "
            "/images/f3.squashfs\n"
            "FAILED to mount image on loop device.\n"
            "FAILED to setup image.\n"
            "srun: error: node-02: task 2: Exited with exit code 1\n")
    v = _analyze(make_bundle, text)
    assert v.root_cause is not None
    assert (v.root_cause.category, v.root_cause.nodes) == ("node.container", ["node-02"])


def test_a_shifter_volume_the_image_lacks_is_the_jobs(make_bundle: BundleMaker) -> None:
    text = ('2026-11-02 10:05:00,000 FAILED to create volume "to": /var/udiMount//out/call-shard, cannot create '
            'mount points in that location\n'
            "FAILED to setup user-requested mounts.\n"
            "FAILED to setup image.\n"
            "srun: error: node-02: task 2: Exited with exit code 1\n")
    v = _analyze(make_bundle, text)
    assert v.root_cause is not None
    assert (v.attributed_domain, v.root_cause.category) == ("software", "app.exception.setup")
