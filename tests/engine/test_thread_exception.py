"""An exception that ended a thread of the workload, not its process (extract/traceback.py `_THREAD_HEADER`,
`_THREAD_ENTRY`; analysis/analyze.py).

Python prints a thread's uncaught exception through threading's excepthook (`Exception in thread X:`, then the
thread's traceback, whose outermost frame is the standard library's `Thread._bootstrap_inner`), and the process goes
on. Such an exception is a cause only in an attempt that failed (the lab's `thread_exception`: the main thread waited
for the dead one and the peers timed out); in a run whose end is not shown, or that completed, it names none. The
header may be missing from a posted excerpt: the bootstrap frame says the same.
"""

from __future__ import annotations

from firstfault.analysis.analyze import analyze
from tests.conftest import BundleMaker, workload_ending
from tests.extract.helpers import events

# tensorflow/tensorflow#30869 (https://github.com/tensorflow/tensorflow/issues/30869): TF 1.14's TPU preemption
# watcher dies on a None cluster resolver; the reporter says training goes on. The posted block starts at `Traceback`.
WATCHER = (
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.6/threading.py", line 916, in _bootstrap_inner\n'
    "    self.run()\n"
    '  File "/app/t2t/py-pkg/tensorflow/python/tpu/preempted_hook.py", line 86, in run\n'
    "    response = self._cluster._fetch_cloud_tpu_metadata()  # pylint: disable=protected-access\n"
    "AttributeError: 'NoneType' object has no attribute '_fetch_cloud_tpu_metadata'\n"
)
# The same exception raised in the main thread (constructed: the watcher's frame called from the script)
MAIN = (
    "Traceback (most recent call last):\n"
    '  File "t2t_trainer.py", line 40, in <module>\n'
    "    main()\n"
    '  File "/app/t2t/py-pkg/tensorflow/python/tpu/preempted_hook.py", line 86, in run\n'
    "    response = self._cluster._fetch_cloud_tpu_metadata()  # pylint: disable=protected-access\n"
    "AttributeError: 'NoneType' object has no attribute '_fetch_cloud_tpu_metadata'\n"
)


def test_the_bootstrap_frame_marks_a_threads_exception_without_its_header() -> None:
    (exc,) = [e for e in events(WATCHER.splitlines()) if e.kind == "app.exception"]
    assert exc.fields.get("thread") is True
    (main,) = [e for e in events(MAIN.splitlines()) if e.kind == "app.exception"]
    assert "thread" not in main.fields  # near miss: the main thread's traceback


def test_a_threads_exception_in_a_run_whose_end_is_not_shown_names_no_cause(make_bundle: BundleMaker) -> None:
    v = analyze(str(make_bundle({"app/rank-2.log": WATCHER}, workload_ending(None))))
    assert v.root_cause is None and not v.candidates
    # with its header the same
    v = analyze(str(make_bundle({"app/rank-2.log": "Exception in thread Thread-7:\n" + WATCHER},
                                workload_ending(None), name="h")))
    assert v.root_cause is None and not v.candidates


def test_a_threads_exception_in_a_failed_run_is_its_cause(make_bundle: BundleMaker) -> None:
    v = analyze(str(make_bundle({"app/rank-2.log": WATCHER}, workload_ending("FAILED"))))
    assert v.root_cause is not None and v.root_cause.category == "app.exception"
    assert v.root_cause.nodes == ["node-02"]


def test_the_main_threads_exception_in_a_run_whose_end_is_not_shown_still_names_it(make_bundle: BundleMaker) -> None:
    # near miss: a traceback that is no thread's is read as before, whatever the end
    v = analyze(str(make_bundle({"app/rank-2.log": MAIN}, workload_ending(None))))
    assert v.root_cause is not None and v.root_cause.category == "app.exception"
