"""ENODEV on mmap: a mount under a model or data cache that cannot map its files (a FUSE or union mount without page
caching: trapexit/mergerfs mkdocs/docs/known_issues_bugs.md, "Software using mmap") is the node's storage plumbing;
the same errno from any other call is a device's and names no storage (catalog/exceptions.yaml `errnos` `calls`).

The tracebacks are ours: PyTorch's MapAllocator message (`unable to mmap %d bytes from file <%s>: %s (%d)`,
aten/src/ATen/MapAllocator.cpp) and numpy's memmap (numpy/core/memmap.py `__new__`, which calls mmap.mmap), filled
in with ENODEV."""

from __future__ import annotations

import copy

from firstfault.analysis.analyze import Analyzer
from firstfault.extract.codes import storage_errnos, storage_strerror_texts
from firstfault.model import Verdict
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract.helpers import events

_TORCH = ["Traceback (most recent call last):",
          '  File "/opt/train.py", line 40, in load',
          "    sd = torch.load(path, mmap=True)",
          '  File "/usr/lib/python3/dist-packages/torch/serialization.py", line 1025, in load',
          "    return _load(opened_zipfile, map_location, pickle_module, **pickle_load_args)",
          "RuntimeError: unable to mmap 5000 bytes from file </mnt/pool/models/model.bin>: No such device (19)"]
_NUMPY = ["Traceback (most recent call last):",
          '  File "/opt/train.py", line 40, in load',
          '    arr = np.memmap(path, dtype=np.uint16, mode="r")',
          '  File "/usr/lib/python3/dist-packages/numpy/core/memmap.py", line 267, in __new__',
          "    mm = mmap.mmap(fid.fileno(), bytes, access=acc, offset=start)",
          "OSError: [Errno 19] No such device"]
_DEVICE = ["Traceback (most recent call last):",
           '  File "/opt/train.py", line 40, in open_dev',
           '    fd = os.open("/dev/infiniband/uverbs0", os.O_RDWR)',
           "OSError: [Errno 19] No such device: '/dev/infiniband/uverbs0'"]


def _kinds(lines: list[str]) -> list[tuple[str, str | None]]:
    return [(e.kind, str(e.fields.get("errno"))) for e in events(lines) if e.kind in ("storage.error", "app.exception")]


def test_enodev_on_mmap_is_the_mounts() -> None:
    assert _kinds(_TORCH) == [("storage.error", "ENODEV")]
    assert _kinds(_NUMPY) == [("storage.error", "ENODEV")]


def test_enodev_on_another_call_is_no_storage() -> None:
    # near miss: a device the job opened that the node does not have: the errno names no file system
    assert _kinds(_DEVICE) == [("app.exception", "ENODEV")]
    # and a program's own line ending in the same strerror is no storage's (ENODEV is not among the errnos that are
    # the storage's on any call, whose strerror texts the line readers look for)
    assert "ENODEV" not in storage_errnos()
    assert "No such device" not in storage_strerror_texts()
    assert [e.kind for e in events(["ibv_open_device failed: mlx5_3: No such device"])
            if e.kind == "storage.error"] == []


def _analyze(make_bundle: BundleMaker, lines: list[str]) -> Verdict:
    wl = copy.deepcopy(WORKLOAD)
    steps = "".join(f"2026-11-02 10:0{m}:00,000 INFO step {m}\n" for m in range(5))
    files = {f"app/rank-{r}.log": steps for r in range(6)}
    files["app/rank-2.log"] = steps + "2026-11-02 10:05:00,000 ERROR loading\n" + "\n".join(lines) + "\n"
    return Analyzer().analyze_path(str(make_bundle(files, wl)))


def test_a_model_load_that_cannot_mmap_is_the_storage(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, _TORCH)
    assert v.root_cause is not None
    assert (v.attributed_domain, v.root_cause.category, v.root_cause.nodes) == ("storage", "storage.filesystem",
                                                                                ["node-02"])


def test_a_missing_device_stays_the_workloads(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, _DEVICE)
    assert v.root_cause is not None and v.root_cause.category.startswith("app.exception")
