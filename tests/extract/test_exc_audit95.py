"""The exception and errno tables audited against their libraries' own lists (catalog/exceptions.yaml): botocore's
exceptions module, Linux's errno list with glibc's strerror, Python's OSError subclasses.

Each mechanism is tested both ways. The message of each botocore class is its own `fmt` (boto/botocore
botocore/exceptions.py), filled as botocore fills it; the other lines are the printing program's words as its source
cited beside them writes them (CPython Modules/socketmodule.c, urllib3/exceptions.py, aiohttp/client_exceptions.py,
boto3/s3/transfer.py). No line is from tests/wild.
"""

from __future__ import annotations

import errno
import os
import sys

import pytest

from firstfault.catalog.tables import ErrnoInfo, errno_table, exception_class_table
from firstfault.extract import excclass
from firstfault.extract.base import Draft
from firstfault.extract.codes import class_errno, errno_of
from tests.extract.helpers import alone, last_line


def _one(drafts: list[Draft]) -> Draft:
    assert len(drafts) == 1, drafts
    return drafts[0]


# ------------------------------------------------------------------ botocore: the client's own errors

# Each client-side class's message, botocore's `fmt` filled in (botocore/exceptions.py); a class without one here is
# read with the placeholder message below.
_FMT: dict[str, str] = {
    "ProxyConnectionError": 'Failed to connect to proxy URL: "http://proxy.internal:3128"',
    "SSLError": "SSL validation failed for https://my-bucket.s3.amazonaws.com/ckpt.pt [SSL: CERTIFICATE_VERIFY_FAILED]",
    "NoCredentialsError": "Unable to locate credentials",
    "PartialCredentialsError": "Partial credentials found in env, missing: AWS_SECRET_ACCESS_KEY",
    "CredentialRetrievalError": "Error when retrieving credentials from container-role: Error retrieving metadata: "
                                "Received non 200 response (500) from ECS metadata",
    "NoRegionError": "You must specify a region.",
    "ParamValidationError": "Parameter validation failed:\\nInvalid bucket name \"\": Bucket name must match the regex",
    "InvalidRegionError": "Provided region_name 'us-west-2 ' doesn't match a supported format.",
    "UnknownServiceError": "Unknown service: 's4'. Valid service names are: s3, s3control",
}
_CLIENT_SIDE = [r.match.rsplit(".", 1)[1] for r in exception_class_table()
                if r.match.startswith("botocore.exceptions.") and r.family == "exception"]


def test_the_client_side_rows_come_before_botocores_wildcard() -> None:
    rows = [r.match for r in exception_class_table()]
    assert len(_CLIENT_SIDE) >= 50
    assert max(rows.index(f"botocore.exceptions.{c}") for c in _CLIENT_SIDE) < rows.index("botocore.*")


@pytest.mark.parametrize("cls", _CLIENT_SIDE)
def test_a_botocore_error_the_client_raised_itself_is_not_the_stores(cls: str) -> None:
    line = f"botocore.exceptions.{cls}: {_FMT.get(cls, 'The specified config file (/root/.aws/config) is bad.')}"
    for drafts in (last_line(line), alone(line)):
        assert all(d.kind != "storage.error" for d in drafts), drafts


