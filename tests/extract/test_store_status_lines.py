"""Checkpoints through object stores: a store's own HTTP status line as the HTTP clients quote it, botocore's
credentials the job never gave, and a launcher's traceback cut before its exception line.

Sources (the printers' own code; none of the lines from tests/wild):
- S3's error list (docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html): SlowDown is answered `503 Slow Down`;
  Ceph RGW's status names (src/rgw/rgw_common.cc `{ 503, "Slow Down"}`) the same;
- CPython Lib/urllib/error.py HTTPError.__str__ `'HTTP Error %s: %s' % (self.code, self.msg)`; requests/models.py
  Response.raise_for_status `'%s Server Error: %s for url: %s'`; aiohttp/client_exceptions.py ClientResponseError
  `'{}, message={!r}, url={!r}'`; httpx/_models.py raise_for_status `"{error_type} '{0.status_code}
  {0.reason_phrase}' for url '{0.url}'"`; reqwest's `HTTP status server error (503 Slow Down) for url (...)`;
- botocore/exceptions.py: NoCredentialsError `Unable to locate credentials`, PartialCredentialsError `Partial
  credentials found in {provider}, missing: {cred_var}`; boto3/s3/transfer.py `Failed to upload {} to {}: {}`;
- torch/distributed/launcher/api.py (elastic_launch.__call__ -> launch_agent -> ChildFailedError), as torchrun prints
  its own traceback after a worker failed.
"""

from __future__ import annotations

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.extract import excclass
from tests.conftest import BundleMaker
from tests.extract.helpers import TB, alone

SLOW_DOWN_QUOTES = [
    "HTTP Error 503: Slow Down",
    "503 Server Error: Slow Down for url: https://minio.internal:9000/ckpt/step_100/model.safetensors",
    "503, message='Slow Down', url=URL('https://rgw.example.org/bucket/shard-00001.tar')",
    "Server error '503 Slow Down' for url 'https://bucket.s3.amazonaws.com/k'",
    "HTTP status server error (503 Slow Down) for url (https://s3.us-east-1.amazonaws.com/b/k)",
]


@pytest.mark.parametrize("quote", SLOW_DOWN_QUOTES)
def test_a_stores_status_line_names_its_code_in_each_clients_spelling(quote: str) -> None:
    assert excclass.spelled_store_code(quote) == "SlowDown"
    assert excclass.store_code("", quote) == "SlowDown"


@pytest.mark.parametrize("line", [
    "urllib.error.HTTPError: HTTP Error 503: Slow Down",
    "requests.exceptions.HTTPError: 503 Server Error: Slow Down for url: https://minio.internal:9000/b/k",
    "aiohttp.client_exceptions.ClientResponseError: 503, message='Slow Down', url=URL('https://rgw.example.org/b')",
])
def test_an_http_clients_error_quoting_the_stores_status_line_is_the_store_throttling(line: str) -> None:
    drafts = [d for d in alone(line) if d.kind in ("storage.error", "app.exception")]
    assert [d.kind for d in drafts] == ["storage.error"], drafts
    assert drafts[0].fields["store_code"] == "SlowDown" and drafts[0].fields["store_cause"] == "throttled"


@pytest.mark.parametrize("quote", [
    "HTTP Error 503: Service Unavailable",  # the standard phrase: any server's
    "HTTP Error 500: Slow Down",  # not the store's status line
    "503 Server Error: Service Unavailable for url: https://api.example.org/v1/x",
    "please Slow Down the request rate",  # the words without a status
    "HTTP Error 503: Slow Downstream",  # another word
])
def test_near_misses_name_no_code_by_a_phrase(quote: str) -> None:
    assert excclass.spelled_store_code(quote) is None


def test_a_standard_503_from_urllib_stays_the_workloads_exception() -> None:
    drafts = [d for d in alone("urllib.error.HTTPError: HTTP Error 503: Service Unavailable")
              if d.kind in ("storage.error", "app.exception")]
    assert [d.kind for d in drafts] == ["app.exception"]


