from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pytest

from firstfault.extract.metric_conditions import MetricCatalogError, load_metric_conditions, metric_conditions
from firstfault.extract.metric_formats import host_of
from firstfault.extract.metrics import read_metrics
from firstfault.extract.structured import StructuredResult
from firstfault.model import Event

FIX = Path(__file__).resolve().parent.parent / "fixtures" / "metrics"
T0 = 1793613600  # 2026-11-02T10:00:00Z


def read(name: str, fmt: str) -> StructuredResult:
    with (FIX / name).open("rb") as fh:
        return read_metrics(fh, fmt, f"metrics/{name}")


def at(offset: int) -> datetime:
    return datetime.fromtimestamp(T0 + offset, tz=UTC)


def conds(res: StructuredResult, name: str) -> list[Event]:
    return [e for e in res.events if e.kind == "metric.condition" and e.fields["condition"] == name]


# --------------------------------------------------------------------------
# The catalog
# --------------------------------------------------------------------------

CONTRACT_NAMES = {
    "xid_reported",
    "ecc_dbe_increase",
    "row_remap_failure",
    "nvlink_crc_increase",
    "nvlink_replay_increase",
    "nvlink_recovery_increase",
    "thermal_hw_slowdown",
    "power_brake",
    "thermal_violation_increase",
    "pcie_replay_increase",
    "ib_link_downed_increase",
    "ib_symbol_error_increase",
    "ib_link_error_recovery_increase",
    "ib_port_state_down",
    "host_oom_kill_increase",
    "edac_ue_increase",
}


def test_shipped_catalog_has_the_contract_conditions() -> None:
    conditions = {c.name: c for c in metric_conditions()}
    assert set(conditions) >= CONTRACT_NAMES
    assert conditions["thermal_hw_slowdown"].mask == 0x48
    assert conditions["power_brake"].mask == 0x80
    assert conditions["ib_port_state_down"].expected == 4
    assert conditions["xid_reported"].also_emit == "gpu.xid"
    assert set(conditions["ecc_dbe_increase"].metrics) >= {
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
        "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL",
    }
    assert set(conditions["thermal_hw_slowdown"].metrics) == {
        "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS",
        "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
    }


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (
            "version: 1\nconditions:\n- {name: a, metrics: [m], type: increase, description: d, bogus: 1}\n",
            "conditions.0.bogus",
        ),
        ("version: 1\nconditions:\n- {name: a, metrics: [m], type: bitmask, description: d}\n", "mask"),
        ("version: 1\nconditions:\n- {name: a, metrics: [m], type: not_equal, description: d}\n", "expected"),
        (
            "version: 1\nconditions:\n- {name: a, metrics: [m], type: rate, description: d}\n",
            "conditions.0.type",
        ),
        ("version: 1\nconditions:\n- {name: a, metrics: [], type: nonzero, description: d}\n", "metrics"),
        (
            "version: 1\nconditions:\n- {name: a, metrics: [m], type: nonzero, description: d}\n"
            "- {name: a, metrics: [n], type: nonzero, description: d}\n",
            "duplicate",
        ),
        ("version: 1\nextra: true\nconditions: []\n", "extra"),
        (
            "version: 1\nconditions:\n- {name: a, metrics: [m], type: increase, also_emit: gpu.xid, description: d}\n",
            "also_emit",
        ),
    ],
)
def test_catalog_validation_names_the_key(text: str, needle: str) -> None:
    with pytest.raises(MetricCatalogError, match=needle):
        load_metric_conditions(text)


# --------------------------------------------------------------------------
# OpenMetrics
# --------------------------------------------------------------------------


