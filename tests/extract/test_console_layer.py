"""A log console's row copied as text (extract/prefix.py `_CONSOLE`): Google Cloud's Logs Explorer puts the entry's
time in the viewer's zone, to the millisecond, and the zone's abbreviation glued to the payload; the layer is peeled
so the line is read as its program wrote it (an exception's type is not `EDTValueError`).

Provenance: the stamps and payloads of GoogleCloudPlatform/container-engine-accelerators#237 (`EDT`) and #382 (`GET`,
Georgia's zone: wget's own `17:59:39` in the same paste is four hours behind); the exception lines are this test's.
"""

from __future__ import annotations

import pytest

from firstfault.extract.prefix import _CONSOLE_ZONES, split_prefixes
from tests.extract import helpers


@pytest.mark.parametrize(("line", "body"), [
    ("2022-05-20 06:14:58.902 EDTfailed to verify GPU driver installation: failed to verify GPU driver installation: "
     "exit status 255", "failed to verify GPU driver installation: failed to verify GPU driver installation: exit "
     "status 255"),
    ("2024-05-31 21:59:39.905 GETThe requested driver does not exist. Please check that the NVIDIA_DRIVER_VERSION "
     "variable passed into the daemonset is correct", "The requested driver does not exist. Please check that the "
     "NVIDIA_DRIVER_VERSION variable passed into the daemonset is correct"),
    # the same row's wget line, its own stamp behind the console's
    ("2024-05-31 21:59:39.904 GET2024-05-31 17:59:39 ERROR 404: Not Found.",
     "2024-05-31 17:59:39 ERROR 404: Not Found."),
    # a zone the console names by its offset, and a four-letter one before a capital (the longer zone first)
    ("2024-05-31 21:59:39.905 GMT+4ValueError: bad shape", "ValueError: bad shape"),
    ("2024-05-31 21:59:39.905 CESTValueError: bad shape", "ValueError: bad shape"),
])
def test_a_console_row_is_read_as_its_program_wrote_it(line: str, body: str) -> None:
    assert split_prefixes(line).body == body


@pytest.mark.parametrize("zone", _CONSOLE_ZONES)
def test_each_zone_glued_to_an_exception(zone: str) -> None:
    line = f"2022-05-20 06:14:58.902 {zone}ValueError: expected 4 dims but got 3"
    got = [e.fields.get("exc_type") for e in helpers.events([line], "application", node="n1")
           if e.kind == "app.exception"]
    assert got == ["ValueError"]


@pytest.mark.parametrize("line", [
    # an access log's method with its space: the line's own word (a web server's format)
    "2024-05-31 21:59:39.905 GET /api/v1/models 200",
    # a logger's level after the same stamp (Python logging's default with msecs)
    "2024-05-31 21:59:39.905 INFO starting",
    # no milliseconds, or a word no zone starts (`ERROR`, `WARN`)
    "2024-05-31 21:59:39 EDTfailed to verify",
    "2024-05-31 21:59:39.905 ERRORfailed",
    # a capitalised word a zone begins (a connection state, a word in capitals)
    "2024-05-31 21:59:39.905 ESTABLISHED 10.0.0.7:443",
])
def test_near_misses_stay(line: str) -> None:
    assert split_prefixes(line).body == line