@pytest.mark.parametrize("line", [
    "botocore.exceptions.NoCredentialsError: Unable to locate credentials",
    "botocore.exceptions.PartialCredentialsError: Partial credentials found in env, missing: AWS_SECRET_ACCESS_KEY",
    "boto3.exceptions.S3UploadFailedError: Failed to upload /tmp/ep1.pt to ckpt/ep1.pt: Unable to locate credentials",
])
def test_credentials_the_job_never_gave_are_its_set_up(line: str) -> None:
    drafts = [d for d in alone(line) if d.kind == "app.exception"]
    assert len(drafts) == 1 and drafts[0].fields.get("setup") is True, drafts


@pytest.mark.parametrize("line", [
    # a credential provider that did not answer (the node's metadata service or the job's): nothing of the set-up
    "botocore.exceptions.CredentialRetrievalError: Error when retrieving credentials from container-role: timed out",
    # the program's own call
    "botocore.exceptions.ParamValidationError: Parameter validation failed:",
])
def test_other_client_side_errors_are_not_read_as_set_up(line: str) -> None:
    drafts = [d for d in alone(line) if d.kind == "app.exception"]
    assert all(d.fields.get("setup") is None for d in drafts), drafts


_TORCHRUN_CUT = [
    TB,
    '  File "/usr/local/bin/torchrun", line 33, in <module>',
    "    sys.exit(load_entry_point('torch==2.6.0', 'console_scripts', 'torchrun')())",
    '  File "/usr/local/lib/python3.12/dist-packages/torch/distributed/run.py", line 909, in run',
    "    elastic_launch(",
    '  File "/usr/local/lib/python3.12/dist-packages/torch/distributed/launcher/api.py", line 138, in __call__',
    "    return launch_agent(self._config, self._entrypoint, list(args))",
]
_JOB_CUT = [
    TB,
    '  File "/workspace/train.py", line 88, in <module>',
    "    main()",
    '  File "/workspace/train.py", line 61, in main',
    "    save_checkpoint(model, step)",
]


def _verdict(make_bundle: BundleMaker, lines: list[str]):  # type: ignore[no-untyped-def]
    return Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": "\n".join(lines) + "\n"})))


def test_the_launchers_traceback_cut_before_its_exception_line_is_no_cause(make_bundle: BundleMaker) -> None:
    v = _verdict(make_bundle, _TORCHRUN_CUT)
    assert v.attributed_domain == "unknown" and v.root_cause is None
    assert any("app/rank-0.log:1" in n for n in v.explanation), v.explanation  # where to look


def test_the_jobs_own_traceback_cut_before_its_exception_line_stays_a_weak_cause(make_bundle: BundleMaker) -> None:
    v = _verdict(make_bundle, _JOB_CUT)
    assert v.root_cause is not None and v.root_cause.rule == "app-exception-truncated"


# ---------------------------------------------------------------- a store's own message without its code
# fsspec/s3fs s3fs/errors.py translate_boto_error raises the answer's `Message` as the mapped class (SlowDown:
# `IOError(errno.EBUSY, message)`); the messages are S3's, as MinIO's cmd/api-errors.go copies them.


@pytest.mark.parametrize(("line", "code", "kind"), [
    ("OSError: [Errno 16] Please reduce your request rate.", "SlowDown", "storage.error"),
    ("PermissionError: The AWS Access Key Id you provided does not exist in our records.", "InvalidAccessKeyId",
     "app.exception"),
])
def test_a_stores_own_message_names_its_code_whatever_the_class(line: str, code: str, kind: str) -> None:
    assert excclass.message_store_code(line) == code
    drafts = [d for d in alone(line) if d.kind in ("storage.error", "app.exception")]
    assert [d.kind for d in drafts] == [kind], drafts
    assert drafts[0].fields["store_code"] == code


@pytest.mark.parametrize("line", [
    "OSError: [Errno 16] Device or resource busy: '/data/ckpt'",  # EBUSY alone names no store
    "OSError: [Errno 16] Please do not reduce your request rates",  # another word after the message
    "RuntimeError: We encountered an internal error. Please try again.",  # every AWS service's words: no row
])
def test_near_miss_no_stores_message_no_store_code(line: str) -> None:
    assert excclass.message_store_code(line) is None
    assert [d for d in alone(line) if d.kind == "storage.error" and d.fields.get("fs") == "object_store"] == []
