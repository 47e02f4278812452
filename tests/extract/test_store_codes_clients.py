"""Object-store codes in the spellings of the clients that are no botocore (catalog/exceptions.yaml
`object_store_codes`, extract/excclass.py): the AWS Common Runtime's error names and descriptions (`said`), the AWS SDK
for C++'s CoreErrors by name and by number (`aws_cpp`), and the workload-side codes that say the store refused the
job's own credentials or permissions (`setup`).

Every row is read in each form its printer writes; the forms come from the printers' own source, the lines quoted
next to them from the public threads cited (none from tests/wild):
- aws-c-common's logging of an error (aws_error_name / aws_error_str in parentheses after its number), as
  awslabs/s3-connector-for-pytorch#194 shows it: `Incoming body callback raised error 26
  (AWS_ERROR_DEST_COPY_TOO_SMALL).`, `... due to error 26 (Destination of copy is too small.)`;
- mountpoint-s3-crt's error, as s3torchconnector prints it: `Client error: Unknown CRT error: CRT error 14366:
  aws-c-s3: AWS_ERROR_S3_REQUEST_HAS_COMPLETED, Request has already completed, action cannot be performed.`;
- the AWS SDK for C++'s CRT S3 client's message (aws-sdk-cpp tests: `Request successfully cancelled (aws-c-s3:
  AWS_ERROR_S3_CANCELED)`);
- pyarrow's S3 file system (arrow s3_internal.h ErrorToStatus): `AWS Error [code 15]: No response body.` before it
  printed the enum's name, `AWS Error ACCESS_DENIED during HeadObject operation: ...` after.
"""

from __future__ import annotations

import re

import pytest

from firstfault.catalog.tables import ObjectStoreCodeInfo, object_store_code_table
from firstfault.extract import excclass
from tests.extract import helpers
from tests.extract.helpers import alone

_TABLE = object_store_code_table()
_SAID = [r for r in _TABLE.values() if r.said is not None]
_CRT = [r for r in _TABLE.values() if r.code.startswith("AWS_ERROR_")]
_CPP = [r for r in _TABLE.values() if r.aws_cpp is not None]
_SETUP = [r for r in _TABLE.values() if r.setup]


