"""Which of a container runtime's own error format strings catalog/platform.yaml `container_errors` reads.

Reads the format strings from snapshots of the runtimes' repositories (git directories, e.g. from a `fetch` of
github:NVIDIA/enroot, github:NVIDIA/pyxis, github:apptainer/apptainer), fills each in (`%s` and `${x}` become `X`),
prints it as the runtime prints it (enroot's log under pyxis's `pyxis:     ` prefix, its helpers' err(3) with a
strerror, Apptainer's `FATAL:   ` and the starter's wrapper for the errors the engine returns) and asks
extract/container.py's container_report for its class. Not a test: the snapshots are not in the repository.

    .venv/bin/python bench/container_scan.py --enroot DIR --pyxis DIR --apptainer DIR [--list]
"""

from __future__ import annotations

import argparse
import re
import subprocess
from collections import Counter
from dataclasses import dataclass

from firstfault.extract.container import container_report


@dataclass(frozen=True)
class Format:
    program: str
    path: str
    fmt: str
    line: str
    verdict: str | None


def _grep(repo: str, pattern: str, paths: list[str]) -> list[str]:
    out = subprocess.run(["git", "-C", repo, "grep", "-n", "-P", pattern, "HEAD", "--", *paths],
                         capture_output=True, text=True, check=False).stdout
    return [line.removeprefix("HEAD:") for line in out.splitlines()]


def _fill(fmt: str) -> str:
    fmt = fmt.replace('\\"', '"')
    fmt = re.sub(r"\$\{[^}]*\}|\$\([^)]*\)\)?|\$[0-9?]", "X", fmt)
    return re.sub(r"%[-0-9.]*[sdqvwuT]", "X", fmt).replace("\\n", "")


def _formats(args: argparse.Namespace) -> list[tuple[str, str, str, str]]:
    rows: list[tuple[str, str, str, str]] = []
    if args.enroot:
        for g in _grep(args.enroot, r'common::err "', ["src", "conf", "enroot.in"]):
            if (m := re.search(r'common::err "(.*?)"', g)) is not None:
                rows.append(("enroot", g.split(":")[0], m[1], "pyxis:     [ERROR] " + _fill(m[1])))
        for g in _grep(args.enroot, r'\berrx?\(EXIT_FAILURE, "', ["bin"]):
            if (m := re.search(r'(errx?)\(EXIT_FAILURE, "(.*?)"', g)) is not None:
                prog = g.split(":")[0].rsplit("/", 1)[-1].removesuffix(".c")
                tail = ": No such file or directory" if m[1] == "err" else ""
                rows.append(("enroot", g.split(":")[0], m[2], f"pyxis:     {prog}: {_fill(m[2])}{tail}"))
    if args.pyxis:
        for g in _grep(args.pyxis, r'slurm_error\("', ["*.c"]):
            if (m := re.search(r'slurm_error\("(.*?)"[,)]', g)) is not None:
                rows.append(("pyxis", g.split(":")[0], m[1], _fill(m[1])))
    if args.apptainer:
        for g in _grep(args.apptainer, r'sylog\.(Fatalf|Errorf)\("', ["cmd", "internal/pkg/runtime/launch"]):
            if (m := re.search(r'sylog\.(?:Fatalf|Errorf)\("(.*?)"[,)]', g)) is not None and m[1] not in ("%s", "%v"):
                rows.append(("apptainer", g.split(":")[0], m[1], "FATAL:   " + _fill(m[1])))
        engine = ["internal/pkg/runtime/launch", "internal/pkg/runtime/engine/apptainer", "internal/app/starter",
                  "internal/pkg/util/gpu", "internal/pkg/image"]
        for g in _grep(args.apptainer, r'(fmt\.Errorf|errors\.New)\("', engine):
            m = re.search(r'(?:fmt\.Errorf|errors\.New)\("(.*?)"[,)]', g)
            if m is not None and "_test.go" not in g and m[1] not in ("%s", "%v", "%w"):
                rows.append(("apptainer-engine", g.split(":")[0], m[1],
                             "FATAL:   container creation failed: " + _fill(m[1])))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--enroot")
    ap.add_argument("--pyxis")
    ap.add_argument("--apptainer")
    ap.add_argument("--list", action="store_true", help="every format string with its class")
    args = ap.parse_args()
    seen: set[tuple[str, str, str]] = set()
    found: list[Format] = []
    for program, path, fmt, line in _formats(args):
        if (program, path, fmt) in seen:
            continue
        seen.add((program, path, fmt))
        read = container_report(line)
        found.append(Format(program, path, fmt, line, read.row.container_class if read else None))
    if args.list:
        for f in found:
            print(f"{f.verdict or '-':9} {f.program:17} {f.path}: {f.fmt}")
    counts = Counter((f.program, f.verdict or "-") for f in found)
    for program in sorted({f.program for f in found}):
        total = sum(n for (p, _), n in counts.items() if p == program)
        parts = ", ".join(f"{v} {n}" for (p, v), n in sorted(counts.items()) if p == program)
        print(f"{program}: {total} format strings ({parts})")


if __name__ == "__main__":
    main()
