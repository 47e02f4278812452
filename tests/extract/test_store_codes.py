"""Object-store error codes (catalog/exceptions.yaml `object_store_codes`, extract/excclass.py) in every store SDK's
spelling, through the table's sides and causes.

Positive lines are verbatim from the public threads cited next to them (none from tests/wild); near misses are
lines that spell a code but must not end a job: a client's debug record of a response it retried, a warning, a code
on the job's side.
"""

from __future__ import annotations

import pytest

from firstfault.catalog.tables import object_store_code_table
from firstfault.extract import excclass
from tests.extract import helpers
from tests.extract.helpers import alone


@pytest.mark.parametrize(("message", "code", "cause"), [
    # minio/minio#12376 (minio-java's ErrorResponse in MinIO's mint log): the back end's drives are full
    ("error occurred\\nErrorResponse(code = XMinioStorageFull, message = Storage backend has reached its minimum free "
     "disk threshold. Please delete a few objects to proceed.", "XMinioStorageFull", "full"),
    # googleapis/google-cloud-go#269: Google's Go client closing a storage.Writer
    ("googleapi: Error 403: User Rate Limit Exceeded, userRateLimitExceeded", "userRateLimitExceeded", "throttled"),
    # odeke-em/drive#513: the same client's wording, another Google API
    ("googleapi: Error 403: User rate limit exceeded, userRateLimitExceeded", "userRateLimitExceeded", "throttled"),
    # aws/aws-sdk-cpp#167: the AWS SDK for C++ before it knew S3's codes
    ("Unable to parse ExceptionName: SlowDown Message: Please reduce your request rate.", "SlowDown", "throttled"),
    ("Unable to parse ExceptionName: InternalError Message: We encountered an internal error. Please try again.",
     "InternalError", "internal"),
    ("Unable to parse ExceptionName: RequestTimeout Message: Your socket connection to the server was not read from "
     "or written to within the timeout period. Idle connections will be closed.", "RequestTimeout", "timeout"),
    # thoughtbot/paperclip#1619: the AWS SDK for Ruby
    ("AWS::S3::Errors::SlowDown: Please reduce your request rate.", "SlowDown", "throttled"),
    # flightstats/hub#291: the AWS SDK for Java
    ("com.amazonaws.services.s3.model.AmazonS3Exception: Please reduce your request rate. (Service: Amazon S3; "
     "Status Code: 503; Error Code: SlowDown; Request ID: 03D8D00FA3AD0455)", "SlowDown", "throttled"),
    # pingcap/tiflash#10538: the AWS SDK for C++'s error marshaller
    ("tag=AWSErrorMarshaller message=Encountered AWSError 'SlowDown': Please reduce your request rate.", "SlowDown",
     "throttled"),
])
def test_a_store_clients_own_spelling_names_the_code(message: str, code: str, cause: str) -> None:
    assert excclass.spelled_store_code(message) == code
    assert excclass.store_side(code) == "store" and excclass.store_cause(code) == cause


@pytest.mark.parametrize(("message", "code"), [
    # nextcloud/server#12537: the AWS SDK for PHP's message, the error document JSON-escaped in a log record
    ("SlowDown (client): Please reduce your request rate. - <?xml version='1.0' encoding='UTF-8'?><Error><Code>"
     "SlowDown<\\/Code><Message>Please reduce your request rate.<\\/Message>", "SlowDown"),
    # thephpleague/flysystem-aws-s3-v3#278: the same SDK, DigitalOcean Spaces
    ("SlowDown (server): Reduce your request rate. - <?xml version=\"1.0\" encoding=\"UTF-8\"?>", "SlowDown"),
    # boto3's documentation ("Error handling": `err.response` as a program prints it) and the botocore users' tests
    # that build it (`ClientError({'Error': {'Code': 'AccessDeniedException', 'Message': 'not authorized'}}, ...)`)
    ("{'Error': {'Code': 'SlowDown', 'Message': 'Please reduce your request rate.'}, 'ResponseMetadata': {}}",
     "SlowDown"),
    # ericberman/MyFlightbookWeb#843: a Google JSON API's error body
    ('    "reason": "userRateLimitExceeded",', "userRateLimitExceeded"),
    # tikv/tikv#11812: a Rust client's status and the Azure error document
    ("HTTP error status (status: 503, body: \\\"\\\\u{feff}<?xml version=\\\\\\\"1.0\\\\\\\" "
     "encoding=\\\\\\\"utf-8\\\\\\\"?><Error><Code>ServerBusy</Code>", "503"),
])
def test_store_code_reads_every_sdks_form(message: str, code: str) -> None:
    assert excclass.store_code("", message) == code
    assert excclass.store_side(code) == "store"