def test_openmetrics_xid_change_emits_once_per_new_value() -> None:
    res = read("dcgm.om", "openmetrics")
    xids = conds(res, "xid_reported")
    seen = sorted((e.node, e.device, e.fields["value"], e.time) for e in xids)
    assert seen == [
        ("node-01", "gpu1", 13, at(30)),
        ("node-01", "gpu1", 13, at(120)),  # back to 0, then 13 again: a new Xid
        ("node-01", "gpu2", 79, at(90)),  # 48 -> 79
        ("node-02", "gpu3", 79, at(60)),  # 0,0,79,79,79: one event, not three
    ]
    # gpu0 on node-02 sits at 13 from the first sample: a stale baseline, not evidence.
    assert not any(e.device == "gpu0" for e in xids)

    ev = next(e for e in xids if e.device == "gpu3")
    assert ev.t_lo == at(30)
    assert ev.fields["gpu"] == 3 and ev.fields["metric"] == "DCGM_FI_DEV_XID_ERRORS"
    assert "delta" not in ev.fields
    assert ev.evidence.source == "metrics" and ev.evidence.file == "metrics/dcgm.om"
    assert ev.evidence.query is not None and ev.evidence.query.startswith("DCGM_FI_DEV_XID_ERRORS{")
    assert 'Hostname="node-02"' in ev.evidence.query
    lines = (FIX / "dcgm.om").read_text().splitlines()
    assert ev.evidence.line is not None
    assert lines[ev.evidence.line - 1].endswith(f" 79 {T0 + 60}")
    assert ev.evidence.text.endswith(f" 79 {T0 + 60}")


def test_openmetrics_xid_also_emits_gpu_xid() -> None:
    res = read("dcgm.om", "openmetrics")
    gx = [e for e in res.events if e.kind == "gpu.xid"]
    assert len(gx) == 4
    ev = next(e for e in gx if e.node == "node-02")
    assert ev.fields["xid"] == 79
    assert ev.fields["via"] == "metrics"
    assert ev.fields["pci"] == "0000:3b:00"
    assert ev.device == "gpu3"
    assert ev.time == at(60) and ev.t_lo == at(30)


def test_openmetrics_counter_increase_and_reset() -> None:
    res = read("dcgm.om", "openmetrics")
    dbe = conds(res, "ecc_dbe_increase")
    # gpu3 goes 0,0,0,1,1 (one increase); gpu5 goes 4,4,0,0,0 (a reset: not an increase).
    assert [(e.device, e.fields["delta"], e.time, e.t_lo) for e in dbe] == [("gpu3", 1, at(90), at(60))]


def test_openmetrics_bitmask_edges() -> None:
    res = read("dcgm.om", "openmetrics")
    thermal = conds(res, "thermal_hw_slowdown")
    # gpu3: 0, 0x40, 0x44, 0, 0x08 -> true at 30s (stays true at 60s), false, true again at 120s.
    assert [(e.device, e.time, e.fields["value"]) for e in thermal] == [
        ("gpu3", at(30), 64),
        ("gpu3", at(120), 8),
    ]
    brake = conds(res, "power_brake")
    # gpu4: 0x04 (SW power cap, not a brake), then 0x84.
    assert [(e.device, e.time, e.fields["value"]) for e in brake] == [("gpu4", at(60), 132)]


def test_openmetrics_nonzero_gauge() -> None:
    res = read("dcgm.om", "openmetrics")
    (rr,) = conds(res, "row_remap_failure")
    assert rr.node == "node-02" and rr.device == "gpu3" and rr.time == at(120)


def test_openmetrics_label_escaping_and_total_suffix() -> None:
    res = read("dcgm.om", "openmetrics")
    assert res.issues == []
    (pcie,) = conds(res, "pcie_replay_increase")
    assert pcie.node == "node-04"
    assert pcie.fields["delta"] == 2
    assert pcie.fields["metric"] == "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"
    assert pcie.evidence.query is not None
    # Escapes survive the round trip into the selector.
    assert r'modelName2="NVIDIA \"H100\" SXM5 {x} # 80GB"' in pcie.evidence.query
    assert r'path="C:\\gpu"' in pcie.evidence.query


def test_openmetrics_hosts_and_line_count() -> None:
    res = read("dcgm.om", "openmetrics")
    # node-05 only exports a temperature (no condition) but is still a host seen.
    assert res.hosts == {"node-01", "node-02", "node-04", "node-05"}
    assert res.lines == len((FIX / "dcgm.om").read_text().splitlines())