@pytest.mark.parametrize(("line", "code"), [
    # botocore/exceptions.py ReadTimeoutError and ConnectionClosedError: a connection the store took, then failed
    ('botocore.exceptions.ReadTimeoutError: Read timeout on endpoint URL: "https://my-bucket.s3.amazonaws.com/ckpt.pt"',
     None),
    ("botocore.exceptions.ConnectionClosedError: Connection was closed before we received a valid response from "
     'endpoint URL: "https://my-bucket.s3.amazonaws.com/ckpt.pt?uploadId=x&partNumber=7".', None),
    # botocore ClientError's MSG_TEMPLATE with its retry info
    ("botocore.exceptions.ClientError: An error occurred (SlowDown) when calling the PutObject operation (reached "
     "max retries: 4): Please reduce your request rate.", "SlowDown"),
    # boto3/s3/transfer.py upload_file: the upload that exhausted its retries, ClientError's words quoted
    ("boto3.exceptions.S3UploadFailedError: Failed to upload /tmp/ckpt.pt to my-bucket/ckpt.pt: An error occurred "
     "(InternalError) when calling the UploadPart operation (reached max retries: 4): We encountered an internal "
     "error. Please try again.", "InternalError"),
    # botocore's IncompleteReadError: the store's answer cut short
    ("botocore.exceptions.IncompleteReadError: 8388608 read, but total bytes expected is 16777216.", None),
    # botocore's connection classes: the store's endpoint refused or did not take the connection (a bucket under load)
    ('botocore.exceptions.ConnectTimeoutError: Connect timeout on endpoint URL: "https://commoncrawl.s3.us-east-1.'
     'amazonaws.com/crawl-data/x.warc.gz"', None),
    ('botocore.exceptions.EndpointConnectionError: Could not connect to the endpoint URL: "https://my-bucket.s3.'
     'us-west-2.amazonaws.com/ckpt/step_1000.pt"', None),
    ("botocore.exceptions.ConnectionError: An HTTP Client failed to establish a connection: [Errno 111] Connection "
     "refused", None),
    ('boto3.exceptions.S3UploadFailedError: Failed to upload /tmp/ckpt.pt to my-bucket/ckpt.pt: Could not connect to '
     'the endpoint URL: "https://my-bucket.s3.amazonaws.com/ckpt.pt"', None),
    # aiohttp/client_exceptions.py ClientConnectorError: `Cannot connect to host {host}:{port} ssl:{ssl} [{strerror}]`
    ("aiohttp.client_exceptions.ClientConnectorError: Cannot connect to host storage.googleapis.com:443 ssl:default "
     "[Connect call failed ('142.250.1.207', 443)]", None),
])
def test_near_miss_the_stores_own_failure_stays_the_stores(line: str, code: str | None) -> None:
    d = _one(last_line(line))
    assert d.kind == "storage.error" and d.fields.get("fs") == "object_store", d
    assert d.fields.get("store_code") == code


@pytest.mark.parametrize("line", [
    # boto3/s3/transfer.py: `"Failed to upload {} to {}: {}".format(filename, '/'.join([bucket, key]), e)` around
    # botocore's NoCredentialsError
    "boto3.exceptions.S3UploadFailedError: Failed to upload /tmp/ckpt.pt to my-bucket/ckpt.pt: Unable to locate "
    "credentials",
    # urllib3/exceptions.py NewConnectionError as requests raises it (ConnectionError, `Caused by`), to a store's host
    "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='my-bucket.s3.amazonaws.com', port=443): Max "
    "retries exceeded with url: /ckpt.pt (Caused by NewConnectionError('<urllib3.connection.HTTPSConnection object at "
    "0x7f3a2c1d0b50>: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution'))",
    # urllib3's NameResolutionError (urllib3 2.x), the store's host not resolved
    "urllib3.exceptions.NameResolutionError: <urllib3.connection.HTTPSConnection object at 0x7f>: Failed to resolve "
    "'my-bucket.s3.amazonaws.com' ([Errno -2] Name or service not known)",
])
def test_a_store_name_not_resolved_is_not_the_stores(line: str) -> None:
    d = _one(last_line(line))
    assert d.kind == "app.exception", d


# ------------------------------------------------------------------ getaddrinfo's codes are no errnos


@pytest.mark.parametrize("line", [
    # CPython Modules/socketmodule.c set_gaierror: `(error, gai_strerror(error))`, glibc's EAI_NODATA -5, EAI_AGAIN -3
    "socket.gaierror: [Errno -5] No address associated with hostname",
    "urllib3.exceptions.MaxRetryError: HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded with "
    "url: /api/models/bert-base-uncased (Caused by NewConnectionError('<urllib3.connection.HTTPSConnection object at "
    "0x7f>: Failed to establish a new connection: [Errno -5] No address associated with hostname'))",
    "OSError: [Errno -3] Temporary failure in name resolution",
])
def test_a_name_resolution_failure_is_no_errno(line: str) -> None:
    for d in last_line(line):
        assert d.kind != "storage.error" and d.fields.get("errno") in (None,), d


