"""A node that stopped answering, in the words of the controllers the other readers did not know: HPE PALS's ping of
its node daemons and Ray's death cause of an actor whose node died (catalog/scheduler.yaml, read by extract/jobend.py
through extract/reasons.py), with the node each binds the verdict to and the lines that look alike and are not it."""

from __future__ import annotations

import copy

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.extract import jobend, reasons
from firstfault.extract.base import Draft, LineExtractor
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract import helpers

ALL: tuple[LineExtractor, ...] = (*jobend.EXTRACTORS, *helpers.APPLICATION)


def read(lines: list[str]) -> list[Draft]:
    return helpers.scan(ALL, lines, "application")


def lost(lines: list[str]) -> list[str | None]:
    """The hosts the lines say were lost (process.signal due_to node_failure)."""
    return [d.host for d in read(lines) if d.kind == "process.signal" and d.fields.get("due_to") == "node_failure"]


# ---------------------------------------------------------------- HPE PALS

# ALCF's Aurora user guide (argonne-lcf/user-guides, docs/aurora, "Ping Failures" and "Submitting Jobs") quotes these
# four; CGNS/CGNS#753 posts the first form, saforem2/ezpz#244 the launch RPC's.
@pytest.mark.parametrize(("line", "host"), [
    ("ping failed on x4304c1s6b0n0: No reply from x4307c2s6b0n0.hostmgmt2307.cm.aurora.alcf.anl.gov after 87s",
     "x4307c2s6b0n0.hostmgmt2307.cm.aurora.alcf.anl.gov"),
    ("ping failed on x4707c6s4b0n0: Couldn't forward RPC ping(24c93b8c-3434-4fb5-a8f0-53cff4cbbe42) to child "
     "x4707c7s6b0n0.hostmgmt2707.cm.aurora.alcf.anl.gov: Resource temporarily unavailable",
     "x4707c7s6b0n0.hostmgmt2707.cm.aurora.alcf.anl.gov"),
    ("launch failed on x4201c0s4b0n0: Couldn't forward RPC launch(...) to child "
     "x4513c0s7b0n0.hsn.cm.aurora.alcf.anl.gov: Resource temporarily unavailable",
     "x4513c0s7b0n0.hsn.cm.aurora.alcf.anl.gov"),
    ("ping RPC timeout from x4212c7s0b0n0.hostmgmt2212.cm.aurora.alcf.anl.gov after 120s",
     "x4212c7s0b0n0.hostmgmt2212.cm.aurora.alcf.anl.gov"),
    ("ping failed on x4616c0s4b0n0: Application 047a3c9f-fb41-4595-a2ad-4a4d0ec1b6c1 not found", "x4616c0s4b0n0"),
])
def test_pals_names_the_node_that_did_not_answer_never_the_parent(line: str, host: str) -> None:
    assert lost([line]) == [host]


@pytest.mark.parametrize("line", [
    # the same guide: PALS's own set-up failing on a node, fixed by `mpiexec --no-vni`
    "start failed on x4102c5s2b0n0: No VNIs available in internal allocator",
    # the words without PALS's: any program's
    "No reply from server after 5s",
    "ping failed: No reply from 10.0.0.2 after 3s",
    "Couldn't forward RPC to the server: Resource temporarily unavailable",
])
def test_near_miss_no_pals_ping_names_no_node_lost(line: str) -> None:
    assert lost([line]) == []


def test_a_placeholder_for_another_host_or_a_word_is_matched_and_not_kept() -> None:
    [hit] = reasons.text_reasons("ping failed on x1: No reply from x2 after 9s", lines=True)
    assert (hit.scheduler, hit.reason, hit.host) == ("pals", "node_failure", "x2")
    # `{word}` is one run of non-blank characters: an RPC whose argument holds a blank is not the phrase
    assert reasons.text_reasons("ping failed on x1: Couldn't forward RPC ping (a b) to child x2: EAGAIN",
                                lines=True) == []
    # every fixed piece is a prefilter literal's, never a placeholder
    assert not any("{" in w for w in reasons.line_literals())


# ---------------------------------------------------------------- Ray: an actor whose node died

