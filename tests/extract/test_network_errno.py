"""ENODEV on a network operation: a socket's bind or connect to an address whose interface the node does not have is
the job's own set-up (catalog/exceptions.yaml `errnos` `network_setup`), never a peer's failure; the same errno on
mmap stays the mount's, and on a device's open or a transport's verbs call names no set-up.

Provenance: the ZeroMQ lines are vllm-project/vllm#42149 (vLLM's P2P NCCL connector binding an IPv6 literal written
without brackets: `zmq.error.ZMQError: No such device (addr='tcp://2605:...:21001')`); the frames are pyzmq's
(zmq/sugar/socket.py Socket.bind, which appends ` (addr=...)` to the error, then the Cython backend's Socket.bind and
_check_rc); ZeroMQ's zmq_bind(3) lists ENODEV, "The requested address specifies a nonexistent interface". The
near-miss device line is ours (an os.open of a /dev path the node lacks); the verbs line is libibverbs' strerror
after a call, as extract/verbs.py reads it."""

from __future__ import annotations

from firstfault.extract.excclass import setup_errno
from tests.extract.helpers import events

_ZMQ_BIND = [
    "Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.10/site-packages/vllm/distributed/kv_transfer/kv_connector/v1/p2p/'
    'p2p_nccl_engine.py", line 120, in __init__',
    "    self.router_socket.bind(f\"tcp://{self.zmq_address}\")",
    '  File "/usr/local/lib/python3.10/site-packages/zmq/sugar/socket.py", line 320, in bind',
    "    super().bind(addr)",
    '  File "zmq/backend/cython/_zmq.py", line 1009, in zmq.backend.cython._zmq.Socket.bind',
    '  File "zmq/backend/cython/_zmq.py", line 190, in zmq.backend.cython._zmq._check_rc',
    "zmq.error.ZMQError: No such device (addr='tcp://2605:340:cd51:4900:d73:4aba:b23d:2190:21001')",
]
# the same error with its head cut off, as a posted log often has it: the endpoint in the message names the socket
_ZMQ_CUT = [
    '  File "zmq/backend/cython/_zmq.py", line 190, in zmq.backend.cython._zmq._check_rc',
    "zmq.error.ZMQError: No such device (addr='tcp://2605:340:cd51:4900:d73:4aba:b23d:2190:21002')",
]
_DEVICE_OPEN = [
    "Traceback (most recent call last):",
    '  File "/opt/train.py", line 40, in open_dev',
    '    fd = os.open("/dev/infiniband/uverbs0", os.O_RDWR)',
    "OSError: [Errno 19] No such device: '/dev/infiniband/uverbs0'",
]
# a peer's refusal on the same socket library: the peer's, not the set-up
_ZMQ_REFUSED = [
    "Traceback (most recent call last):",
    '  File "/opt/serve.py", line 12, in main',
    '    sock.connect("tcp://10.0.0.2:5555")',
    '  File "/usr/local/lib/python3.10/site-packages/zmq/sugar/socket.py", line 330, in connect',
    "    super().connect(addr)",
    "zmq.error.ZMQError: Connection refused (addr='tcp://10.0.0.2:5555')",
]


def _exceptions(lines: list[str]) -> list[tuple[str, object, object]]:
    return [(e.kind, e.fields.get("errno"), e.fields.get("setup")) for e in events(lines)
            if e.kind in ("app.exception", "storage.error")]


def test_enodev_on_a_socket_bind_is_the_set_up() -> None:
    assert _exceptions(_ZMQ_BIND) == [("app.exception", "ENODEV", True)]
    assert _exceptions(_ZMQ_CUT) == [("app.exception", "ENODEV", True)]
    # a socket's bind that a message names, in any program's words
    assert setup_errno("bind(2) on eth9 failed: No such device") == "ENODEV"
    assert setup_errno("No such device (addr='tcp://[fe80::1%eth9]:5555')") == "ENODEV"


def test_enodev_elsewhere_is_no_set_up() -> None:
    # near miss: a device the node does not have, opened as a file: the job's exception, not a network set-up
    assert _exceptions(_DEVICE_OPEN) == [("app.exception", "ENODEV", None)]
    # near miss: a transport's verbs call on an adapter (the RDMA stack's, extract/verbs.py), and a function whose
    # name only holds the word
    assert setup_errno("ibv_modify_qp failed: No such device", transport=True) is None
    assert setup_errno("rdma_bind_addr failed: No such device") is None
    # near miss: a peer's refusal through the same library is the peer's (a symptom), never the set-up
    assert setup_errno("Connection refused (addr='tcp://10.0.0.2:5555')") is None
    assert [e.kind for e in events(_ZMQ_REFUSED) if e.kind.startswith(("app.", "nccl."))] == ["nccl.remote_error"]