def test_openmetrics_node_exporter_instance_port_and_missing_eof() -> None:
    res = read("node_no_eof.om", "openmetrics")
    assert len(res.issues) == 1
    assert "# EOF" in res.issues[0].message
    assert res.hosts == {"node-03", "fd00::4", "node-05"}

    (down,) = conds(res, "ib_link_downed_increase")
    assert down.node == "node-03"  # instance="node-03:9100"
    assert down.device == "mlx5_0"
    assert down.fields["iface"] == "mlx5_0" and down.fields["port"] == 1
    assert "gpu" not in down.fields
    assert down.time == at(60)
    # mlx5_1's counter goes 3,3,0,0: an exporter restart, no event.

    (sym,) = conds(res, "ib_symbol_error_increase")
    assert sym.fields["delta"] == 2 and sym.time == at(30)

    (state,) = conds(res, "ib_port_state_down")
    # mlx5_0: 4,4,1,4 -> down at 60s. mlx5_1 was never ACTIVE: nothing to lose.
    assert state.device == "mlx5_0" and state.fields["value"] == 1 and state.time == at(60)

    (oom,) = conds(res, "host_oom_kill_increase")
    assert oom.node == "fd00::4" and oom.device is None and oom.time == at(90)


def test_openmetrics_millisecond_timestamps_and_bad_lines() -> None:
    text = (
        "# TYPE node_vmstat_oom_kill untyped\n"
        f'node_vmstat_oom_kill{{instance="n1:9100"}} 0 {T0 * 1000}\n'
        'node_vmstat_oom_kill{instance="n1:9100"} zero 1793613615\n'
        'node_vmstat_oom_kill{instance="n1:9100",bad} 1 1793613615\n'
        'node_vmstat_oom_kill{instance="n1:9100"} 3\n'
        f'node_vmstat_oom_kill{{instance="n1:9100"}} 1 {(T0 + 30) * 1000}\n'
        "# EOF\n"
        "trailing garbage\n"
    )
    res = read_metrics(io.BytesIO(text.encode()), "openmetrics", "m.om")
    (oom,) = conds(res, "host_oom_kill_increase")
    assert oom.time == at(30) and oom.t_lo == at(0)
    by_line = {i.line: i.message for i in res.issues}
    assert "not a number" in by_line[3]
    assert "label" in by_line[4]
    assert "timestamp" in by_line[5]
    assert "after '# EOF'" in by_line[7]


def test_openmetrics_is_read_as_a_stream() -> None:
    class OnlyIter(io.RawIOBase):
        """A stream that refuses read(): the reader must go line by line."""

        def __init__(self, data: bytes) -> None:
            self._lines = iter(data.splitlines(keepends=True))

        def __iter__(self) -> OnlyIter:
            return self

        def __next__(self) -> bytes:
            return next(self._lines)

        def read(self, size: int | None = -1) -> bytes:
            raise AssertionError("whole-file read")

    data = (FIX / "dcgm.om").read_bytes()
    res = read_metrics(OnlyIter(data), "openmetrics", "m.om")  # type: ignore[arg-type]
    assert len(conds(res, "xid_reported")) == 4


@pytest.mark.parametrize(
    ("labels", "host"),
    [
        ({"Hostname": "node-02", "instance": "10.0.0.2:9400"}, "node-02"),
        ({"hostname": "node-02", "node": "x"}, "node-02"),
        ({"node": "worker-7", "instance": "10.0.0.7:9400"}, "worker-7"),
        ({"instance": "node-03:9100"}, "node-03"),
        ({"instance": "node-03"}, "node-03"),
        ({"instance": "[fd00::4]:9100"}, "fd00::4"),
        ({"instance": "fd00::4"}, "fd00::4"),
        ({"job": "x"}, None),
    ],
)
def test_host_label_order(labels: dict[str, str], host: str | None) -> None:
    assert host_of(labels) == host


# --------------------------------------------------------------------------
# Prometheus JSON
# --------------------------------------------------------------------------


