"""What makes a line error-looking, where no rule reads it (extract/unrecognized.py): a run whose end is not shown
and whose evidence holds such a line is `unknown` (it failed), else `none` (docs/verdict.md, "A run whose end is not
shown").

A logger's one-letter level header at an error letter makes its record error-looking whatever its words, and so does
a form only a program's error reports print (bash's prolog) (catalog/exceptions.yaml `level_headers`,
extract/unrecognized.py `error_header`): a run whose end is not shown and whose only such record no rule reads is
`unknown`, not `none`. A record of the same form at a letter below error, a record its program demoted (the row's
`benign`), and a line that holds the header's word and no header stay out of the offer.

Lines: jax-ml/jax#22740 (XLA's rendezvous on host0), vllm-project/vllm#721 (the raylet's file-system monitor),
ray-project/ray#24969 (the GCS's heartbeat manager), ModalMinds/MM-EUREKA#54 (Ray's GCS client at W), jax-ml/jax#26466
(XLA's delay kernel, demoted by openxla/xla#47191), NVIDIA/deepops#1315 (bash's error prolog in a Slurm epilog's
log); the I record (#22740's at the info letter, shortened) and the near misses without a header are ours. Further
down, `failure` as a noun.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.catalog.tables import CatalogTableError, LevelHeaderInfo, level_header_table
from firstfault.extract.unrecognized import ErrorWords, error_header
from tests.conftest import BundleMaker

_WORKLOAD = {
    "apiVersion": "firstfault/v1",
    "workload": {"id": "lh", "scheduler": "static"},  # no terminal state: the run's end is not shown
    "sources": [{"kind": "application", "path": "app/run.log"}],
}

XLA_STUCK = ("2024-07-29 17:14:59.920189: E external/xla/xla/service/rendezvous.cc:38] This thread has been waiting "
             "for `initialize clique for rank 6; clique=devices=[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]; stream=0; "
             "run_id=724296073` for 10 seconds and may be stuck. Expected 8 threads to join the rendezvous, but "
             "not all of them arrived on time.")
RAYLET_FULL = ("[2023-08-09 22:39:16,002 E 209 223] (raylet) file_system_monitor.cc:111: "
               "/tmp/ray/session_2023-08-09_22-27-32_558284_37 is over 95% full, available space: 60427313152; "
               "capacity: 1599538507776. Object creation will fail if spilling is required.")
GCS_WARN = ("[2022-08-16 13:02:15,608 W 1678 1692] (gcs_server) gcs_heartbeat_manager.cc:106: Node timed out: "
            "f2ae9432a536dd27657ec1a063b1fc85d3697490869a28a6422e37be")
XLA_INFO = ("2024-07-29 17:14:59.920189: I external/xla/xla/service/rendezvous.cc:38] This thread has been waiting for "
            "`initialize clique` for 10 seconds.")
XLA_DELAY = ("2025-05-14 10:34:02.197166: E external/xla/xla/stream_executor/cuda/cuda_timer.cc:86] Delay kernel timed "
             "out: measured time has sub-optimal accuracy. There may be a missing warmup execution, please investigate "
             "in Nsight Systems.")
NO_HEADER = "Epoch 3: loss 0.41, Note: E is the expected value, step 120 E 4"  # ours
# bash's error prolog (NVIDIA/deepops#1315's epilog log), and a line that holds its word without the prolog (ours)
BASH_ERROR = "/etc/slurm/epilog.d/50-exclusive-gpu: line 12: kill: Idx: arguments must be process or job IDs"
NO_PROLOG = "Reading file: line 12: ok"


def _verdict(make_bundle: BundleMaker, line: str):  # type: ignore[no-untyped-def]
    return Analyzer().analyze_path(str(make_bundle({"app/run.log": line + "\n"}, _WORKLOAD)))


@pytest.mark.parametrize("line", [XLA_STUCK, RAYLET_FULL, BASH_ERROR])
def test_a_record_at_an_error_letter_is_error_looking_and_the_run_failed(make_bundle: BundleMaker, line: str) -> None:
    assert error_header(line)
    v = _verdict(make_bundle, line)
    assert v.outcome == "unknown"
    assert v.attributed_domain == "unknown"
    assert [u.first.text for u in v.unrecognized] == [line]


@pytest.mark.parametrize("line", [GCS_WARN, XLA_INFO, XLA_DELAY, NO_HEADER, NO_PROLOG])
def test_a_record_below_error_a_demoted_one_or_no_header_is_not(make_bundle: BundleMaker, line: str) -> None:
    assert not error_header(line)
    v = _verdict(make_bundle, line)
    assert v.attributed_domain == "none"
    assert v.unrecognized == []


def test_a_header_word_alone_is_claimed_and_an_error_word_still_offers() -> None:
    assert ErrorWords.known(NO_HEADER)  # only `: E ` / `0 E ` made it a candidate: not error-looking
    # the header decides nothing against the line's own words: a W record that says `failed` is offered as before
    # (and read by the level words as a warning); Ray's gcs_rpc_client.h, ModalMinds/MM-EUREKA#54
    assert not ErrorWords.known("[2025-07-23 10:05:49,679 W 51000 51000] gcs_rpc_client.h:151: Failed to connect to "
                                "GCS at address :6379 within 5 seconds.")


def test_every_row_checks_its_example() -> None:
    assert {r.logger for r in level_header_table()} >= {"tensorflow", "ray"}
    row = dict(logger="x", header=r"^\[(?P<level>[IWE])\] ", error="E", literals=["[E] "],
               example="[W] a record at a warning's letter", printed_by="ours, for the test")
    with pytest.raises((CatalogTableError, ValueError)):
        LevelHeaderInfo(**row)  # type: ignore[arg-type]
    LevelHeaderInfo(**dict(row, example="[E] a record at an error's letter"))  # type: ignore[arg-type]
    with pytest.raises((CatalogTableError, ValueError)):  # a form with no letter names no error letters
        LevelHeaderInfo(**dict(row, header=r"^\S+: line \d+: ", example="x.sh: line 3: boom"))  # type: ignore[arg-type]
    LevelHeaderInfo(**dict(row, header=r"^\S+: line \d+: ", error="", literals=[": line "],  # type: ignore[arg-type]
                           example="x.sh: line 3: boom"))


# ------------------------------------------------------------------ `failure` as a noun

# openstreetmap/operations#513 (dulcy's BMC event log, ipmitool's `sel list`); intelligent-machine-learning/dlrover#1436
# (the Kubernetes API server's Status body of a refused pod create, as the kubernetes client prints it)
SEL_PSU = "   1 | 03/07/2021 | 07:10:10 | Power Supply #0xc4 | Failure detected () | Asserted"
K8S_STATUS = ('HTTP response body: {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":'
              '"pods \\"pretrain-megatron-llama2-fault-flash-edljob-worker-0\\" is forbidden: cannot set '
              'blockOwnerDeletion if an ownerReference refers to a resource you can\'t set finalizers on: , '
              '\\u003cnil\\u003e","reason":"Forbidden","details":{"name":"pretrain-megatron-llama2-fault-flash-edljob-'
              'worker-0","kind":"pods"},"code":403}')
# the same Status body with another refusal (ours, in metav1.Status's fields: a pod the client asked for that is not
# there), which no table reads: the dlrover line itself is now the API server's RBAC refusal (catalog/platform.yaml
# platform_words), a cause, no longer an unrecognized line
K8S_STATUS_NOT_FOUND = ('HTTP response body: {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
                        '"message":"pods \\"trainer-worker-0\\" not found","reason":"NotFound","details":'
                        '{"name":"trainer-worker-0","kind":"pods"},"code":404}')
# near misses: a setting's value and a label's name (Kubernetes' PodSpec restartPolicy, its deprecated topology
# label, as `kubectl describe` prints them: ours) and a count at zero
ON_FAILURE = "  Restart Policy:  OnFailure"
FAILURE_DOMAIN = "Labels:             failure-domain.beta.kubernetes.io/zone=us-central1-a"
NO_FAILURES = "Ran 12 checks: 12 passed, 0 failures"


@pytest.mark.parametrize("line", [SEL_PSU, K8S_STATUS_NOT_FOUND])
def test_failure_as_a_noun_is_error_looking(make_bundle: BundleMaker, line: str) -> None:
    v = _verdict(make_bundle, line)
    assert v.attributed_domain == "unknown"
    assert [u.first.text for u in v.unrecognized] == [line]


def test_the_rbac_refusal_in_its_status_body_is_read_as_its_cause(make_bundle: BundleMaker) -> None:
    v = _verdict(make_bundle, K8S_STATUS)
    assert (v.attributed_domain, v.unrecognized) == ("infrastructure", [])


@pytest.mark.parametrize("line", [ON_FAILURE, FAILURE_DOMAIN, NO_FAILURES])
def test_failure_in_a_setting_a_label_or_a_zero_count_is_not(make_bundle: BundleMaker, line: str) -> None:
    v = _verdict(make_bundle, line)
    assert v.attributed_domain == "none"
    assert v.unrecognized == []
