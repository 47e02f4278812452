"""An exception spelled elsewhere in a line than at its head (extract/traceback.py `spelled_exception`).

After a logger's or a person's own words, in repr form, inside a framework's wrapper that names the exception it
carries, as a class repr, as Rust's panic, as gRPC's status line: the exception is read as a lone uncaught
exception line is (the traceback model's `classify`, through the exception, errno, status and object-store
tables) and marked `terminal` (the engine takes it only as its stream's last word of a failed attempt, and only
where nothing read from fuller evidence stands: tests/engine/test_terminal_lines.py). Every line here is real
(its thread in the comment above it); the near misses are real lines too, except those whose comment says they
were written here (in the form the comment names).
"""

from __future__ import annotations

import pytest

from firstfault.extract import nccl
from firstfault.extract import traceback as tb
from firstfault.extract.base import LineExtractor
from firstfault.extract.memo import fastpath
from tests.extract import helpers

ALL: tuple[LineExtractor, ...] = (*nccl.EXTRACTORS, *helpers.APPLICATION)

# (line, the class read, the event kind, fields the event must hold)
SPELLED: list[tuple[str, str, str, dict[str, object]]] = [
    # pymedusa/Medusa#2358 (https://github.com/pymedusa/Medusa/issues/2358): a logger's line, the exception in repr
    # form with its errno and strerror
    ("2017-03-06 22:59:35 ERROR    Thread-19 :: [134f473] Failed creating /media/extssd/Shows/Top Gear/Season 24/ : "
     "OSError(28, 'No space left on device')", "OSError", "storage.error", {"errno": "ENOSPC"}),
    # hiyouga/EasyR1#193 (https://github.com/hiyouga/EasyR1/issues/193), its title: Ray's wrapper names the task's
    # exception, after the reporter's own word
    ("bug: ray.exceptions.RayTaskError(AssertionError): ray::Runner.run()", "AssertionError", "app.exception",
     {"exc_type": "AssertionError"}),
    # vllm-project/vllm#19113 (https://github.com/vllm-project/vllm/pull/19113): pytest's `E` column before Ray's
    # wrapper (cut where the excerpt is)
    ("E                       ray.exceptions.RayTaskError(ValueError): ray::EngineTestActor.run() (pid=137002, "
     "ip=10.0.167.199, actor_id=1a7369ad99cc9b077daaf3021e000000, repr=<test_ray_metrics.EngineTestActor object at "
     "0x7950a63aa", "ValueError", "app.exception", {"exc_type": "ValueError"}),
    # sparklyr/sparklyr#1390 (https://github.com/sparklyr/sparklyr/issues/1390): Spark's driver log, the job's
    # SparkException after the logger's words, the executor's IOException and its first frame on the same line
    ("18/04/04 04:37:45 ERROR TaskSetManager: Task 0 in stage 762.0 failed 4 times; aborting job "
     "org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 762.0 failed 4 times, most "
     "recent failure: Lost task 0.3 in stage 762.0 (TID 75788, 172.16.1.11, executor 0): java.io.IOException: No "
     "space left on device at java.io.FileOutputStream.writeBytes(Native Method)", "SparkException", "storage.error",
     {"errno": "ENOSPC"}),
    # arlicle/panda-api#7 (https://github.com/arlicle/panda-api/issues/7): Rust's panic on an io::Error
    ("thread '<unnamed>' panicked at 'called `Result::unwrap()` on an `Err` value: Io(Os { code: 28, kind: Other, "
     "message: \"No space left on device\" })', src/libcore/result.rs:1188:5", tb.PANIC_CLASS, "storage.error",
     {"errno": "ENOSPC"}),
    # rustic-rs/rustic#564 (https://github.com/rustic-rs/rustic/issues/564)
    ("thread '<unnamed>' panicked at 'called `Result::unwrap()` on an `Err` value: No space left on device (os error "
     "28)', src/commands/restore.rs:390:68", tb.PANIC_CLASS, "storage.error", {"errno": "ENOSPC"}),
    # yewstack/yew#218 (https://github.com/yewstack/yew/issues/218), indented as the reporter posted it
    ("    thread 'main' panicked at 'called `Result::unwrap()` on an `Err` value: Io(Os { code: 28, kind: Other, "
     "message: \"No space left on device\" })', libcore/result.rs:945:5", tb.PANIC_CLASS, "storage.error",
     {"errno": "ENOSPC"}),
    # wilhelm-lab/oktoberfest#56 (https://github.com/wilhelm-lab/oktoberfest/issues/56): gRPC's status on the line
    # under its error: the server could not be reached, another's failure
    ("\tstatus = StatusCode.UNAVAILABLE", tb.GRPC_STATUS_CLASS, "nccl.remote_error", {}),
]


