"""The helpers there is one of: node names, query literals, strsignal texts (issue 9)."""

from __future__ import annotations

import pytest

from firstfault.collect.lines import match_node
from firstfault.engine.normalise import NodeMapper
from firstfault.extract.codes import signal_of_text
from firstfault.extract.prefix import PrefixLayer
from firstfault.hostlist import NodeNames
from firstfault.querytext import label_value, quoted, re2_literal

NODES = ["gpu-a01", "gpu-a02.cluster.local", "login.example.org", "login"]


@pytest.mark.parametrize(("written", "node"), [
    ("gpu-a01", "gpu-a01"),
    ("GPU-A01.cluster.local", "gpu-a01"),  # FQDN of a short-named node
    (" gpu-a02 ", "gpu-a02.cluster.local"),  # short name of an FQDN node
    ("gpu-a02.other.domain", "gpu-a02.cluster.local"),
    ("login.other", "login"),  # the node whose whole name is the label wins
    ("login.example.org", "login.example.org"),
    ("gpu-z99", None),
    ("", None),
    (None, None),
])
def test_a_name_maps_to_the_same_node_in_every_step(written: str | None, node: str | None) -> None:
    assert NodeNames(NODES).lookup(written) == node
    assert match_node(written, NODES) == node  # the connectors
    assert NodeMapper(NODES, {}).host(written) == node  # the engine
    if node is not None and written and written.strip() == written:
        # The extractors' prefix layer: a pdsh tag that names an allocation node is a host tag, even
        # one like `login.other` that holds no digit.
        p = PrefixLayer(NODES).split(f"{written}: NCCL WARN x")
        assert (p.host, p.body) == (written, "NCCL WARN x")


def test_query_literals_escape_what_go_and_re2_need() -> None:
    assert quoted('a"b\\c\nd') == '"a\\"b\\\\c\\nd"'
    assert label_value('say "hi"') == 'say \\"hi\\"'
    assert re2_literal("node.1(a)|b") == "node\\.1\\(a\\)\\|b"
    assert re2_literal("gpu-a01") == "gpu-a01"  # `-` is not special outside a class


@pytest.mark.parametrize(("text", "sig"), [
    ("Segmentation fault", "SIGSEGV"),
    ("segmentation fault", "SIGSEGV"),
    ("bus error", "SIGBUS"),
    ("floating-point exception", "SIGFPE"),  # the DataLoader's spelling of strsignal(SIGFPE)
    ("Killed.", "SIGKILL"),
    ("not a signal", None),
])
def test_signal_texts_come_from_the_stdlib_table(text: str, sig: str | None) -> None:
    assert signal_of_text(text) == sig