def _enum_name(code: str) -> str:
    """The AWS SDK for C++'s enum name of a code (SignatureDoesNotMatch -> SIGNATURE_DOES_NOT_MATCH)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", code).upper()


def _crt_forms(row: ObjectStoreCodeInfo) -> list[str]:
    name = row.code
    forms = [
        f"[ERROR] [2024-03-22T23:33:59Z] [0000700003b3f000] [S3MetaRequest] - id=0x1: Request failed with error 14339 "
        f"({name}).",
        f"Client error: Unknown CRT error: CRT error 14339: aws-c-s3: {name}, {row.said or 'x'}",
        f"awscrt.exceptions.AwsCrtError: {name}: {row.said or 'x'}",
        f"{row.said or 'x'} (aws-c-s3: {name})",
    ]
    if row.said is not None:
        forms.append(f"2024-03-22T23:33:59.252944Z ERROR awscrt::S3MetaRequest: id=0x102506c00: Request 0x10180af80 "
                     f"failed due to error 14339 ({row.said})")
    return forms


@pytest.mark.parametrize("row", _CRT, ids=lambda r: r.code)
def test_every_crt_row_is_read_in_each_form_the_runtime_prints(row: ObjectStoreCodeInfo) -> None:
    for line in _crt_forms(row):
        assert excclass.spelled_store_code(line) == row.code, line
        (d,) = [d for d in alone(line) if d.kind in ("storage.error", "app.exception")]
        if row.side == "store":
            assert d.kind == "storage.error", line
            helpers.assert_fields(d, {"fs": "object_store", "store_code": row.code, "store_cause": row.cause})
        else:
            assert d.kind == "app.exception" and d.fields.get("store_code") == row.code, line


@pytest.mark.parametrize("row", _CPP, ids=lambda r: r.code)
def test_every_cpp_sdk_row_is_read_by_its_name_and_its_number(row: ObjectStoreCodeInfo) -> None:
    by_number = (f"OSError: When reading information for key 'a/b.parquet' in bucket 'c': AWS Error [code "
                 f"{row.aws_cpp}]: No response body.")
    by_name = (f"OSError: When reading information for key 'a/b.parquet' in bucket 'c': AWS Error "
               f"{_enum_name(row.code)} during HeadObject operation: No response body.")
    for line in (by_number, by_name):
        assert excclass.spelled_store_code(line) == row.code, line
        (d,) = alone(line)
        want = "storage.error" if row.side == "store" else "app.exception"
        assert d.kind == want and d.fields.get("store_code") == row.code, line
        assert d.fields.get("setup") is (True if row.setup else None), line


@pytest.mark.parametrize("row", _SETUP, ids=lambda r: r.code)
def test_a_refused_credential_or_permission_is_the_jobs_set_up(row: ObjectStoreCodeInfo) -> None:
    if row.code.isdigit():
        # gcsfs's HttpError: the body's message, then the status (fsspec/gcsfs gcsfs/retry.py)
        line = f"gcsfs.retry.HttpError: Anonymous caller does not have storage.objects.get access, {row.code}"
    else:
        # lightning's SageMaker checkpoint in s3fs (Lightning-AI/pytorch-lightning#18805's form of botocore's message)
        line = (f"botocore.exceptions.ClientError: An error occurred ({row.code}) when calling the "
                f"CreateMultipartUpload operation: Access Denied")
    (d,) = alone(line)
    assert d.kind == "app.exception"
    helpers.assert_fields(d, {"store_code": row.code, "setup": True})


def test_a_key_or_bucket_the_job_named_wrong_is_its_exception_not_its_set_up() -> None:
    # docs/verdict.md, storage.object_store: a key or bucket the job named wrong is app.exception
    for code in ("NoSuchKey", "NoSuchBucket", "BlobNotFound", "ContainerNotFound", "notFound", "404"):
        assert excclass.store_side(code) == "workload" and not excclass.store_setup(code), code
    (d,) = alone("botocore.exceptions.ClientError: An error occurred (NoSuchKey) when calling the GetObject "
                 "operation: The specified key does not exist.")
    assert d.kind == "app.exception" and "setup" not in d.fields


@pytest.mark.parametrize("line", [
    # a name inside a longer identifier, and a name the table does not list (the status beside it decides)
    "ERROR awscrt::S3MetaRequest: id=0x1: failed with error 14339 (AWS_ERROR_S3_SLOW_DOWN_RETRIES_EXHAUSTED)",
    "ERROR config: MY_AWS_ERROR_S3_SLOW_DOWN=1 set",
    "ERROR Client error: Unknown CRT error: CRT error 14343: aws-c-s3: AWS_ERROR_S3_INVALID_RESPONSE_STATUS, Invalid "
    "response status from request",
    # a description in prose, not in the runtime's `error N (...)`
    "ERROR: our wrapper failed; the docs say Response code indicates throttling when the bucket is hot",
    # the C++ SDK's numbers that name nothing: NETWORK_CONNECTION, UNKNOWN, and a service enum's (release-dependent)
    "OSError: When reading information for key 'k' in bucket 'b': AWS Error [code 99]: curlCode: 77, Problem with "
    "the SSL CA cert (path? access rights?)",
    "OSError: When reading information for key 'k' in bucket 'b': AWS Error [code 100]: No response body.",
    "OSError: AWS Error [code 134] during GetObject operation: Value for x-amz-checksum-mode header is invalid.",
    # the runtime's own record at a level that says it went on
    "2024-03-22T23:33:59.252994Z  INFO awscrt::http-connection: id=0x1018129e0: Shutting down connection with error "
    "code 26 (AWS_ERROR_DEST_COPY_TOO_SMALL).",
    "2024-03-22T23:33:59.252994Z  WARN awscrt::S3MetaRequest: id=0x1: Request failed with error 14339 (Response code "
    "indicates throttling). Retrying.",
])
def test_a_look_alike_names_no_code(line: str) -> None:
    assert [d for d in alone(line) if d.fields.get("store_code") is not None] == []


def test_a_number_that_names_nothing_is_not_remembered_for_one_that_does() -> None:
    # the line reader remembers "nothing" by a body's digits made 0 (extract/exceptions.py): `[code 99]` is no key for
    # `[code 15]`
    quiet = "AWS Error [code 99]: No response body."
    assert alone(quiet) == [] or all(d.fields.get("store_code") is None for d in alone(quiet))
    (d,) = alone("AWS Error [code 15]: No response body.")
    helpers.assert_fields(d, {"store_code": "AccessDenied", "setup": True})


def test_the_table_keys_each_number_and_description_once() -> None:
    numbers = [r.aws_cpp for r in _CPP]
    assert len(numbers) == len(set(numbers))
    said = [r.said for r in _SAID]
    assert len(said) == len(set(said))
    # CoreErrors' numbers of the codes S3 answers that decide: SLOW_DOWN 19, SERVICE_UNAVAILABLE 12, REQUEST_TIMEOUT 24
    assert {r.aws_cpp: r.code for r in _CPP if r.side == "store"} == {19: "SlowDown", 12: "ServiceUnavailable",
                                                                     24: "RequestTimeout"}
