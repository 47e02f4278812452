"""The tables whose rows name a row of another table (a platform program's own words, the Xids it relays, a kernel
module's own failure words) and the BMC's power events: a bad row is refused with its file, its key and its index,
and the rest of the catalog's rows stay as they are."""

from __future__ import annotations

from typing import Any

import pytest

from firstfault.catalog import tables
from firstfault.catalog.vocab import CatalogTableError


def _build_with(monkeypatch: pytest.MonkeyPatch, key: str, rows: list[dict[str, Any]], build: Any) -> Any:
    real = tables._document  # the parsed documents, read only

    def fake(name: str) -> Any:
        if name != "platform.yaml":
            return real(name)
        return {**real(name), key: rows}

    monkeypatch.setattr(tables, "_document", fake)
    return build.__wrapped__.__wrapped__()  # lru_cache, then _kept


_WORD = {"text": "failed to allocate device", "printed_by": "a public source that prints it"}


@pytest.mark.parametrize(
    ("key", "build", "row", "owner"),
    [
        ("platform_words", tables.platform_words, {**_WORD, "program": "no-such-program"}, "program"),
        ("xid_relays", tables.xid_relays, {**_WORD, "program": "no-such-program"}, "program"),
        ("kernel_module_failures", tables.kernel_module_failures, {**_WORD, "module": "no_such_module"}, "module"),
    ],
)
def test_a_row_naming_no_row_of_its_owners_table_is_named(monkeypatch: pytest.MonkeyPatch, key: str, build: Any,
                                                          row: dict[str, Any], owner: str) -> None:
    good = [dict(r) for r in tables._document("platform.yaml")[key]]
    with pytest.raises(CatalogTableError, match=rf"catalog/platform.yaml: {key}\[{len(good)}\]: {owner} "
                                                 rf"'no[-_]such[-_]\w+' is not in"):
        _build_with(monkeypatch, key, [*good, row], build)
    # the near miss: the same table without the bad row builds, row for row
    assert len(_build_with(monkeypatch, key, good, build)) == len(good)


def test_one_text_twice_in_a_table_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    good = [dict(r) for r in tables._document("platform.yaml")["platform_words"]]
    with pytest.raises(CatalogTableError, match=rf"platform_words\[{len(good)}\]: duplicate text"):
        _build_with(monkeypatch, "platform_words", [*good, dict(good[0])], tables.platform_words)


def test_a_power_event_is_one_row_by_its_sensor_and_its_words(monkeypatch: pytest.MonkeyPatch) -> None:
    good = [dict(r) for r in tables._document("platform.yaml")["ipmi_power_events"]]
    twin = dict(good[0])
    with pytest.raises(CatalogTableError, match=rf"ipmi_power_events\[{len(good)}\]: duplicate sensor and text"):
        _build_with(monkeypatch, "ipmi_power_events", [*good, twin], tables.ipmi_power_events)
    # the same words under the other sensor are another row
    flip = {"Power Supply": "Power Unit", "Power Unit": "Power Supply"}
    have = {(r["sensor"], r["text"]) for r in good}
    other = next({**r, "sensor": flip[r["sensor"]]} for r in good if (flip[r["sensor"]], r["text"]) not in have)
    assert len(_build_with(monkeypatch, "ipmi_power_events", [*good, other], tables.ipmi_power_events)) == len(good) + 1
