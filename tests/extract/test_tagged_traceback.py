"""A traceback whose every line carries a wrapper's tag that no prefix layer knows (extract/traceback.py).

A workflow engine, a process multiplexer or a logger may write its own text before each line of a
process's output: the text before the `Traceback` header is that writer's tag, and the later lines that
start with the same tag (their clock aside) are its traceback's frames and final line. Each positive case
below is real output quoted from public material (provenance above each); the near misses are the forms
where the text before the header is a logger's message and the traceback's other lines are bare: they read
exactly as before.
"""

from __future__ import annotations

from firstfault.extract import nccl
from firstfault.extract import traceback as tb
from firstfault.extract.base import LineContext, LineExtractor
from tests.extract import helpers

ALL: tuple[LineExtractor, ...] = (*nccl.EXTRACTORS, *helpers.APPLICATION)

# Metaflow (`python flow.py run`), two foreach tasks failing at once: each line behind the run/step/task and pid
# tag, the two tasks' tracebacks interleaved. Public file (a course's week-4 RAG flow, `OptimizeRagParams`), the
# search index's id 31495200053; lines cut to the frames shown, the final line of task 8 as printed.
METAFLOW = [
    "2024-08-04 20:06:05.627 [1722801944329017/optimize/8 (pid 19493)] <flow OptimizeRagParams step optimize[5] "
    "(input: DotMap(embedding='th...)> failed:",
    "2024-08-04 20:06:05.628 [1722801944329017/optimize/8 (pid 19493)] Internal error",
    "2024-08-04 20:06:05.629 [1722801944329017/optimize/8 (pid 19493)] Traceback (most recent call last):",
    "2024-08-04 20:06:05.629 [1722801944329017/optimize/8 (pid 19493)] File "
    "\"/usr/local/lib/python3.10/site-packages/metaflow/cli.py\", line 1126, in main",
    "2024-08-04 20:06:05.803 [1722801944329017/optimize/9 (pid 19494)] Traceback (most recent call last):",
    "2024-08-04 20:06:05.803 [1722801944329017/optimize/9 (pid 19494)] File "
    "\"/usr/local/lib/python3.10/site-packages/metaflow/cli.py\", line 1126, in main",
    "2024-08-04 20:06:05.636 [1722801944329017/optimize/8 (pid 19493)] File "
    "\"/workspaces/data-centric-deep-learning/course/week4/scripts/optimize_params.py\", line 128, in optimize",
    "2024-08-04 20:06:05.637 [1722801944329017/optimize/8 (pid 19493)] TypeError: retrieve_documents() got an "
    "unexpected keyword argument 'hyde_embeddings'",
    "2024-08-04 20:06:05.810 [1722801944329017/optimize/9 (pid 19494)] File "
    "\"/workspaces/data-centric-deep-learning/course/week4/scripts/optimize_params.py\", line 128, in optimize",
    "2024-08-04 20:06:05.811 [1722801944329017/optimize/9 (pid 19494)] TypeError: retrieve_documents() got an "
    "unexpected keyword argument 'hyde_embeddings'",
]

# Metaflow on a p3.16xlarge: torch.save out of disk (Netflix/metaflow-tutorials dolly thread as quoted in
# tests/wild/st-dolly-3b-torch-save-enospc-p3-16xlarge-metaflow-139, PROVENANCE.md there).
METAFLOW_ENOSPC = [
    "2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c561ee-a44c-4795-967c-7183a83b3160] Traceback (most "
    "recent call last):",
    "2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c561ee-a44c-4795-967c-7183a83b3160]   File "
    "\"/opt/conda/lib/python3.7/site-packages/torch/serialization.py\", line 379, in save",
    "2023-04-29 06:01:12.977 [177/train/578 (pid 28936)] [09c561ee-a44c-4795-967c-7183a83b3160] OSError: "
    "[Errno 28] No space left on device",
]

# A process multiplexer (npm `concurrently`, a Next.js and a Flask dev server) that tags each child's lines
# `[N] `: the Flask child's traceback at Ctrl-C. Public file, the search index's id 9980280571.
CONCURRENTLY = [
    "[1] Exception ignored in: <function Popen.__del__ at 0x10a08fa60>",
    "[1] Traceback (most recent call last):",
    "[1]   File \"/usr/local/Cellar/python@3.11/3.11.3/Frameworks/Python.framework/Versions/3.11/lib/python3.11/"
    "subprocess.py\", line 1125, in __del__",
    "[1]     _warn(\"subprocess %s is still running\" % self.pid,",
    "[1] KeyboardInterrupt: ",
]

# A logging helper's excepthook that logs each line of the traceback as a record of its own, numbered
# (`traceback-000: ` ...). Public README (package `logdemo`), the search index's id 36685019776.
NUMBERED = [
    "2023-04-11T20:06:59+0000 - logdemo - CRITICAL - uncaught exception: RuntimeError; What the heck?!",
    "2023-04-11T20:06:59+0000 - logdemo - CRITICAL - traceback-000: Traceback (most recent call last):",
    "2023-04-11T20:06:59+0000 - logdemo - CRITICAL - traceback-001:   File \"<frozen runpy>\", line 198, in "
    "_run_module_as_main",
    "2023-04-11T20:06:59+0000 - logdemo - CRITICAL - traceback-007:   File \"/app/logdemo/other/funcs.py\", line "
    "10, in whatsit",
    "2023-04-11T20:06:59+0000 - logdemo - CRITICAL - traceback-008:     raise RuntimeError(\"What the heck?!\")",
    "2023-04-11T20:06:59+0000 - logdemo - CRITICAL - traceback-009: RuntimeError: What the heck?!",
]

