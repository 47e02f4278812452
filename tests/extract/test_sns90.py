"""Storage and network causes the tables missed (issue 25), each read as data: the printing program's words, the
status or code they carry looked up in its table. Lines with their threads (or the printing program's source); each
block has its look-alikes that must not be read so.
"""

from __future__ import annotations

import pytest

from tests.extract.test_b7pass import feed  # every extractor, as the scanner runs them, on an application log


# ---------------------------------------------------------------- the Hugging Face Hub's retry notice
# huggingface_hub utils/_http.py http_backoff logs each retry it makes: `HTTP Error {status} thrown while requesting
# {method} {url}` for a status in its retry list, `'{err}' thrown while requesting {method} {url}` for a Timeout or
# ConnectionError. The hub's files answering 429 / 5xx, or dropping a connection they took, are the store's side.


@pytest.mark.parametrize(
    "line",
    [
        # pytorch/torchtitan#2239: 48 nodes' load_dataset of allenai/c4 throttled by the hub
        "HTTP Error 429 thrown while requesting GET https://huggingface.co/api/datasets/allenai/c4/tree/"
        "1588ec454efa1a09f29cd18ddd04fe05fc8653a2/en?expand=false&recursive=true&limit=1000",
        # Algomancer/gptcore#2: the hub closed a streamed dataset file's connection mid-read
        "'(ProtocolError('Connection aborted.', RemoteDisconnected('Remote end closed connection without response')), "
        "'(Request ID: fd98ddf2-4690-4322-b018-8226d93d2e7d)')' thrown while requesting GET "
        "https://huggingface.co/datasets/monology/pile-uncopyrighted/resolve/main/train/14.jsonl.zst",
    ],
)
def test_the_hubs_retry_notice_of_its_own_status_or_a_dropped_read_is_the_stores(line: str) -> None:
    assert [(e.kind, e.fields.get("fs")) for e in feed([line])] == [("storage.error", "object_store")]


@pytest.mark.parametrize(
    "line",
    [
        # Toyhom/CLV#2: the node could not connect to the hub at all (connect timeout): its route out, not the store
        "'(MaxRetryError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded with url: "
        "/uer/gpt2-chinese-cluecorpussmall/resolve/main/tokenizer_config.json (Caused by ConnectTimeoutError("
        "<urllib3.connection.HTTPSConnection object at 0x000001A156B1A550>, 'Connection to huggingface.co timed out. "
        "(connect timeout=10)'))\"), '(Request ID: 8ba9b399-402e-463b-b2cf-cca80e22006a)')' thrown while requesting "
        "HEAD https://huggingface.co/uer/gpt2-chinese-cluecorpussmall/resolve/main/tokenizer_config.json",
        # AUTOMATIC1111/stable-diffusion-webui#17165: no route out of the node (Network is unreachable)
        "WARNING:huggingface_hub.utils._http:'(MaxRetryError(\"HTTPSConnectionPool(host='huggingface.co', port=443): "
        "Max retries exceeded with url: /openai/clip-vit-large-patch14/resolve/main/merges.txt (Caused by "
        "NewConnectionError('<urllib3.connection.HTTPSConnection object at 0x7fc30f2ea230>: Failed to establish a new "
        "connection: [Errno 101] Network is unreachable'))\"), '(Request ID: 5f7287e5-2203-46b5-9dcf-e03db5035a99)')' "
        "thrown while requesting HEAD https://huggingface.co/openai/clip-vit-large-patch14/resolve/main/merges.txt",
        # the same notice of the job's own request refused (a status outside the retry list's, written here): no
        # server's error
        "HTTP Error 401 thrown while requesting GET https://huggingface.co/api/models/meta-llama/Llama-2-7b-hf",
        # the retry loop's next line: says nothing of whose failure
        "Retrying in 1s [Retry 1/5].",
    ],
)
def test_a_connection_the_node_never_made_or_the_jobs_request_is_not_the_stores(line: str) -> None:
    assert all(e.kind != "storage.error" for e in feed([line]))
