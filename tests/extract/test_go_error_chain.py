"""A Go error chain's link is no uncaught exception (extract/traceback.py `GO_CHAIN_LINKS`).

aws-sdk-go's awserr (aws/aws-sdk-go aws/awserr/types.go SprintError, v1.x: `<code>: <message>`, then `\\n\\t<extra>`
and `\\ncaused by: <origErr>`) prints each cause of an error on a line of its own behind `caused by: `; the cause's
own `Code: message` is shaped like a Python exception's last line (`caused by: UnmarshalError: ...`) but is the
deeper error of the one above it, in Go's words. The lines below are written here in that format, with the codes and
messages aws-sdk-go's own source gives them (service/s3/unmarshal_error.go `failed to decode S3 XML error response`
under request.ErrCodeSerialization; private/protocol/unmarshal.go's UnmarshalError `failed to unmarshal error
message`), as JuiceFS's object-store client logs them. The near misses: Java's `Caused by:` (a JVM's chain, whose
class is the JVM's exception: still read) and a `caused by:` in a sentence, not at the line's head.
"""

from __future__ import annotations

import pytest

from firstfault.extract import nccl
from firstfault.extract import traceback as tb
from firstfault.extract.base import LineExtractor
from tests.extract import helpers

ALL: tuple[LineExtractor, ...] = (*nccl.EXTRACTORS, *helpers.APPLICATION)


@pytest.mark.parametrize("line", [
    "caused by: UnmarshalError: failed to unmarshal error message",
    "caused by: SerializationError: failed to decode S3 XML error response",
    "  caused by: RequestError: send request failed",
])
def test_a_go_error_chains_link_is_no_exception(line: str) -> None:
    assert line.strip().split(": ")[0] + ":" in tb.GO_CHAIN_LINKS
    assert tb.spelled_exception(line) is None
    drafts = helpers.scan(ALL, [line], "application")
    assert not any(d.kind == "app.exception" for d in drafts)


@pytest.mark.parametrize(("line", "cls"), [
    # a JVM's chain: its class is an exception the JVM threw (the words' case tells Java's from Go's)
    ("Caused by: java.io.IOException: Connection reset by peer", "IOException"),
    # the words in a sentence of a program's own, not a chain's link at the line's head
    ("Training aborted, caused by: ValueError: batch size must divide the world size", "ValueError"),
])
def test_other_lines_that_say_caused_by_are_still_read(line: str, cls: str) -> None:
    exc = tb.spelled_exception(line)
    assert exc is not None and exc.cls == cls
