"""A verdict explains itself: its causes' summary, why and action read as words about that cause (docs/verdict.md).

Two parts. The render mechanisms that keep a template's text whole where a field is missing or is one of
firstfault's own names (engine/attribute.py render), each with a near miss; and every cause and candidate of the
shared corpus verdicts (the wild corpus, the lab's captures, the examples: tests/corpus.py SharedVerdicts) read
for the shapes of a text that does not explain itself. A shape counts only where the evidence's own lines do not
hold the same text: a message may well end in a colon or say `None`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from firstfault.catalog.tables import sched_tables
from firstfault.engine.attribute import Finding, render
from firstfault.engine.rules import Rule
from firstfault.engine.verdict import _cause
from firstfault.extract.reasons import setup_refusal
from firstfault.model import Cause, Event, Evidence, Verdict
from tests.corpus import SharedVerdicts
from tests.engine.test_validators import shipped_catalog


def _finding(rule_id: str, rank: int | None = None, nodes: tuple[str, ...] = ("n1",), **fields: object) -> Finding:
    rule = shipped_catalog().by_id(rule_id)
    assert isinstance(rule, Rule)
    ev = Event(kind="x", time=None, node=nodes[0] if nodes else None, rank=rank,
               fields=dict(fields),  # type: ignore[arg-type]
               evidence=Evidence(source="application", file="nodes/n1/train.log", line=7, text="t"))
    return Finding(rule=rule, category=rule.category, domain=rule.domain or "", events=[ev], nodes=list(nodes),
                   devices=[], first=None, count=1, weak=False)


def _summary(rule_id: str, rank: int | None = None, **fields: object) -> str:
    f = _finding(rule_id, rank, **fields)
    return render(f.rule.summary, f)


# --- render: a label that is nothing, a name of firstfault's own, the process that printed it ---

def test_a_missing_label_takes_its_colon_along() -> None:
    # app-setup's `{refusal|exc_type|...|}: {message|...}`: a line with no class says its message alone
    got = _summary("app-setup", message="vllm: error: unrecognized arguments: --disable-log-requests")
    assert got == "the job's set-up on n1: vllm: error: unrecognized arguments: --disable-log-requests"
    assert "logged" not in got


def test_a_label_that_is_there_keeps_its_colon() -> None:
    got = _summary("app-setup", exc_type="AssertionError", message="Torch not compiled with CUDA enabled")
    assert got == "the job's set-up on n1: AssertionError: Torch not compiled with CUDA enabled"


def test_a_missing_field_at_the_end_takes_the_colon_before_it() -> None:
    assert _summary("scheduler-evicted", reason="Evicted") == "Evicted (Evicted)"
    # a value's own trailing colon is the evidence's, never tidied
    assert _summary("scheduler-evicted", reason="Evicted", message="low on:") == "Evicted (Evicted): low on:"


def test_a_name_of_firstfaults_own_reads_as_words() -> None:
    # extract/verbs.py's local status for NCCL finding no interface (catalog/transport.yaml `local_statuses`)
    got = _summary("app-setup", local_status="no_interface", detail="NCCL WARN Bootstrap : no socket interface found")
    assert got == "the job's set-up on n1: no interface: NCCL WARN Bootstrap : no socket interface found"


def test_a_vendors_name_or_a_value_that_is_no_name_renders_as_it_is() -> None:
    assert _summary("app-setup", nccl_result="ncclInvalidUsage", message="m") == \
        "the job's set-up on n1: ncclInvalidUsage: m"
    assert _summary("app-setup", errno="ENOMEM", message="m") == "the job's set-up on n1: ENOMEM: m"
    # a verb's function name (`status_name`) is the library's, not firstfault's: not in the fields worded
    f = _finding("network-transport-verbs", verb="modify_qp", errno="ETIMEDOUT")
    assert "modify_qp" in render(f.rule.summary, f)


def test_an_unnamed_node_is_prose_in_a_summary_and_a_blank_in_an_actions_commands() -> None:
    f = _finding("gpu-fallen-off-bus", nodes=(), xid=79)
    assert "an unidentified node" in render(f.rule.summary, f)
    action = render(f.rule.recommended_action or "", f, action=True)
    assert action.startswith("drain <node>;"), action
    assert "unidentified" not in action
    # near miss: a node the evidence named is named in both
    named = _finding("gpu-fallen-off-bus", nodes=("gpu-07",), xid=79)
    assert render(named.rule.recommended_action or "", named, action=True).startswith("drain gpu-07;")


def test_where_names_the_rank_where_the_evidence_says_it() -> None:
    assert _summary("app-exception", rank=3, exc_type="KeyError", message="'x'") == "KeyError: 'x' (rank 3 on n1)"
    got = _summary("app-exception", exc_type="KeyError", message="'x'")
    assert got == "KeyError: 'x' (n1)"
    assert "unknown" not in got


def test_why_names_the_line_the_summary_was_read_from() -> None:
    why = _cause(_finding("app-exception", 0, exc_type="KeyError", message="'x'")).why
    assert why is not None and why.endswith("(nodes/n1/train.log:7)")
    # a traceback's last line alone says so in its own words, which name the line once
    why = _cause(_finding("app-exception", 0, exc_type="KeyError", message="'x'", terminal=True)).why
    assert why is not None and why.count("nodes/n1/train.log:7") == 1 and "only its last line" in why


# --- a field's own action (rules' field_actions) ---

def test_a_cloud_quota_gets_the_quota_remedy() -> None:
    f = _finding("app-setup", setup=True, refusal="over_quota", message="... (ResourceLimitExceeded) ...")
    c = _cause(f)
    assert c.summary.startswith("the job's set-up on n1: over quota: ")
    assert c.recommended_action is not None and "raise that quota" in c.recommended_action
    assert "MASTER_PORT" not in c.recommended_action


def test_a_setup_without_a_field_that_says_more_keeps_the_rules_action() -> None:
    c = _cause(_finding("app-setup", setup=True, message="failed to load 'm' version 1: Internal: ..."))
    rule = shipped_catalog().by_id("app-setup")
    assert isinstance(rule, Rule) and rule.recommended_action is not None
    assert c.recommended_action == render(rule.recommended_action, _finding("app-setup"))
    # a value the rule has no action for is no reason to leave its own
    c = _cause(_finding("app-setup", setup=True, errno="EINVAL", message="m"))
    assert c.recommended_action == render(rule.recommended_action, _finding("app-setup"))


def test_the_service_says_which_quota_refused_the_request() -> None:
    # aws/sagemaker-python-sdk's users' reports (catalog/scheduler.yaml's rows cite them): SageMaker's client error
    assert setup_refusal("botocore.errorfactory.ResourceLimitExceeded: An error occurred (ResourceLimitExceeded) "
                         "when calling the CreateTrainingJob operation: The account-level service limit "
                         "'ml.p3.2xlarge for training job usage' is 0 Instances") == "over_quota"
    # Kubernetes' admission webhook error (staging/src/k8s.io/apiserver/.../webhook/errors/statuserror.go)
    assert setup_refusal('Error from server: admission webhook "v.example.io" denied the request: no privileged '
                         "pods") == "denied_by_policy"


def test_a_stock_out_or_a_wait_is_no_refusal() -> None:
    # EC2's stock-out (the table's reason null) and Kueue's wait for quota are not over a quota of the job's own
    assert setup_refusal("An error occurred (InsufficientInstanceCapacity) when calling the RunInstances "
                         "operation: We currently do not have sufficient p4d.24xlarge capacity") is None
    assert setup_refusal("couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu "
                         "in flavor a100, 8 more needed") is None


def test_only_a_setup_phrase_says_what_refused() -> None:
    rows = [t for t in sched_tables().texts if t.refusal is not None]
    assert rows and all(t.reason == "setup" for t in rows)


# --- the corpus: no cause explains itself in these shapes ---

# A shape of a text that does not explain itself, and whether the evidence's own lines may hold it.
SHAPES: dict[str, re.Pattern[str]] = {
    "a template's fallback word": re.compile(r"\blogged:"),
    "a rank that is not known": re.compile(r"\b[Rr]ank unknown\b"),
    "a placeholder": re.compile(r"\{[a-z_|]+\}"),
    "None": re.compile(r"\bNone\b"),
    "empty brackets": re.compile(r"\(\s*\)|\(\s*:"),  # (a value's own colon before the bracket closes is kept)
    "a doubled word": re.compile(r"\b(\w+) \1\b", re.I),
    "a colon with nothing after it": re.compile(r":\s*$"),
    "a node named twice": re.compile(r"\bNode an unidentified node\b"),
}


# A command quoted in a code span says its own words (`scontrol show node node-1`, the node-scheduler rule's action
# on a node named `node-1`): no doubled word of the text's
_CODE_SPAN = re.compile(r"`[^`]*`")


def _defects(c: Cause, lines: str) -> list[str]:
    out = []
    for where, text in (("summary", c.summary), ("action", c.recommended_action or "")):
        for shape, rx in SHAPES.items():
            m = rx.search(_CODE_SPAN.sub("`code`", text) if shape == "a doubled word" else text)
            if m is not None and m.group(0) not in lines:
                out.append(f"{c.rule} {where}: {shape}: {text[:160]!r}")
    return out


def test_no_verdict_text_in_the_shapes_of_one_that_does_not_explain_itself(shared_verdicts: SharedVerdicts) -> None:
    found: list[str] = []
    causes = 0
    for bundle, v in sorted(shared_verdicts.verdicts.items()):
        if not isinstance(v, Verdict):
            continue
        lines = "\n".join(e.text for e in v.evidence)
        for c in ([v.root_cause] if v.root_cause else []) + list(v.candidates):
            causes += 1
            found += [f"{Path(bundle).name}: {d}" for d in _defects(c, lines)]
    assert causes >= 500
    assert found == []


def test_every_cause_says_the_line_it_was_read_from(shared_verdicts: SharedVerdicts) -> None:
    lacking = []
    for bundle, v in sorted(shared_verdicts.verdicts.items()):
        if not isinstance(v, Verdict):
            continue
        for c in ([v.root_cause] if v.root_cause else []) + list(v.candidates):
            cited = [f"{e.file}:{e.line}" for e in v.evidence if e.role == "cause" and e.file and e.line]
            if cited and not any(at in (c.why or "") for at in cited):
                lacking.append(f"{Path(bundle).name}: {c.rule}: {c.why}")
    assert lacking == []


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_shape_is_found(shape: str) -> None:
    """The shapes find what they name (a check that could not fail would say nothing)."""
    samples = {
        "a template's fallback word": "the job's set-up on n1: logged: x",
        "a rank that is not known": "KeyError: 'x' (rank unknown on n1)",
        "a placeholder": "Slurm on n1 could not run the job: gres/{any} count",
        "None": "KeyError: None (n1)",
        "empty brackets": "Evicted () on n1",
        "a doubled word": "the the node",
        "a colon with nothing after it": "Evicted (Evicted):",
        "a node named twice": "Node an unidentified node stopped responding",
    }
    c = Cause(category="app.exception", domain="software", summary=samples[shape], nodes=[], devices=[],
              first_seen=None, rule="r", recommended_action=None, count=1, why=None)
    assert any(f": {shape}: " in d for d in _defects(c, ""))
    assert not any(f": {shape}: " in d for d in _defects(c, samples[shape]))  # the evidence's own text