# ray-project/ray#43751: RayActorError's fields (python/ray/exceptions.py), then the GCS's death cause of Ray before
# NodeDeathInfo (src/ray/gcs/gcs_server/gcs_actor_manager.cc GenNodeDiedCause)
BLOCK = ["ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.",
         "\tclass_name: RayTrainWorker",
         "\tactor_id: 4473bb2424de8ebfec88acc402000000",
         "\tpid: 6420",
         "\tnamespace: c53c8492-c985-4b6e-9247-fdf5ea623abd",
         "\tip: {ip}"]
OLD = "The actor is dead because its node has died. Node Id: 677df2a9020c5db45e755b0078c469e2ce51e05ea093ed3b283505a0"
# Ray since NodeDeathInfo: the same cause's first line, then its reason (gcs_actor_manager.cc; the words of
# python/ray/tests test_abnormal_termination and test_drain_node)
NEW = "The actor died because its node has died. Node Id: 56b97436e67393f15565e024278867700c2bd0ec6ca9e0dac7261fd1"
HEALTH = "\tthe actor's node was terminated unexpectedly: health check failed due to missing too many heartbeats"
SIGTERM = "\tthe actor's node was terminated expectedly: received SIGTERM"


def block(ip: str) -> list[str]:
    return [ln.format(ip=ip) for ln in BLOCK]


def test_an_actor_whose_node_died_is_that_node_lost_on_its_ip() -> None:
    assert lost([*block("10.72.56.3"), OLD]) == ["10.72.56.3"]
    # a paste that made the field's tab into spaces
    assert lost([ln.replace("\t", "        ") for ln in [*block("10.72.56.3"), OLD]]) == ["10.72.56.3"]
    # a log that flattened the block onto one line (the corpus's xinference thread's form)
    assert lost(["ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task. "
                 "class_name: RayWorker actor_id: 8d1c pid: 311 ip: 172.27.0.4 " + OLD]) == ["172.27.0.4"]


def test_the_newer_cause_says_which_on_its_second_line() -> None:
    assert lost([*block("10.0.0.2"), NEW, HEALTH]) == ["10.0.0.2"]
    assert lost([*block("10.0.0.2"), NEW, SIGTERM]) == []  # a node stopped on purpose
    assert lost([*block("10.0.0.2"), NEW]) == []  # the first line alone says no reason


@pytest.mark.parametrize("lines", [
    # Ray's id alone: no node named, no cause (as the id-only `marked dead` wordings)
    [OLD],
    # the field too far above to be this error's
    [*block("10.72.56.3"), *(["step 10 loss 1.0"] * 5), OLD],
    # an address that names no node
    [*block("0.0.0.0"), OLD],
    # the actor's worker process died, not its node (the corpus's verl threads)
    [*block("10.166.157.101"), "The actor is dead because its worker process has died. Worker exit type: "
     "SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file."],
    # every pod's default tolerations name the unreachable node's taint (`kubectl describe pod`)
    ["Tolerations:                 node.kubernetes.io/not-ready:NoExecute op=Exists for 300s",
     "                             node.kubernetes.io/unreachable:NoExecute op=Exists for 300s"],
])
def test_near_miss_no_node_lost(lines: list[str]) -> None:
    assert lost(lines) == []


# ---------------------------------------------------------------- through the engine: the node named, not the printer

def _bundle(make_bundle: BundleMaker, driver: list[str]) -> Analyzer:
    wl = copy.deepcopy(WORKLOAD)
    wl["workload"]["nodes"] = ["x4304c1s6b0n0", "x4307c2s6b0n0", "x4307c2s7b0n0"]
    wl["workload"]["ranks"] = {"x4304c1s6b0n0": "0-1", "x4307c2s6b0n0": "2-3", "x4307c2s7b0n0": "4-5"}
    files = {f"app/rank-{r}.log": "step 100 loss 1.234\n" for r in range(1, 6)}
    files["app/rank-0.log"] = "\n".join(driver) + "\n"  # the launcher's output, on the first node
    return make_bundle(files, wl)


def test_pals_binds_the_verdict_to_the_child_in_the_allocations_spelling(make_bundle: BundleMaker) -> None:
    line = "ping failed on x4304c1s6b0n0: No reply from x4307c2s6b0n0.hostmgmt2307.cm.aurora.alcf.anl.gov after 87s"
    v = Analyzer().analyze_path(str(_bundle(make_bundle, [line])))
    assert v.root_cause is not None and v.root_cause.category == "node.unreachable"
    assert v.root_cause.nodes == ["x4307c2s6b0n0"]  # the child, by its short name; not the reporting parent