@pytest.mark.parametrize(("line", "cls", "kind", "fields"), SPELLED)
def test_an_exception_spelled_in_a_line_is_read_as_its_last_line_would_be(
        line: str, cls: str, kind: str, fields: dict[str, object]) -> None:
    exc = tb.spelled_exception(line)
    assert exc is not None and exc.cls == cls
    drafts = helpers.scan(ALL, [line], "application")
    assert [d.kind for d in drafts] == [kind]
    assert drafts[0].fields.get("terminal") is True
    for k, v in fields.items():
        assert drafts[0].fields.get(k) == v, k


def test_the_same_words_read_the_same_way_as_the_exceptions_own_line() -> None:
    # the spelling and the class's own line (a traceback's last) give one reading: the model's, through its tables
    for line, own in [
        ("bug: ray.exceptions.RayTaskError(AssertionError): ray::Runner.run()", "AssertionError: ray::Runner.run()"),
        ("2017-03-06 22:59:35 ERROR    Thread-19 :: [134f473] Failed creating /media/extssd/Shows/Top Gear/Season 24/"
         " : OSError(28, 'No space left on device')", "OSError: 28, 'No space left on device'"),
    ]:
        spelled = helpers.scan(ALL, [line], "application")
        lone = helpers.scan(ALL, [own], "application")
        assert [d.kind for d in spelled] == [d.kind for d in lone]
        assert spelled[0].fields.get("exc_type") == lone[0].fields.get("exc_type")
        assert spelled[0].fields.get("errno") == lone[0].fields.get("errno")


def test_a_quoted_exception_ends_where_its_quote_does() -> None:
    # torchelastic's error file, logged by its error handler (pytorch/pytorch#79388's form, as JSON prints it)
    exc = tb.spelled_exception('    "message": "RendezvousClosedError: ",')
    assert exc is not None and exc.cls == "RendezvousClosedError" and exc.msg == ""
    # a class repr (urule99/jsunpack-n#24, https://github.com/urule99/jsunpack-n/issues/24: Python 2's `<type '...'>`)
    exc = tb.spelled_exception("<type 'exceptions.OSError'>: [Errno 28] No space left on device: "
                               "'/storage/b745/1d22f64041dd66e20e4a8d81baadc189c62/'")
    assert exc is not None and exc.cls == "OSError" and exc.msg.startswith("[Errno 28]")


