"""Classes batches b170, b171 and b173 showed unread (RDMA NICs, image/video generation, LLM RL post-training), each
tested on lines of other threads or of the printing program's source, with the look-alikes that must not match.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.model import Event
from tests.conftest import BundleMaker
from tests.extract import helpers


def feed(lines: list[str]) -> list[Event]:
    return helpers.events(lines)


def _verdict(make_bundle: BundleMaker, log: str) -> tuple[str | None, str | None]:
    wl = {"apiVersion": "firstfault/v1", "workload": {"id": "t", "scheduler": "static"},
          "sources": [{"kind": "application", "path": "app/run.log"}]}
    v = Analyzer().analyze_path(str(make_bundle({"app/run.log": log}, wl)))
    return v.attributed_domain, v.root_cause.category if v.root_cause else None


# ---------------------------------------------------------------- ps-lite's van that could not bind
# dmlc/ps-lite src/van.cc Van::Start, `CHECK_NE(my_node_.port, -1) << "bind failed"` (BytePS, MXNet's KVStore and
# StepMesh keep it): the address, interface, RDMA NIC or port the job gave the van is not this node's to bind.


@pytest.mark.parametrize(
    "line",
    [
        # dmlc-core's CHECK_NE (a BytePS server log's form)
        "[09:12:01] src/van.cc:357: Check failed: (my_node_.port) != (-1) bind failed",
        # glog's CHECK_NE, as the forks that build with glog print it
        "F0101 10:00:00.000000  1234 van.cc:94] Check failed: my_node_.port != -1 (-1 vs. -1) bind failed",
    ],
)
def test_pslite_van_bind_failed_is_the_jobs_set_up(line: str) -> None:
    setup = [e for e in feed([line]) if e.fields.get("setup")]
    assert [(e.fields.get("stack"), e.fields.get("local_status")) for e in setup] == [("pslite", "van_bind_failed")]


@pytest.mark.parametrize(
    "line",
    [
        # the van's other checks: an id the scheduler did not give, a message it could not send (no bind)
        "[09:12:01] src/van.cc:470: Check failed: (my_node_.id) != (Node::kEmpty)",
        # OpenSM's own bind of its MAD controller (catalog/transport.yaml fabric_daemon_messages: the fabric's)
        "Mar 03 10:00:00 sm1 OpenSM[1234]: ERR 2E10: SM MAD Controller bind failed (IB_ERROR)",
    ],
)
def test_pslite_van_bind_near_misses(line: str) -> None:
    assert not [e for e in feed([line]) if e.fields.get("stack") == "pslite"]


def test_pslite_van_bind_failed_verdict(make_bundle: BundleMaker) -> None:
    log = ("kill all testing process of ps lite for user\n"
           "[09:28:39] scheduler /w/StepMesh/include/dmlc/logging.h:301: [09:28:39] /w/StepMesh/src/van.cc:601: "
           "Check failed: (my_node_.port) != (-1) bind failed\n")
    assert _verdict(make_bundle, log) == ("software", "app.exception.setup")


# ---------------------------------------------------------------- Ray's worker process dead at start-up
# ray-project/ray src/ray/raylet/worker_pool.cc MonitorStartingWorkerProcess: the raylet's ERROR for a worker process
# that died before any of its workers registered is the job's set-up (the env it gives its workers); the same line's
# `still alive ... hanging during start` ending is no failure.

_RAY_DEAD = ("[2024-03-02 11:20:15,101 E 3310 3310] (raylet) worker_pool.cc:589: Some workers of the worker "
             "process(4521) have not registered within the timeout. The process is dead, probably it crashed during "
             "start.")


def test_ray_worker_dead_at_start_is_set_up() -> None:
    got = [e for e in feed([_RAY_DEAD]) if e.kind == "app.exception"]
    assert len(got) == 1 and got[0].fields.get("setup") is True


@pytest.mark.parametrize(
    "line",
    [
        # a worker still building its env or importing (a uv venv rebuilt per worker, a slow file system)
        "[2024-03-02 11:20:15,101 E 3310 3310] (raylet) worker_pool.cc:589: Some workers of the worker process(4521) "
        "have not registered within the timeout. The process is still alive, probably it's hanging during start.",
        # a note that quotes the line's start only
        "worker_pool.cc: Some workers have not registered within the timeout",
    ],
)
def test_ray_worker_start_near_misses(line: str) -> None:
    assert not [e for e in feed([line]) if e.kind == "app.exception"]


def test_ray_worker_dead_at_start_verdict(make_bundle: BundleMaker) -> None:
    assert _verdict(make_bundle, _RAY_DEAD + "\n" + _RAY_DEAD.replace("4521", "4522") + "\n") == (
        "software", "app.exception.setup")


# ---------------------------------------------------------------- ATen's shape checks on a line of their own
# pytorch/pytorch aten/src/ATen TORCH_CHECK messages about the shapes a tensor op was given, which a server logs
# without the RuntimeError around them: the program's own exception.


@pytest.mark.parametrize(
    "line",
    [
        # SGLang's weight-update handler's log of narrow()'s check (THUDM/slime#2280's form, other numbers)
        "Failed to update parameter online: start (128) + length (128) exceeds dimension size (128)..",
        # ComfyUI's execution error (a ControlNet of another base model), the message only
        "ComfyUI execution error: mat1 and mat2 shapes cannot be multiplied (308x2048 and 768x320)",
        # broadcasting and view(), the messages alone
        "The size of tensor a (512) must match the size of tensor b (256) at non-singleton dimension 3",
        "shape '[-1, 4]' is invalid for input of size 10",
    ],
)
def test_aten_shape_check_alone_is_the_programs(line: str) -> None:
    assert [e.kind for e in feed([line])] == ["app.exception"]


@pytest.mark.parametrize(
    "line",
    [
        # prose and code comments naming the check without its numbers
        "# raises when mat1 and mat2 shapes cannot be multiplied",
        "the slice start + length exceeds dimension size of the weight",
        "note: shape is invalid for input of size mismatch, see docs",
    ],
)
def test_aten_shape_check_near_misses(line: str) -> None:
    assert not [e for e in feed([line]) if e.kind == "app.exception"]