def test_prometheus_json_conditions() -> None:
    res = read("query_range.json", "prometheus-json")
    (xid,) = conds(res, "xid_reported")
    assert xid.node == "gpu-node-17"  # Hostname wins over instance
    assert xid.device == "gpu7" and xid.fields["value"] == 94
    assert xid.time == at(45) and xid.t_lo == at(30)
    assert xid.evidence.line is None
    assert xid.evidence.query is not None and xid.evidence.query.startswith("DCGM_FI_DEV_XID_ERRORS{")
    (gx,) = [e for e in res.events if e.kind == "gpu.xid"]
    assert gx.fields["xid"] == 94 and gx.fields["pci"] == "0000:db:00"

    (thermal,) = conds(res, "thermal_hw_slowdown")  # 0, 4, 72, 72, 4: 0x48 set once
    assert thermal.time == at(30) and thermal.fields["value"] == 72
    assert conds(res, "power_brake") == []

    (crc,) = conds(res, "nvlink_crc_increase")  # 120,120,180,260: one run of increases
    assert crc.time == at(30) and crc.fields["delta"] == 60 and crc.device == "gpu0"

    assert conds(res, "ib_link_downed_increase") == []  # 7,7,0,...: a reset

    (edac,) = conds(res, "edac_ue_increase")
    assert edac.node == "gpu-node-19" and edac.fields["delta"] == 2

    assert res.hosts == {"gpu-node-17", "gpu-node-18", "gpu-node-19"}
    assert len(res.issues) == 1 and "__name__" in res.issues[0].message
    assert res.lines == 36  # samples read


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        (b'{"status": "error", "errorType": "bad_data", "error": "parse error"}', "bad_data"),
        (b'{"status": "success", "data": {"resultType": "scalar", "result": [1, "1"]}}', "resultType"),
        (b"not json", "not JSON"),
    ],
)
def test_prometheus_json_errors(body: bytes, needle: str) -> None:
    res = read_metrics(io.BytesIO(body), "prometheus-json", "q.json")
    assert res.events == []
    assert len(res.issues) == 1 and needle in res.issues[0].message


def test_prometheus_json_vector() -> None:
    body = (
        b'{"status": "success", "data": {"resultType": "vector", "result": ['
        b'{"metric": {"__name__": "DCGM_FI_DEV_ROW_REMAP_FAILURE", "Hostname": "n9", "gpu": "1"},'
        b' "value": [1793613600, "1"]}]}}'
    )
    res = read_metrics(io.BytesIO(body), "prometheus-json", "q.json")
    (rr,) = conds(res, "row_remap_failure")
    assert rr.node == "n9" and rr.t_lo is None  # already failed at the only sample


# --------------------------------------------------------------------------
# Xid table fields
# --------------------------------------------------------------------------


def test_gpu_xid_with_the_shipped_table() -> None:
    res = read("dcgm.om", "openmetrics")
    gx = {e.fields["xid"]: e for e in res.events if e.kind == "gpu.xid"}
    assert gx[79].fields["xid_class"] == "fallen_off_bus"
    assert gx[13].fields["xid_class"] == "app"


def test_a_metric_xid_has_the_fields_of_a_kernel_log_xid() -> None:
    """One Xid field builder: the same code seen by DCGM and in kern.log lands on the same rules."""
    from firstfault.extract.gpu import XidExtractor
    from tests.extract.helpers import one

    res = read("dcgm.om", "openmetrics")
    gx = {e.fields["xid"]: e for e in res.events if e.kind == "gpu.xid"}
    for code in (13, 79):
        logged = one(XidExtractor(), f"NVRM: Xid (PCI:0000:3b:00): {code}, pid=1, name=python, Ch 00000001").fields
        from_metric = gx[code].fields
        for key in ("xid", "xid_class", "mnemonic", "immediate_action"):
            assert from_metric[key] == logged[key], (code, key)
        assert from_metric["via"] == "metrics" and logged["via"] == "log"


def test_long_selector_keeps_value_and_time_in_the_evidence_text() -> None:
    long_label = "x" * 800
    text = (
        f'node_vmstat_oom_kill{{instance="n1:9100",note="{long_label}"}} 0 {T0}\n'
        f'node_vmstat_oom_kill{{instance="n1:9100",note="{long_label}"}} 4 {T0 + 15}\n'
        "# EOF\n"
    )
    res = read_metrics(io.BytesIO(text.encode()), "openmetrics", "m.om")
    (oom,) = conds(res, "host_oom_kill_increase")
    assert len(oom.evidence.text) <= 500
    assert oom.evidence.text.endswith(f" 4 {T0 + 15}")
    assert oom.evidence.query is not None and long_label in oom.evidence.query
    assert oom.fields["delta"] == 4


def test_unknown_format_is_an_issue_not_a_crash() -> None:
    res = read_metrics(io.BytesIO(b"x 1 1\n"), "sacct", "m")
    assert res.events == []
    assert len(res.issues) == 1
    assert res.issues[0].message.startswith("cannot read") and "sacct" in res.issues[0].message
