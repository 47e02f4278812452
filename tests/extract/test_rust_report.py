"""A Rust program's error report as one more language of the traceback model (extract/traceback.py `LANGUAGES`,
`rust-report`: `Error: <outer>`, `Caused by:`, the chain), and Windows' system error codes read by the errno readers
(catalog/exceptions.yaml `windows_errors`).

Every verdict test runs a small bundle through the real extractors and engine. The report's format is learnt from
anyhow's src/fmt.rs (`Caused by:`, then `    <cause>` for one cause, `{: >5}: <cause>` numbered for more, then
`Stack backtrace:`), eyre's default handler (eyre/src/lib.rs: the same, then `Location:`) and color-eyre's
(color-eyre/src/handler.rs, writers.rs: `Error:` alone, the whole chain numbered under it, `Location:`, `Backtrace
omitted. ...`). Lines marked "written here" are ours, in the form those sources print; the others carry their source.
"""

from __future__ import annotations

from pathlib import Path

from firstfault.catalog.tables import windows_error_table
from firstfault.extract.codes import errno_of, storage_strerror_rx
from tests.extract import helpers
from tests.extract.test_languages import ALL, cause, verdict


def drafts(text: str) -> list[tuple[str, bool, bool]]:
    return [(d.kind, d.fields.get("terminal") is True, d.fields.get("report") is True)
            for d in helpers.scan(ALL, text.splitlines(), "application")]


# written here: anyhow's numbered chain (a TGI-like router writing a shard), the deepest cause ENOSPC
ANYHOW_ENOSPC = """2026-12-03T15:10:00Z INFO text_generation_launcher: Downloading weights
Error: failed to save the converted weights

Caused by:
    0: failed to write /data/models/llama/model-00002.safetensors
    1: No space left on device (os error 28)
"""


def test_anyhow_chain_deepest_storage_errno_decides(tmp_path: Path) -> None:
    v = verdict(tmp_path, ANYHOW_ENOSPC)
    assert cause(v) == ("storage.filesystem", ["node-a"])
    assert v.root_cause is not None and "error report" in (v.root_cause.why or "")
    assert v.evidence[0].line == 6
    assert ("storage.error", True, True) in drafts(ANYHOW_ENOSPC)


# eyre/src/lib.rs and anyhow's README.md (their own example report): one cause, unnumbered
EYRE_DOC = """Error: Failed to read instrs from ./path/to/instrs.json

Caused by:
    No such file or directory (os error 2)
"""


def test_single_unnumbered_cause_is_read_with_its_outer_context() -> None:
    got = helpers.scan(ALL, EYRE_DOC.splitlines(), "application")
    last = [d for d in got if d.fields.get("report") is True][-1]
    assert last.kind == "app.exception"
    assert last.fields["message"] == ("Failed to read instrs from ./path/to/instrs.json: "
                                      "No such file or directory (os error 2)")


# written here: reqwest's chain under anyhow, a router whose shard's socket refused it (a peer gone: a symptom)
ANYHOW_REFUSED = """Error: failed to reach the shard at http://127.0.0.1:8081/health

Caused by:
    0: error sending request for url (http://127.0.0.1:8081/health)
    1: client error (Connect)
    2: tcp connect error: Connection refused (os error 111)
"""


def test_connection_refused_in_the_chain_is_a_peer_symptom_not_a_cause(tmp_path: Path) -> None:
    v = verdict(tmp_path, ANYHOW_REFUSED)
    assert v.root_cause is None
    assert drafts(ANYHOW_REFUSED)[-1] == ("nccl.remote_error", True, True)


# written here: candle's CUDA driver error under anyhow's context, and color-eyre's form (the chain numbered under a
# bare `Error:`, then its Location and backtrace notice) with a CUDA runtime error
CANDLE_OOM = """Error: failed to load the model weights

Caused by:
    0: loading shard 2
    1: DriverError(CUDA_ERROR_OUT_OF_MEMORY, "out of memory")
"""
COLOR_EYRE_CUDA = """Error:
   0: Failed to run the forward pass
   1: CUDA error: an illegal memory access was encountered

Location:
   src/main.rs:10:5

Backtrace omitted. Run with RUST_BACKTRACE=1 environment variable to display it.
Run with RUST_BACKTRACE=full to include source snippets.
"""


def test_cuda_words_in_the_chain(tmp_path: Path) -> None:
    assert cause(verdict(tmp_path / "a", CANDLE_OOM)) == ("app.cuda_oom", ["node-a"])
    assert cause(verdict(tmp_path / "b", COLOR_EYRE_CUDA)) == ("app.illegal_access", ["node-a"])


# written here: anyhow's report with RUST_BACKTRACE=1: the frames after `Stack backtrace:` name `anyhow::Error`, and
# are no causes
ANYHOW_BACKTRACE = """Error: failed to write checkpoint

Caused by:
    No space left on device (os error 28)

Stack backtrace:
   0: anyhow::error::<impl anyhow::Error>::msg
             at /cargo/registry/src/index.crates.io-6f17d22bba15001f/anyhow-1.0.75/src/error.rs:83:36
   1: trainer::save::{{closure}}: Error
"""


def test_backtrace_after_the_chain_is_no_cause(tmp_path: Path) -> None:
    assert cause(verdict(tmp_path, ANYHOW_BACKTRACE)) == ("storage.filesystem", ["node-a"])
    assert [k for k in drafts(ANYHOW_BACKTRACE) if k[2]] == [("app.exception", True, True),
                                                            ("storage.error", True, True)]


# written here: a report whose cause is the job's own bad argument (clap's validation under anyhow's context)
BAD_ARGUMENT = """Error: invalid launcher arguments

Caused by:
    `max_input_tokens` must be < `max_total_tokens`
"""


