"""An RDMA port's physical state in a snapshot of the port-state tools (catalog/transport.yaml `port_phys_states`,
extract/verbs.py PortStateExtractor): `rdma link`, ibstat, ibstatus, ibv_devinfo.

A port not physically up (polling for a partner, disabled, asleep, recovering from a link error) is `net.link` down
on the device the snapshot names; one whose link trained is `net.link` up, no cause. Lines marked with a thread are
verbatim from that public report (tabs as posted); those marked as a format follow the printer named.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import analyze
from firstfault.catalog.tables import port_phys_states, port_state_key
from firstfault.model import Event
from tests.conftest import BundleMaker, workload_ending
from tests.extract import helpers


def links(lines: list[str]) -> list[Event]:
    return [e for e in helpers.events(lines) if e.kind == "net.link"]


def states(lines: list[str]) -> list[tuple[str, object, object, object]]:
    return [(str(e.fields["state"]), e.fields.get("iface"), e.fields.get("port"), e.fields.get("phys_state"))
            for e in links(lines)]


# leptonai/gpud#482 (https://github.com/leptonai/gpud/pull/482): ibstat's record of a port polling for its partner
IBSTAT_POLLING = [
    "CA 'mlx5_10'",
    "    CA type: MT4129",
    "    Number of ports: 1",
    "    Port 1:",
    "        State: Down",
    "        Physical state: Polling",
    "        Rate: 10",
    "        Link layer: InfiniBand",
]
# leptonai/gpud#99 (https://github.com/leptonai/gpud/pull/99): a RoCE port with no link, Disabled
IBSTAT_DISABLED = [
    "CA 'mlx5_8'",
    "\tCA type: MT4125",
    "\tNumber of ports: 1",
    "\tFirmware version: 22.39.1002",
    "\tPort 1:",
    "\t\tState: Down",
    "\t\tPhysical state: Disabled",
]
# leptonai/gpud#752 (https://github.com/leptonai/gpud/pull/752): a port that is up
IBSTAT_UP = [
    "CA 'mlx5_7'",
    "\tPort 1:",
    "\t\tState: Active",
    "\t\tPhysical state: LinkUp",
    "\t\tRate: 200",
]


RDMA_LINK = "link mlx5_7/1 subnet_prefix fe80:0000:0000:0000 lid 3403 sm_lid 1 lmc 0"


@pytest.mark.parametrize(
    ("lines", "want"),
    [
        (IBSTAT_POLLING, [("down", "mlx5_10", None, "Polling")]),
        (IBSTAT_DISABLED, [("down", "mlx5_8", None, "Disabled")]),
        (IBSTAT_UP, [("up", "mlx5_7", None, "LinkUp")]),
        # ROCm/rccl#1423 (https://github.com/ROCm/rccl/issues/1423): `rdma link` taken three times by hand on a VM
        # whose port flapped: down and polling, physically up but logically down, then active
        ([f"{RDMA_LINK} state DOWN physical_state POLLING",
          f"{RDMA_LINK} state DOWN physical_state LINK_UP",
          f"{RDMA_LINK} state ACTIVE physical_state LINK_UP"],
         [("down", "mlx5_7", 1, "Polling"), ("up", "mlx5_7", 1, "LinkUp"), ("up", "mlx5_7", 1, "LinkUp")]),
        # ibstatus (its format: `Infiniband device '%s' port %s status:`, then sysfs's `phys_state`, `%d: %s` from
        # drivers/infiniband/core/sysfs.c phys_state_to_str)
        (["Infiniband device 'mlx5_0' port 1 status:",
          "\tdefault gid:\t fe80:0000:0000:0000:0c42:a103:00f5:1f2c",
          "\tstate:\t\t 1: DOWN",
          "\tphys state:\t 2: Polling",
          "\trate:\t\t 10 Gb/sec (4X SDR)"],
         [("down", "mlx5_0", 1, "Polling")]),
        # ibv_devinfo (libibverbs' port_phy_state_str, `%s (%d)`), a port recovering from a link error
        (["hca_id:\tmlx5_2",
          "\ttransport:\t\t\tInfiniBand (0)",
          "\t\tport:\t1",
          "\t\t\tstate:\t\t\tPORT_DOWN (1)",
          "\t\t\tphys_state:\t\tLINK_ERROR_RECOVERY (6)"],
         [("down", "mlx5_2", None, "LinkErrorRecovery")]),
    ],
)
def test_a_port_not_physically_up_is_its_link_down(lines: list[str], want: list[tuple[str, object, object, object]]
                                                   ) -> None:
    assert states(lines) == want


@pytest.mark.parametrize(
    "lines",
    [
        # ibstat's logical state alone (the record cut before its physical state): the physical state decides
        [IBSTAT_POLLING[0], "        State: Down"],
        # a port still training (ibv_devinfo's spelling): on its way, no state yet
        ["hca_id:\tmlx5_2", "\t\t\tphys_state:\t\tPORT_CONFIGURATION TRAINING (4)"],
        # the same words outside the tools' layouts: a sentence, a program's own key
        ["The link kept the physical_state POLLING for a while before it came up"],
        ["phys_state: 5"],
        ["driver says Physical state: Polling is expected during boot"],
    ],
)
def test_other_lines_with_the_words_are_no_port_state(lines: list[str]) -> None:
    assert links(lines) == []


def test_every_spelling_of_the_tools_is_in_the_table() -> None:
    # rdma/link.c (iproute2), sysfs.c (the kernel, ibstat, ibstatus) and libibverbs' spellings
    for word in ("SLEEP", "POLLING", "DISABLED", "LINK_UP", "LINK_ERROR_RECOVER", "PHY_TEST", "Sleep", "Polling",
                 "Disabled", "PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "Phy Test",
                 "PORT_CONFIGURATION TRAINING", "LINK_ERROR_RECOVERY", "PHY TEST"):
        assert port_state_key(word) in port_phys_states(), word


def test_a_port_polling_in_a_failed_run_is_the_link(make_bundle: BundleMaker) -> None:
    v = analyze(str(make_bundle({"app/rank-0.log": "\n".join(IBSTAT_POLLING) + "\n"}, workload_ending("FAILED"))))
    assert v.root_cause is not None and v.root_cause.category == "network.link"


def test_a_port_that_is_up_is_no_cause(make_bundle: BundleMaker) -> None:
    v = analyze(str(make_bundle({"app/rank-0.log": "\n".join(IBSTAT_UP) + "\n"}, workload_ending("FAILED"))))
    assert v.root_cause is None or v.root_cause.category != "network.link"


def test_a_port_polling_in_a_run_that_completed_is_no_cause(make_bundle: BundleMaker) -> None:
    # a snapshot of a node with a port nobody cabled, in a run that succeeded: nothing failed
    v = analyze(str(make_bundle({"app/rank-0.log": "\n".join(IBSTAT_POLLING) + "\n"}, workload_ending("COMPLETED"))))
    assert v.root_cause is None


def test_rdma_links_json_is_read_link_by_link() -> None:
    # `rdma -j link` (iproute2 rdma/link.c, its keys `ifname`, `port`, `state`, `physical_state` as print_string and
    # print_uint give them in JSON): one array, each link read alone
    line = ('[{"ifindex":0,"ifname":"mlx5_0","port":1,"state":"ACTIVE","physical_state":"LINK_UP",'
            '"netdev":"ens1f0np0"},{"ifindex":1,"ifname":"mlx5_1","port":1,"state":"DOWN",'
            '"physical_state":"DISABLED","netdev":"ens1f1np1"}]')
    assert states([line]) == [("up", "mlx5_0", 1, "LinkUp"), ("down", "mlx5_1", 1, "Disabled")]
    # a JSON document of another program with no such key reads nothing
    assert links(['{"ifname":"mlx5_1","port":1,"state":"DOWN","operstate":"DOWN"}']) == []
