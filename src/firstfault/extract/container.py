"""Container runtimes and the launchers that start a job in a container, in their own words.

Slurm's pyxis and enroot, Apptainer, runc and containerd under Docker, CRI-O or the kubelet, the NVIDIA Container
Toolkit's hook and CDI: the texts and what each says (the node's plumbing, the registry, the job's own container
spec, or only that the container did not start) are catalog/platform.yaml's `container_errors`. The toolkit unable to
talk to the driver is NVML's table (extract/gpu.py, node.driver): a line that table reads is left to it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from firstfault.catalog.tables import ContainerError, container_contexts, container_errors, container_retries
from firstfault.extract.base import Draft, LineContext, LineExtractor
from firstfault.extract.gpu import nvml_report
from firstfault.model import FieldValue

_MESSAGE_CLIP = 400


@dataclass(frozen=True, slots=True)
class ContainerRead:
    """The row of catalog/platform.yaml that decides a line, and where the report starts."""

    row: ContainerError
    start: int


def container_report(text: str) -> ContainerRead | None:
    """The container error a text reports, or None.

    Every row whose text the line holds is found (a `quoted` row only after a container's words: a context of the
    table or a `start` row's text). Of the rows that say why (node, registry, job) the one that ends last decides (the
    longer where two end together): a Go error chain prints its wrappers first and the deepest error last. A `start`
    row decides only where no such row stands. None also where NVML's table reads the line (the toolkit failing to
    reach the driver: node.driver).
    """
    found: list[tuple[int, ContainerError]] = []
    for row in container_errors():
        at = text.rfind(row.text)
        if at >= 0:
            found.append((at, row))
    if not found:
        return None
    starts = [at for at, row in found if row.container_class == "start"]
    contexts = [i for i in (text.find(c) for c in container_contexts()) if i >= 0]
    before = min(starts + contexts, default=len(text))
    kept = [(at, row) for at, row in found if not row.quoted or before < at]
    if not kept or nvml_report(text) is not None:
        return None
    decisive = [(at, row) for at, row in kept if row.container_class != "start"]
    if decisive:
        at, row = max(decisive, key=lambda d: (d[0] + len(d[1].text), len(d[1].text)))
    else:
        at, row = min(kept, key=lambda k: (k[0], -len(k[1].text)))
    return ContainerRead(row, min([at, *starts, *contexts]))


def container_fields(text: str) -> dict[str, FieldValue] | None:
    """container.error's fields for a text that reports a container error (container_report), or None; `reported_by`
    `kubelet` where the line is the kubelet's report of one try, which it retries (catalog/platform.yaml)."""
    read = container_report(text)
    if read is None:
        return None
    message = text[read.start:].strip()
    if len(message) > _MESSAGE_CLIP:
        message = message[:_MESSAGE_CLIP - 3] + "..."
    fields: dict[str, FieldValue] = {"runtime": read.row.runtime, "error": read.row.container_class,
                                     "text": read.row.text, "message": message}
    if any(w in text for w in container_retries()):
        fields["reported_by"] = "kubelet"  # one try of the kubelet, which retries it
    return fields


class ContainerErrorExtractor:
    """A container that could not be made or started, in its runtime's or launcher's words (catalog/platform.yaml)."""

    name = "container"
    # The event kinds this extractor emits and their fields (docs/events.md; extract/registry.py).
    emits: Mapping[str, frozenset[str]] = {
        "container.error": frozenset({"runtime", "error", "text", "message", "reported_by"}),
    }
    sources: frozenset[str] = frozenset({"application", "syslog", "scheduler"})
    literals: tuple[str, ...] = tuple(row.text for row in container_errors())

    def extract(self, line: str, ctx: LineContext) -> Iterator[Draft]:
        fields = container_fields(line)
        if fields is not None:
            yield Draft(kind="container.error", fields=fields)


EXTRACTORS: tuple[LineExtractor, ...] = (ContainerErrorExtractor(),)
