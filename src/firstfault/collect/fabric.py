"""The fabric, collected once per attempt: a file the site keeps, or the output of a command run now.

The Blueprint's `fabric:` (docs/blueprint.md) names one of the fabric
formats (extract/fabric.py) and where it comes from:

- `file`: a topology a cron job or the subnet manager's host writes
  (`ibnetdiscover > /var/lib/fabric/ibnetdiscover.txt`), or the site's
  inventory CSV; its time is the file's modification time;
- `command`: an argument list run without a shell (`[ibnetdiscover]`,
  `[ssh, sm01, iblinkinfo]`), bounded in time and in output; its time is when
  it ran.

The document goes to the sink as a `fabric` source's file would (so the
Service, a replay and the embedded engine read it alike), and the coverage
row says when the fabric was taken. It never raises: a command that fails or
a file that is missing is an error row, and the other evidence is read.
"""

from __future__ import annotations

import os
import select
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from firstfault.bundle import Context
from firstfault.collect.evidence import EvidenceSink
from firstfault.extract.documents import MAX_STRUCTURED_BYTES
from firstfault.model import CoverageItem, ErrorItem, iso


class FabricConnector:
    """Reads the fabric from a file or a command (exactly one), once per attempt."""

    name = "fabric"

    def __init__(self, fmt: str, *, file: Path | None = None, command: Sequence[str] | None = None,
                 timeout: float = 60.0, clock: Callable[[], datetime] | None = None) -> None:
        if (file is None) == (command is None):
            raise ValueError("give exactly one of a file or a command")
        self.fmt = fmt
        self.file = file
        self.command = list(command) if command is not None else None
        self.timeout = timeout
        self.clock = clock or (lambda: datetime.now(UTC))

    def collect(self, ctx: Context, words: Sequence[str], sink: EvidenceSink) -> None:
        del words  # the fabric is read whole: it holds no log line
        nodes = len(ctx.workload.nodes)
        if self.file is not None:
            label = str(self.file)
            data, taken, error = self._read_file(self.file)
        else:
            assert self.command is not None
            label = "command: " + " ".join(self.command)
            data, taken, error = self._run()
        if error is not None or data is None:
            sink.errors.append(ErrorItem(source="fabric", file=label, message=error or "no output"))
            sink.coverage.append(CoverageItem(source="fabric", status="error", nodes_seen=0, nodes_expected=nodes,
                                              lines=0, files=0, note=f"{label}: {error}"))
            return
        lines, problems = sink.add_document("fabric", self.fmt, label, data)
        broken = any(m.startswith("cannot") for _, m in problems)
        sink.coverage.append(CoverageItem(
            source="fabric", status="error" if broken else "complete" if lines else "empty",
            nodes_seen=0 if broken else nodes, nodes_expected=nodes, lines=lines, files=1,
            note=f"{self.fmt} taken at {iso(taken)}"))

    def _read_file(self, path: Path) -> tuple[bytes | None, datetime | None, str | None]:
        try:
            st = path.stat()
            if st.st_size > MAX_STRUCTURED_BYTES:
                return None, None, f"cannot read: {st.st_size} bytes is over the {MAX_STRUCTURED_BYTES} byte limit"
            return path.read_bytes(), datetime.fromtimestamp(st.st_mtime, UTC), None
        except OSError as exc:
            return None, None, f"cannot read: {exc.strerror or exc}"

    def _run(self) -> tuple[bytes | None, datetime | None, str | None]:
        """The command's output, read up to the document limit (a command that prints more is stopped)."""
        assert self.command is not None
        taken = self.clock()
        deadline = time.monotonic() + self.timeout
        try:
            with tempfile.TemporaryFile() as err, subprocess.Popen(self.command, stdout=subprocess.PIPE,
                                                                   stderr=err) as proc:
                assert proc.stdout is not None
                out = bytearray()
                fd = proc.stdout.fileno()
                while True:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        proc.kill()
                        return None, None, f"cannot read: the command ran past {self.timeout:g} s"
                    ready, _, _ = select.select([fd], [], [], left)
                    if not ready:
                        continue
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:
                        break
                    out += chunk
                    if len(out) > MAX_STRUCTURED_BYTES:
                        proc.kill()
                        return None, None, f"cannot read: the output is over the {MAX_STRUCTURED_BYTES} byte limit"
                try:
                    code = proc.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    proc.kill()
                    return None, None, f"cannot read: the command ran past {self.timeout:g} s"
                if code != 0:
                    err.seek(max(0, err.seek(0, os.SEEK_END) - 4096))
                    tail = err.read().decode("utf-8", errors="replace").strip().splitlines()[-1:] or [""]
                    return None, None, f"cannot read: the command exited {code}: {tail[0][:300]}"
                return bytes(out), taken, None
        except OSError as exc:
            return None, None, f"cannot read: the command could not start: {exc.strerror or exc}"


__all__ = ["FabricConnector"]