@pytest.mark.parametrize("line", [
    # a warning: Spark retries a lost task (koordinator-sh/koordinator#1004,
    # https://github.com/koordinator-sh/koordinator/issues/1004, with the reporter's bold marks)
    "23/02/08 08:34:25 WARN TaskSetManager: Lost task 12057.0 in stage 372.0 (TID 178902) (172.16.0.127 executor 4): "
    "java.io.IOException: **No space left on device**",
    # a retried step: urllib3 says it retries (sabeechen/hassio-google-drive-backup#816,
    # https://github.com/sabeechen/hassio-google-drive-backup/issues/816)
    "23-03-26 17:21:50 WARNING (raven-sentry.BackgroundWorker) [urllib3.connectionpool] Retrying (Retry(total=0, "
    "connect=None, read=None, redirect=None, status=None)) after connection broken by 'NewConnectionError('<urllib3."
    "connection.HTTPSConnection object at 0x7f6b91bc9e10>: Failed to establish a new connection: [Errno -3] Try "
    "again')': /api/5370612/envelope/",
    # a class name in a person's prose, no spelling of an exception after it (the brief's example wording)
    "a RuntimeError was raised earlier but we retried",
    # code, written here: a class's definition (torch.distributed's DistNetworkError is declared so), a raise, an
    # except clause
    "class DistNetworkError(RuntimeError):",
    '    raise ValueError("batch size must be positive")',
    "except RuntimeError: pass",
    # a docstring's and a configuration dump's class names (written here, in Google's docstring style and a YAML
    # dump's form)
    "    Raises: ValueError: if the batch size is not positive.",
    "  retry_on: [ConnectionError, TimeoutError]",
    # a C++ stack's frame (absl's symbolized stack dump, tests/lab/captured/jax_sigkill_external)
    "    @     0x7f71c37040ee  xla::CoordinationServiceAgent::SetError()",
    # a Java frame whose method's owner is class-shaped (written here, in the JVM's frame form)
    "\tat org.apache.spark.SparkException$.internalError(SparkException.scala:92)",
    # an info record of a framework that handles the error itself (TensorFlow's retrying_utils, the form of
    # kubeflow/examples#318: `I tensorflow/...cc:77]`)
    "2018-11-07 23:51:01.577393: I tensorflow/core/platform/cloud/retrying_utils.cc:77] The operation failed and will "
    "be automatically retried in 1.49778 seconds (attempt 1 out of 10), caused by: UnavailableError: Upload failed",
    # a line that says the error was ignored (written here: discord.py's `Ignoring exception in on_message` header
    # with an exception's last line after it; its level is an error's, its words say the handler went on)
    "ERROR: Ignoring exception in on_message: RuntimeError: Event loop is closed",
    # a call, not a repr: a class-shaped function with no arguments (written here)
    "result = make_dataset_error()  # compute MakeDatasetError() later",
    # a count by class in a progress or summary line (written here, in the form of a crawler's error tally)
    "stats: requests=1200 ConnectionError: 3, TimeoutError: 0, HTTPError: 12",
    # gRPC's error line above its status (wilhelm-lab/oktoberfest#56): a private class whose message is the status
    # on the next line, which is read instead
    "grpc._channel._InactiveRpcError: <_InactiveRpcError of RPC that terminated with:",
    # Go's panic: a daemon's in the evidence (GoogleCloudPlatform/gcsfuse#170), not read
    "panic: runtime error: invalid memory address or nil pointer dereference",
])
def test_lines_that_spell_no_uncaught_exception(line: str) -> None:
    assert tb.spelled_exception(line) is None
    drafts = helpers.scan(ALL, [line], "application")
    assert not any(d.fields.get("exc_type") for d in drafts)


def test_a_status_or_a_store_code_in_any_exceptions_message_is_read_through_its_table() -> None:
    # pyarrow's S3 file system raises the AWS SDK for C++'s error as an OSError: its enum spells the store's code
    # (the message as ray-project/ray's tests quote it, search index id 18897836838)
    line = ("OSError: When creating key x in bucket y: AWS Error SLOW_DOWN during PutObject operation: Please reduce "
            "your request rate.")
    got = helpers.scan(ALL, [line], "application")
    assert [d.kind for d in got] == ["storage.error"]
    assert got[0].fields.get("fs") == "object_store" and got[0].fields.get("store_code") == "SlowDown"
    # near miss: the client's own failure in that enum (written here in pyarrow's form) is no code the table lists
    near = ("OSError: When reading information for key 'x' in bucket 'y': AWS Error NETWORK_CONNECTION during "
            "HeadObject operation: curlCode: 6, Couldn't resolve host name")
    assert [d.kind for d in helpers.scan(ALL, [near], "application")] == ["app.exception"]
    # gRPC's status in a traceback's last line: grpc/grpc#12116's message (`<_Rendezvous of RPC that terminated with
    # (StatusCode.UNAVAILABLE, Connect Failed)>`), written here under grpc's public `grpc.RpcError` (the private
    # `_Rendezvous` class it was raised as is not read): the status decides, though no row lists the class
    tb_lines = ["Traceback (most recent call last):", '  File "greeter_client.py", line 43, in run',
                "grpc.RpcError: <_Rendezvous of RPC that terminated with (StatusCode.UNAVAILABLE, Connect Failed)>"]
    assert [d.kind for d in helpers.scan(ALL, tb_lines, "application")] == ["nccl.remote_error"]


@pytest.mark.parametrize("on", [True, False])
def test_the_reading_is_the_same_with_the_memos_on_and_off(on: bool) -> None:
    lines = [s[0] for s in SPELLED] * 2
    with fastpath(on):
        got = helpers.scan(ALL, lines, "application")
    with fastpath(not on):
        again = helpers.scan(ALL, lines, "application")
    assert [(d.kind, d.fields) for d in got] == [(d.kind, d.fields) for d in again]
