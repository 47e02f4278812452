"""Outputs for finished verdicts: the terminal, the verdict database, webhooks, Alertmanager.

Every sink has `name` and `write(verdict, enrichment)` (firstfault.sinks.base.Sink).
A sink that could not deliver raises a SinkError subclass whose message says
what happened; the pipeline records it per sink and goes on with the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from firstfault.sinks.base import Sink, SinkError

if TYPE_CHECKING:
    from firstfault.sinks.alertmanager import AlertmanagerSink
    from firstfault.sinks.database import DatabaseSink
    from firstfault.sinks.stdout import StdoutSink
    from firstfault.sinks.webhook import Delivery, WebhookDeliveryError, WebhookSink

__all__ = ["AlertmanagerSink", "DatabaseSink", "Delivery", "Sink", "SinkError", "StdoutSink", "WebhookDeliveryError",
           "WebhookSink"]


def __getattr__(name: str) -> object:
    # Lazy: a stdout-only run should not import SQLAlchemy or httpx.
    if name == "StdoutSink":
        from firstfault.sinks.stdout import StdoutSink

        return StdoutSink
    if name == "DatabaseSink":
        from firstfault.sinks.database import DatabaseSink

        return DatabaseSink
    if name in ("WebhookSink", "Delivery", "WebhookDeliveryError"):
        from firstfault.sinks import webhook

        return getattr(webhook, name)
    if name == "AlertmanagerSink":
        from firstfault.sinks.alertmanager import AlertmanagerSink

        return AlertmanagerSink
    raise AttributeError(f"module 'firstfault.sinks' has no attribute {name!r}")