def test_near_miss_a_positive_errno_still_reads() -> None:
    # Python's OSError: `[Errno 5] Input/output error: '<path>'`
    d = _one(last_line("OSError: [Errno 5] Input/output error: '/mnt/lustre/ckpt/step_1000.pt'"))
    assert d.kind == "storage.error" and d.fields["errno"] == "EIO", d


# ------------------------------------------------------------------ the errno table against Linux's list

_ROWS = sorted(errno_table().values(), key=lambda r: r.name)
_LINUX = sys.platform.startswith("linux")


@pytest.mark.skipif(not _LINUX, reason="Linux's errno list, as Python's errno module has it there")
def test_every_errno_of_linux_has_a_row() -> None:
    # include/uapi/asm-generic/errno-base.h and errno.h, as errno.errorcode names them (one name a number)
    assert sorted(set(errno.errorcode.values()) - set(errno_table())) == []
    assert sorted(set(errno_table()) - set(errno.errorcode.values())) == []


@pytest.mark.skipif(not _LINUX, reason="glibc's strerror texts")
@pytest.mark.parametrize("row", _ROWS, ids=lambda r: r.name)
def test_each_errno_is_read_by_its_number_its_name_and_its_text(row: ErrnoInfo) -> None:
    num = getattr(errno, row.name)
    text = os.strerror(num)
    # Python's OSError (`[Errno N] text: 'path'`), a C program's `strerror(errno)` after its name (`errno=ENOSPC`)
    assert errno_of(f"[Errno {num}] {text}: '/data/x'") == row.name
    assert errno_of(f"write failed: {row.name}") == row.name
    if len(text) >= 12:
        # perror(3)'s `prog: text`, and Go's lower-case syscall text (`write /var/x: no space left on device`)
        assert errno_of(f"train: /data/x: {text}") in (row.name, *_LONGER_OF.get(row.name, ()))
        assert errno_of(f"write /var/lib/x: {text.lower()}") in (row.name, *_LONGER_OF.get(row.name, ()))


# A text that is the head of another's (ENODEV's `No such device` in ENXIO's `No such device or address`) is read as
# the longer where the line holds the longer: only the exact text is asserted for the shorter.
_LONGER_OF: dict[str, tuple[str, ...]] = {}


@pytest.mark.parametrize("row", [r for r in _ROWS if r.classes], ids=lambda r: r.name)
def test_an_oserror_class_stands_for_its_errno(row: ErrnoInfo) -> None:
    for cls in row.classes:
        assert class_errno(cls) == row.name
        assert type(OSError(getattr(errno, row.name), "x")).__name__ == cls


@pytest.mark.parametrize("line", [
    # asyncio's selector transport (Lib/asyncio/selector_events.py: `ConnectionResetError('Connection lost')`) and
    # streams' (`Connection lost`), with no errno
    "ConnectionResetError: Connection lost",
    # Lib/asyncio/base_events.py create_connection: `OSError(err.errno, 'Connect call failed %s' % (address,))`
    "ConnectionRefusedError: [Errno 111] Connect call failed ('10.0.0.4', 29500)",
    # Python's BrokenPipeError with no errno (multiprocessing's connection, a pipe's writer): EPIPE by its class
    "BrokenPipeError: the other end of the pipe closed",
    # a C++ program's `connect() failed: <strerror>` (Gloo's, c10d's socket: EHOSTUNREACH, ENETRESET)
    "RuntimeError: connect() failed: No route to host",
    "RuntimeError: socket recv failed: Network dropped connection on reset",
])
def test_a_peers_errno_or_class_is_a_peers_failure(line: str) -> None:
    assert [d.kind for d in last_line(line)] == ["nccl.remote_error"]


@pytest.mark.parametrize("line", [
    # Python's TimeoutError with no errno (asyncio.wait_for, concurrent.futures): any wait, no socket's
    "TimeoutError: timed out",
    # ConnectionError is the base of four classes of different errnos, and a class whose name holds one is not it
    "ConnectionError: Failed to connect to Ray at address: http://10.0.0.4:8265.",
    "MyConnectionResetErrorHandler: Connection lost",
    # the node's route (ENETUNREACH) decides nothing
    "RuntimeError: connect() failed: Network is unreachable",
])
def test_near_miss_a_wait_a_base_class_or_the_nodes_route_is_no_peers(line: str) -> None:
    assert all(d.kind != "nccl.remote_error" for d in last_line(line))
    assert class_errno("MyConnectionResetErrorHandler") is None and class_errno("TimeoutError") is None


