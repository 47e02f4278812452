"""Windows' WSAEADDRNOTAVAIL is EADDRNOTAVAIL, the job's set-up (catalog/exceptions.yaml `windows_errors`, setup91).

A socket error on Windows carries a Winsock code and FormatMessage's text, not an errno; the `windows_errors` table
maps each code to the errno it stands for (CPython's PC/errmap.h: 10049 -> EADDRNOTAVAIL) and the `errnos` table
decides its side. An address the host cannot use for the socket is the job's set-up; a refusal (10061,
WSAECONNREFUSED) stays the peer's.

Lines: SystemPanic/vllm-windows#19 (c10d's client on Windows dialling `host.docker.internal`); the `[WinError N]`
line and the near-miss ours, Python's OSError format and c10d's (socket.cpp `(system error: N - text)`) with
WSAECONNREFUSED's text.
"""

from __future__ import annotations

from firstfault.analysis.analyze import Analyzer
from firstfault.catalog.tables import windows_error_table
from firstfault.extract.codes import errno_of
from tests.conftest import BundleMaker
from tests.extract.test_loopback_span import _workload

# SystemPanic/vllm-windows#19
_C10D_10049 = ("[W812 11:56:08.000000000 socket.cpp:755] [c10d] The client socket has failed to connect to "
               "[host.docker.internal]:12594 (system error: 10049 - The requested address is not valid in its "
               "context.).\n")
# ours: c10d's format with WSAECONNREFUSED (a peer not listening)
_C10D_10061 = ("[W812 11:56:08.000000000 socket.cpp:755] [c10d] The client socket has failed to connect to "
               "[10.0.0.5]:12594 (system error: 10061 - No connection could be made because the target machine "
               "actively refused it.).\n")


def test_the_row() -> None:
    row = windows_error_table()[10049]
    assert row.name == "WSAEADDRNOTAVAIL" and row.errno == "EADDRNOTAVAIL"
    assert errno_of("OSError: [WinError 10049] The requested address is not valid in its context") == "EADDRNOTAVAIL"


def test_c10d_on_windows_dialling_an_address_it_cannot_use_is_the_setup(make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle({"app/train.log": _C10D_10049}, _workload())))
    assert v.root_cause is not None and v.root_cause.category == "app.exception.setup"


def test_a_refusal_on_windows_is_not_the_setup(make_bundle: BundleMaker) -> None:
    v = Analyzer().analyze_path(str(make_bundle({"app/train.log": _C10D_10061}, _workload())))
    assert v.root_cause is None or v.root_cause.category != "app.exception.setup"