def test_a_report_about_the_jobs_own_argument_stays_app_exception(tmp_path: Path) -> None:
    v = verdict(tmp_path, BAD_ARGUMENT)
    assert cause(v) == ("app.exception", ["node-a"])
    assert v.root_cause is not None and "error report" in (v.root_cause.why or "")


# --------------------------------------------------------------------------
# near misses
# --------------------------------------------------------------------------

def test_a_bare_error_line_is_no_report() -> None:
    # written here: a command-line tool's last line, no chain after it (as lone_exception leaves `Error: ...`)
    assert drafts("Error: no such model: llama-9000\n") == []


def test_error_words_in_an_info_log_are_no_report() -> None:
    # written here: a program's own INFO records that hold `Error:` and `Caused by:` after its logger's words
    text = ("2026-12-03T15:10:00Z INFO router: Error: 0 of 12 health checks failed\n"
            "2026-12-03T15:10:01Z INFO router: Caused by:\n"
            "2026-12-03T15:10:02Z INFO router: retrying in 5s (os error 111)\n")
    assert not any(report for _, _, report in drafts(text))


def test_javas_caused_by_keeps_its_own_reading() -> None:
    # the JVM launcher's two lines for a main class it cannot load (Java's `Caused by: <class>: msg` is read as an
    # exception spelled after other words, extract/traceback.py spelled_exception): no Rust report
    text = ("Error: Could not find or load main class org.example.Train\n"
            "Caused by: java.lang.ClassNotFoundException: org.example.Train\n")
    got = helpers.scan(ALL, text.splitlines(), "application")
    assert [d.fields.get("exc_type") for d in got] == ["ClassNotFoundException"]
    assert not any(d.fields.get("report") for d in got)


def test_caused_by_far_after_the_error_line_opens_no_chain() -> None:
    # written here: an `Error:` line, then other output, then a `Caused by:` of something else
    text = "Error: no such model\nline\nline\nline\nline\nCaused by:\n    No space left on device (os error 28)\n"
    assert not any(report for _, _, report in drafts(text))


# --------------------------------------------------------------------------
# Windows' system error codes
# --------------------------------------------------------------------------

def test_windows_codes_are_read_by_the_errno_readers() -> None:
    # the texts FormatMessage gives (catalog/exceptions.yaml cites Microsoft's System Error Codes pages)
    assert errno_of("There is not enough space on the disk. (os error 112)") == "ENOSPC"
    assert errno_of("OSError: [WinError 112] There is not enough space on the disk") == "ENOSPC"
    assert errno_of("PermissionError: [WinError 5] Access is denied: 'C:\\\\ckpt'") == "EACCES"
    assert errno_of("[WinError 10061] No connection could be made because the target machine actively refused it"
                    ) == "ECONNREFUSED"
    assert errno_of("An existing connection was forcibly closed by the remote host. (os error 10054)") == "ECONNRESET"
    m = storage_strerror_rx().search("Error: failed to write shard: The disk is full. (os error 39)")
    assert m is not None and errno_of(m.group("text")) == "ENOSPC"


def test_a_number_after_os_error_alone_is_the_hosts_errno() -> None:
    # near miss: on Linux `(os error 112)` is EHOSTDOWN (its strerror says so); the number never reads as Windows'
    assert errno_of("Host is down (os error 112)") == "EHOSTDOWN"
    assert errno_of("[WinError 999999] something") is None


def test_windows_table_rows() -> None:
    table = windows_error_table()
    assert table[112].name == "ERROR_DISK_FULL" and table[112].errno == "ENOSPC"
    assert {39, 112, 19, 5, 2, 3, 8, 14, 23, 1117, 64, 121, 1295, 10061, 10054, 10060} <= set(table)


# written here: a Rust tool on a Windows node (Rust's io::Error prints the text FormatMessage gives), and Python's
WIN_RUST = "Error: There is not enough space on the disk. (os error 112)\n"
WIN_PYTHON = "OSError: [WinError 112] There is not enough space on the disk\n"


def test_windows_disk_full_lines(tmp_path: Path) -> None:
    assert cause(verdict(tmp_path / "a", WIN_RUST)) == ("storage.filesystem", ["node-a"])
    assert cause(verdict(tmp_path / "b", WIN_PYTHON)) == ("storage.filesystem", ["node-a"])


# --------------------------------------------------------------------------
# std's io::Error in its Debug form: `main` returning an io::Result prints it with no chain
# --------------------------------------------------------------------------
# written here, in the form library/std/src/io/error.rs's Debug prints (`Os { code, kind, message }`, `Custom { kind,
# error }`); the Windows one with the text FormatMessage gives for code 112
STD_ENOSPC = 'Error: Os { code: 28, kind: StorageFull, message: "No space left on device" }\n'
STD_WIN_FULL = 'Error: Os { code: 112, kind: StorageFull, message: "There is not enough space on the disk." }\n'
STD_CUSTOM = 'Error: Custom { kind: Other, error: "model config is missing field `hidden_size`" }\n'


def test_std_io_error_debug_form_is_a_report_by_itself(tmp_path: Path) -> None:
    assert cause(verdict(tmp_path / "a", STD_ENOSPC)) == ("storage.filesystem", ["node-a"])
    assert cause(verdict(tmp_path / "b", STD_WIN_FULL)) == ("storage.filesystem", ["node-a"])
    assert cause(verdict(tmp_path / "c", STD_CUSTOM)) == ("app.exception", ["node-a"])
    assert drafts(STD_ENOSPC) == [("storage.error", True, True)]


def test_another_structs_debug_form_is_no_report() -> None:
    # near miss, written here: a program's own error type in Debug form says nothing the readers know
    assert drafts('Error: Config { path: "/etc/router.toml", line: 3 }\n') == []