def test_lustres_shut_down_import_is_the_storages() -> None:
    # lustre/ptlrpc/client.c: -ESHUTDOWN on a mount whose import is closed, as Python raises it (BrokenPipeError by
    # CPython's errno map), with the path
    d = _one(last_line("BrokenPipeError: [Errno 108] Cannot send after transport endpoint shutdown: "
                       "'/fsx/ckpt/step_1000.pt'"))
    assert d.kind == "storage.error" and d.fields["errno"] == "ESHUTDOWN", d


def test_a_corrupt_file_system_is_the_storages() -> None:
    # ext4's EUCLEAN (EFSCORRUPTED) as Python's OSError prints it
    d = _one(last_line("OSError: [Errno 117] Structure needs cleaning: '/data/shards/shard-00017.tar'"))
    assert d.kind == "storage.error" and d.fields["errno"] == "EUCLEAN", d


def test_an_alias_is_read_as_its_rows_name() -> None:
    assert errno_of("recv returned EWOULDBLOCK") == "EAGAIN"
    assert errno_of("ioctl: EOPNOTSUPP") == errno.errorcode[errno.EOPNOTSUPP]


@pytest.mark.parametrize("cls", ["ObjectReconstructionFailedMaxAttemptsExceededError",
                                 "ObjectReconstructionFailedLineageEvictedError"])
def test_rays_reconstruction_subclasses_are_a_peers_loss_as_their_parent(cls: str) -> None:
    # ray-project/ray python/ray/exceptions.py: the subclasses' message is the parent's `Failed to retrieve object`
    line = (f"ray.exceptions.{cls}: Failed to retrieve object 00ffffffffffffffffffffffffffffffffffffff0100000001000000."
            " To see information about where this ObjectRef was created in Python, set the environment variable "
            "RAY_record_ref_creation_sites=1 during `ray start` and `ray.init()`.")
    assert [d.kind for d in last_line(line)] == ["nccl.remote_error"]


def test_near_miss_rays_own_actor_exit_is_no_peers_loss() -> None:
    # ray.exceptions.AsyncioActorExit: an actor's own exit (ray.actor.exit_actor), no row
    assert all(d.kind != "nccl.remote_error" for d in last_line("ray.exceptions.AsyncioActorExit: exit_actor called"))


# ------------------------------------------------------------------ google-api-core's classes as store codes

_GOOGLE_4XX = ["MovedPermanently", "NotModified", "ResumeIncomplete", "BadRequest", "FailedPrecondition", "OutOfRange",
               "Unauthorized", "Unauthenticated", "PermissionDenied", "Conflict", "AlreadyExists", "LengthRequired",
               "RequestRangeNotSatisfiable", "MethodNotImplemented", "NotFound", "Forbidden", "MethodNotAllowed",
               "PreconditionFailed", "TemporaryRedirect"]


@pytest.mark.parametrize("cls", _GOOGLE_4XX)
def test_a_google_api_core_request_class_is_the_workloads_without_its_number(cls: str) -> None:
    # google/api_core/exceptions.py: the class names its status; a message without the number (a program's own
    # `raise cls(...)`, a log of `exc.message`) is read by the class
    assert excclass.store_code(cls, "storage.googleapis.com/storage/v1/b/my-bucket refused") == cls
    assert excclass.store_side(cls) == "workload"


def test_near_miss_a_store_side_status_class_is_read_by_its_number() -> None:
    # GoogleAPICallError.__str__ prints the code first: `503 GET https://storage.googleapis.com/...`
    d = _one(last_line("google.api_core.exceptions.ServiceUnavailable: 503 GET https://storage.googleapis.com/storage/"
                       "v1/b/my-bucket/o/ckpt.pt: We encountered an internal error. Please try again."))
    assert d.kind == "storage.error" and d.fields["store_code"] == "503", d
