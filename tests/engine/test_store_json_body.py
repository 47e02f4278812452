"""An object store's error body printed over several lines is read where its code stands on a line of its own
(extract/excclass.py `store_code_words` as error words of extract/unrecognized.py; traceback.words_cause, the last
resort of a failed attempt).

Google's JSON API answers an error with a body that clients print indented, one key a line (googleapis/
google-cloud-python#2161: `"reason": "rateLimitExceeded",` then `"code": 429,` and `"message": ...`). No line of it
held an error word, so no line reached the reading that knows the store's codes, and the failed job stayed `unknown`.
The near misses: the body's HTTP status alone (`"code": 429,` with no store reason: any service's, Vertex AI's as well
as Cloud Storage's), a code of the job's own request (`notFound`), a retry the client announced, a run that did not
fail."""

from __future__ import annotations

from typing import Any

import pytest

from firstfault.analysis.analyze import Analyzer
from tests.conftest import BundleMaker, workload_ending

# googleapis/google-cloud-python#2161 (dhermes's `print(content)` of the 429 body), verbatim
BODY = """{
 "error": {
  "errors": [
   {
    "domain": "usageLimits",
    "reason": "rateLimitExceeded",
    "message": "The project exceeded the rate limit for creating and deleting buckets."
   }
  ],
  "code": 429,
  "message": "The project exceeded the rate limit for creating and deleting buckets."
 }
}
"""


def _analyze(make_bundle: BundleMaker, text: str, state: str | None = "FAILED") -> Any:
    return Analyzer().analyze_path(str(make_bundle({"app/rank-0.log": "step 1 loss 0.5\n" + text},
                                                   workload_ending(state))))


def test_a_store_reason_on_a_line_of_its_own_is_the_stores_status(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, BODY)
    assert v.root_cause is not None and v.root_cause.category == "storage.object_store"
    assert v.root_cause.nodes == ["node-01"]
    assert "rateLimitExceeded" in (v.root_cause.why or "") or any(
        "rateLimitExceeded" in e.text for e in v.evidence if e.role == "cause")


@pytest.mark.parametrize("text", [
    BODY.replace('    "reason": "rateLimitExceeded",\n', ""),  # the HTTP status alone: any service's
    BODY.replace("rateLimitExceeded", "notFound"),  # the job's own request
    "WARNING: retrying upload after \"reason\": \"rateLimitExceeded\" (attempt 2 of 5)\n",  # a retry announced
])
def test_what_names_no_store_side_code_names_no_store_cause(make_bundle: BundleMaker, text: str) -> None:
    v = _analyze(make_bundle, text)
    assert v.root_cause is None or v.root_cause.category != "storage.object_store"


def test_a_run_that_succeeded_is_not_blamed_on_the_body(make_bundle: BundleMaker) -> None:
    v = _analyze(make_bundle, BODY, state="COMPLETED")
    assert (v.outcome, v.attributed_domain) == ("succeeded", "none")