@pytest.mark.parametrize(("line", "code"), [
    # flightstats/hub#291: a JVM job's exception line, alone
    ("com.amazonaws.services.s3.model.AmazonS3Exception: Please reduce your request rate. (Service: Amazon S3; "
     "Status Code: 503; Error Code: SlowDown; Request ID: 19793A04A304065C)", "SlowDown"),
    # googleapis/google-cloud-go#269: a Go program's last line
    ("googleapi: Error 403: User Rate Limit Exceeded, userRateLimitExceeded", "userRateLimitExceeded"),
    # thoughtbot/paperclip#1619
    ("AWS::S3::Errors::SlowDown: Please reduce your request rate.", "SlowDown"),
])
def test_a_line_of_its_own_in_a_store_clients_words_is_the_stores(line: str, code: str) -> None:
    (d,) = alone(line)
    assert d.kind == "storage.error" and d.fields.get("terminal") is True
    helpers.assert_fields(d, {"fs": "object_store", "store_code": code, "store_cause": "throttled"})


@pytest.mark.parametrize("line", [
    # aws/aws-sdk-net#1949: the SDK's debug record of a response it goes on to retry
    "2023-09-01 19:10:26,707 DEBUG c.a.h.AmazonHttpClient$RequestExecutor [pool-28-thread-7] Received error response: "
    "com.amazonaws.services.s3.model.AmazonS3Exception: Please reduce your request rate. (Service: Amazon S3; Status "
    "Code: 503; Error Code: SlowDown; Request ID: xxxxxxx; S3 Extended Request ID: xxxxxxxxxx; Proxy: null), S3 "
    "Extended Request ID: xxxxxxx",
    # pingcap/tiflash#10538: a warning the query survived
    "[2025/11/07 21:19:56.146 +00:00] [WARN] [S3Common.cpp:156] [\"tag=AWSErrorMarshaller message=Encountered "
    "AWSError 'SlowDown': Please reduce your request rate.\"] [source=AWSClient] [thread_id=364]",
])
def test_a_logged_response_the_client_retried_is_no_failure(line: str) -> None:
    assert [d for d in alone(line) if d.kind == "storage.error"] == []


def test_a_code_on_the_jobs_side_is_not_the_stores() -> None:
    # the S3 list's own word: a key the job named that is not there; the Azure list's container someone deleted
    for code in ("NoSuchKey", "ContainerBeingDeleted", "RequestTimeTooSkewed", "NotImplemented", "501"):
        assert excclass.store_side(code) == "workload" and excclass.store_cause(code) is None
    # another service's error body in lower case (OpenAI's `{'error': {'code': 'model_not_found'`) is no store's
    assert excclass.spelled_store_code("Error code: 404 - {'error': {'code': 'model_not_found', 'message': 'The model "
                                       "`gpt-5.6-sol` does not exist or you do not have access to it.'}}") is None
    # a code the table does not list, spelled in a store's words, names nothing (not the store's failure)
    assert excclass.spelled_store_code("An error occurred (MadeUpCode) when calling the PutObject operation") is None


def test_the_table_holds_each_stores_list() -> None:
    table = object_store_code_table()
    # a sample of each manual's list (S3, MinIO, GCS JSON API, Azure Blob, RFC 9110 / 4918) and their sides
    for code, side in (("SlowDown", "store"), ("InvalidPart", "workload"), ("XMinioWriteQuorum", "store"),
                       ("XMinioInvalidObjectName", "workload"), ("backendError", "store"),
                       ("insufficientPermissions", "workload"), ("ServerBusy", "store"), ("LeaseLost", "workload"),
                       ("507", "store")):
        assert table[code].side == side, code
    assert all(r.cause is not None for r in table.values() if r.side == "store")
