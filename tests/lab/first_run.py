"""Lab faults whose verdict was wrong on their first run, before any change to firstfault (issue 25).

Each entry names what the verdict got wrong and the lines that should have decided it. The expectation
stays the fault's own (lab/faults.py); the tests mark these runs as expected failures, strictly for the
captured runs (tests/lab/captured/: the same bytes every time, so a fix makes them pass and the entry must
go) and leniently for the fresh runs of test_lab.py (a fresh run's output may differ in timing and order).
Owners of extractors and rules: remove an entry once its fault passes.
"""

from __future__ import annotations

WRONG: dict[str, str] = {}


# Faults whose verdict is right (`unknown`) but whose first run gave no lead, or another, than the one the
# fault decides (tests/lab/test_captured.py's LEADS): strict expected failures of the lead test.
LEADS_WRONG: dict[str, str] = {
}
