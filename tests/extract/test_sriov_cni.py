"""The InfiniBand SR-IOV CNI refusing the VF a pod was given (catalog/platform.yaml `container_errors`, runtime
ib-sriov-cni, class node), and a `kubectl describe` Events row whose message the terminal wrapped onto the next lines
(extract/kubetext.py): the row's message goes on there.

Lines marked with a thread are verbatim from it; lines marked with a source file follow the format string there (the
values are this test's). The near misses: the CNI's other words (its netconf), an Events row shorter than a
terminal's width followed by a note at the line's start (not a wrap).
"""

from __future__ import annotations

from pathlib import Path

from firstfault.analysis.analyze import Analyzer
from firstfault.model import Verdict

# Mellanox/network-operator#1825: the kubelet's event as posted, wrapped where the reporter's terminal cut it
WRAPPED = (
    '  Warning  FailedCreatePodSandBox           16s                kubelet            Failed to create pod sandbox: '
    'rpc error: code = Unknown desc = failed to setup network for sandbox "de0d2174\n'
    'b993dc3373f1d255cb1870691f93df3bc005aacee1646c56524cbed3": plugin type="multus" name="multus-cni-network" '
    'failed (add): [test-nccl/nccltest-worker-1/cc41464d-185f-48ff-9f7a-48e88a380320:ibp1\n'
    '92s0]: error adding container to network "ibp192s0": infiniBand SRI-OV CNI failed to configure VF "VF '
    'ibp192s0v10 GUID is not valid" \n')


def verdict(tmp: Path, text: str) -> Verdict:
    (tmp / "describe.txt").write_text(text)
    (tmp / "workload.yaml").write_text(
        "apiVersion: firstfault/v1\nworkload:\n  id: nccltest-worker-1\n  scheduler: static\n"
        "sources:\n  - {kind: scheduler, path: describe.txt, format: k8s-describe}\n")
    return Analyzer().analyze_path(str(tmp))


def test_a_vf_the_cni_cannot_configure_is_the_node_plumbing(tmp_path: Path) -> None:
    v = verdict(tmp_path, WRAPPED)
    assert v.attributed_domain == "infrastructure"
    assert v.root_cause is not None and v.root_cause.category.startswith("node.container")
    assert "GUID is not valid" in (v.root_cause.summary or "")


def test_the_same_row_unwrapped(tmp_path: Path) -> None:
    v = verdict(tmp_path, WRAPPED.replace("\n", "", 2))
    assert v.root_cause is not None and v.root_cause.category.startswith("node.container")


def test_the_cni_netconf_words_are_not_the_vf(tmp_path: Path) -> None:
    # format: k8snetworkplumbingwg/ib-sriov-cni cmd/ib-sriov-cni/main.go (`infiniBand SRI-OV CNI failed to load
    # netconf: %v`): the network's definition, not the node's VF
    row = ('  Warning  FailedCreatePodSandBox  16s  kubelet  Failed to create pod sandbox: rpc error: code = Unknown '
           'desc = failed to setup network for sandbox "de0d2174": error adding container to network "ibp192s0": '
           'infiniBand SRI-OV CNI failed to load netconf: unexpected end of JSON input\n')
    v = verdict(tmp_path, row)
    assert v.root_cause is None or not v.root_cause.category.startswith("node.container")


def test_a_short_row_then_a_note_is_no_wrap(tmp_path: Path) -> None:
    # a row that ended where its text did (shorter than a terminal's width), then the reporter's note at the line's
    # start naming the words: the note is not the row's message
    text = ("  Warning  FailedCreatePodSandBox  16s  kubelet  Failed to create pod sandbox\n"
            "infiniBand SRI-OV CNI failed to configure VF is what we saw last week\n")
    v = verdict(tmp_path, text)
    assert v.root_cause is None or "configure VF" not in (v.root_cause.summary or "")