# Near misses: a logger's record whose message is the header, then the traceback's lines bare.
# Horizon's HAT trainer (public file, the search index's id 62173263774), two ranks one after the other.
HAT = [
    "2026-07-16 10:02:41,431 ERROR [ddp_trainer.py:463] Node[0] Traceback (most recent call last):",
    "  File \"/usr/local/lib/python3.10/dist-packages/hat/engine/ddp_trainer.py\", line 457, in _with_exception",
    "    fn(*args)",
    "  File \"/usr/local/lib/python3.10/dist-packages/hat/utils/checkpoint.py\", line 420, in load_state_dict",
    "    raise ValueError(\"set allow_miss=True to skip this check\")",
    "ValueError: set allow_miss=True to skip this check",
    "",
    "2026-07-16 10:02:41,432 ERROR [ddp_trainer.py:463] Node[1] Traceback (most recent call last):",
    "  File \"/usr/local/lib/python3.10/dist-packages/hat/engine/ddp_trainer.py\", line 457, in _with_exception",
    "    fn(*args)",
    "  File \"/usr/local/lib/python3.10/dist-packages/hat/utils/checkpoint.py\", line 420, in load_state_dict",
    "    raise ValueError(\"set allow_miss=True to skip this check\")",
    "ValueError: set allow_miss=True to skip this check",
]
def _read(lines: list[str]) -> list[tuple[str, str]]:
    return [(d.kind, str(d.fields.get("exc_type") or d.fields.get("detail") or "")) for d in
            helpers.scan(ALL, lines, "application")]


def test_a_tagged_traceback_closes_on_its_own_final_line() -> None:
    # Its errno decides as in a bare traceback: the file system's (rules/storage-filesystem.yaml).
    drafts = helpers.scan(ALL, METAFLOW_ENOSPC, "application")
    assert [(d.kind, d.fields.get("errno")) for d in drafts] == [("storage.error", "ENOSPC")]


def test_interleaved_writers_each_close_their_own_traceback() -> None:
    assert _read(METAFLOW) == [("app.exception", "TypeError")] * 2
    # Each with its own frames: task 9's header and frame, between task 8's, are not task 8's.
    model = tb.TracebackModel()
    state: dict[str, object] = {}
    closed = []
    for n, line in enumerate(METAFLOW, 1):
        c = model.feed(line, None, LineContext("application", "job.out", n, None, None, None, state))
        if c is not None:
            closed.append((n, len(c.frames), c.text))
    assert [(n, frames) for n, frames, _ in closed] == [(8, 2), (10, 2)]
    assert all(text.startswith("TypeError: ") for _, _, text in closed)


def test_a_multiplexers_child_tag_is_read_off() -> None:
    # Ctrl-C in the child: KeyboardInterrupt reads as the signal it is (extract/traceback.py `_signal`).
    assert _read(CONCURRENTLY) == [("process.signal", "KeyboardInterrupt")]


def test_a_tag_that_numbers_each_line_is_one_writer() -> None:
    assert _read(NUMBERED) == [("app.exception", "RuntimeError")]


def test_bare_frames_after_a_loggers_header_read_as_before() -> None:
    assert _read(HAT) == [("app.exception", "ValueError")] * 2


def test_a_later_line_of_the_same_tag_closes_nothing() -> None:
    # After its final line the writer's ordinary lines (an error word in them) are not a traceback's.
    later = [*METAFLOW_ENOSPC,
             "2023-04-29 06:01:13.101 [177/train/578 (pid 28936)] [09c561ee-a44c-4795-967c-7183a83b3160] Task "
             "failed."]
    assert _read(later) == _read(METAFLOW_ENOSPC)


def test_the_tags_remembered_are_bounded() -> None:
    model = tb.TracebackModel()
    state: dict[str, object] = {}
    for n in range(3 * tb.MAX_LEADS):
        ctx = LineContext("application", "job.out", n + 1, None, None, None, state)
        model.feed(f"[task {n}] Traceback (most recent call last):", None, ctx)
    assert len(model.leads[None]) == tb.MAX_LEADS
    # A header behind more than MAX_LEAD characters is read as before (no tag).
    ctx = LineContext("application", "job.out", 999, None, None, None, state)
    model.feed("x" * (tb.MAX_LEAD + 1) + " Traceback (most recent call last):", "w", ctx)
    assert "w" not in model.leads


def test_a_loggers_later_lines_are_read_after_its_bare_traceback_closed() -> None:
    # After HAT's first traceback (its frames bare) closed, the logger's next record with the same tag is a
    # record, not a frame of a traceback left open by the tag.
    lines = [*HAT[:6], HAT[7].replace("Node[1]", "Node[0]"), *HAT[8:]]
    model = tb.TracebackModel()
    state: dict[str, object] = {}
    for n, line in enumerate(lines, 1):
        model.feed(line, None, LineContext("application", "job.out", n, None, None, None, state))
    assert all(st.opened is None for st in model.streams.values())
