"""The KV-cache transfer engines of disaggregated serving in their own words (catalog/transport.yaml, stacks nixl and
mooncake; UCX's `Request canceled`; NIXL's binding's exception classes).

Lines marked with a thread are verbatim from that public report; the ones marked synthetic follow the format string of
the source named (glog's head, which both engines print through: `E0508 00:47:57.974497  611 file.cpp:N] msg`).
"""

from __future__ import annotations

from firstfault.extract.traceback import exception_shape

# ---------------------------------------------------------------- the binding's exception classes


def test_a_bindings_lower_camel_class_ends_a_traceback_when_qualified() -> None:
    exc = exception_shape("nixl._bindings.nixlBackendError: NIXL_ERR_BACKEND")
    assert exc is not None and exc.cls == "nixlBackendError"
    # near misses: unqualified, or a lower-case word that is no class
    assert exception_shape("nixlBackendError: NIXL_ERR_BACKEND") is None
    assert exception_shape("nixl.agent.created: ok") is None
    assert exception_shape("torch.cuda.error: x") is None
