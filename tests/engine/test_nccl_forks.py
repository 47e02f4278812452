"""A library that prints NCCL's debug lines under its own word (catalog/transport.yaml `nccl_forks`) is named by the
verdict's words where NCCL's own line would say NCCL (extract/nccl.py `library`, the rules' `{library|"NCCL"}`)."""
from __future__ import annotations

from typing import Any

from firstfault.analysis.analyze import Analyzer
from tests.conftest import BundleMaker

# aws/aws-ofi-nccl#1020's WARN (NCCL's logger, the plugin's function in the file's place)
NCCL_LINE = ("[2025-10-16 22:16:08] ip-172-31-3-90:1929:1937 [0] nccl_net_ofi_rdma_init:7978 NCCL WARN NET/OFI OFI "
             "fi_getinfo() call failed: No data available")
# the same plugin's words under AWS Neuron's collectives, whose lines have no host before pid:tid (the layout of
# JasnahOrg/nrt_efa_comms_repro's posted run; this message synthetic)
CCOM_LINE = ("2023-May-21 01:40:03.0080 93703:93705 [0] nccl_net_ofi_rdma_init:7978 CCOM WARN NET/OFI OFI fi_getinfo() "
             "call failed: No data available")


def _analyze(make_bundle: BundleMaker, line: str, name: str) -> Any:
    wl: dict[str, Any] = {"id": "t", "scheduler": "static", "nodes": ["node-001"]}
    root = make_bundle({"app/train.log": f"step 1 loss 0.5\n{line}\n"},
                       {"apiVersion": "firstfault/v1", "workload": wl,
                        "sources": [{"kind": "application", "path": "app/train.log"}]}, name)
    return Analyzer().analyze_path(str(root))


def test_a_fork_s_line_is_named_by_its_library_in_the_summary(make_bundle: BundleMaker) -> None:
    fork = _analyze(make_bundle, CCOM_LINE, "ccom").root_cause
    assert fork is not None and fork.category == "node.driver.rdma"
    assert "Neuron CCOM's request" in fork.summary and "NCCL" not in fork.summary
    # NCCL's own line keeps NCCL's name
    own = _analyze(make_bundle, NCCL_LINE, "nccl").root_cause
    assert own is not None and own.category == "node.driver.rdma"
    assert "NCCL's request" in own.summary
