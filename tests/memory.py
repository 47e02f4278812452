"""Peak memory of a piece of code, measured in a fresh interpreter (never in the test process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
# VmHWM, not getrusage's ru_maxrss: Linux keeps ru_maxrss across exec, so a child of a large pytest
# process would report the parent's size at fork.
_FOOTER = """
def _peak():
    for _line in open("/proc/self/status"):
        if _line.startswith("VmHWM:"):
            return int(_line.split()[1]) * 1024
    raise RuntimeError("no VmHWM")
print("\\n@@peak", _peak())
"""


def run_measured(code: str, timeout: float = 120.0) -> tuple[str, int]:
    """Runs `code` in a new Python (firstfault importable) and returns (its stdout, its peak RSS in bytes).

    An exception in `code` is part of stdout (printed by the snippet itself); the snippet must not exit.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC), str(SRC.parent), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code) + _FOOTER], capture_output=True, text=True,
                          env=env, timeout=timeout, check=False)
    out = proc.stdout
    assert proc.returncode == 0 and "@@peak " in out, f"exit {proc.returncode}\n{out}\n{proc.stderr}"
    body, _, peak = out.rpartition("@@peak ")
    return body, int(json.loads(peak))


MB = 1 << 20
