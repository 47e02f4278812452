"""Which side firstfault reads each of NCCL's own WARN messages as, read whole from NCCL's (and RCCL's) sources.

Reads every `WARN(...)` call, and every `INFO(...)` whose words report a failure, from snapshots of the NCCL and
RCCL repositories (git directories, e.g. from a `fetch` of github:NVIDIA/nccl, github:ROCm/rccl), at each tag
asked for; keeps the ncclResult_t the code returns right after it; fills the format string in (`%s` -> a word,
`%d` -> a number, ...); prints it as that release's debug.cc prints it (`host:pid:tid [dev] file.cc:line NCCL WARN
msg`, with the function in parentheses since 2.30.7), and also as PyTorch quotes it after `Last error:` (the
message alone); puts each through firstfault (the line extractors, then a one-line bundle through Analyzer) and
counts, per source file and per side, the messages read as the side this script's own table expects (EXPECT,
written from the source file and the result, before looking at what firstfault says), as another side, or not at
all. Not a test: the snapshots are not in the repository.

    .venv/bin/python bench/nccl_scan.py --nccl DIR[@TAG,TAG] [--rccl DIR[@TAG]] [--aws-ofi DIR] [--list] [--miss]

Sides: net (the network: IB / socket / bootstrap / proxy transports, a peer's words), job (the job's own set-up or
use of NCCL: argument checks, invalid usage, the enqueue path), node (the node: shared memory, CUDA / NVML /
GDRCopy calls, topology, intra-node transports, NVLS / MNNVL), none (no side to read: a warning NCCL goes on
from, NCCL's internal state; right when firstfault makes no cause of it), info (an INFO line: right when no cause).
"""

from __future__ import annotations

import argparse
import copy
import itertools
import re
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from firstfault.analysis.analyze import Analyzer
from firstfault.collect.scan import Extraction, all_line_extractors
from firstfault.extract.base import Candidate
from firstfault.model import Event

RESULTS = ("ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError", "ncclInvalidArgument",
           "ncclInvalidUsage", "ncclRemoteError", "ncclInProgress", "ncclTimeout")
_RESULT = re.compile(r"\b(" + "|".join(RESULTS) + r")\b")

# The expected side, first match wins: (source path pattern, result or None for any, message pattern, side). Written
# from NCCL's layout (and RCCL's additions) and the result the WARN returns, before any reading by firstfault; the
# message rules at the top were added after the first run, where the file and the result alone said less than the
# words do: a message naming a setting or a file the job gives NCCL (NCCL_SOCKET_IFNAME, NCCL_TOPO_FILE's XML, which
# NCCL's parser only ever reads from a file), /dev/shm as the job's container sizes it (catalog/platform.yaml's
# reading), a fallback NCCL goes on from, a completion or adapter event whatever the function that logs it returns,
# a NULL pointer or handle NCCL's own code passed (NCCL's state, whatever result it returns).
EXPECT: tuple[tuple[str, str | None, str, str], ...] = (
    (r".", None, r"Got completion|[Aa]sync (?:error |fatal )?event|Got CQE", "net"),
    (r".", None, r"No IP interface found|falling back|Could not open XML topology file", "none"),
    # NCCL's own pointers and handles checked for NCCL's own callers (ncclInvalidArgument all the same): its state;
    # the argument checks' (the caller's NULL communicator or buffer) stay the job's
    (r"^(?!.*misc/argcheck\.cc$)", None,
     r"pass NULL|is NULL|is null|file descriptor is -1|socket is invalid|invalid socket|must be provided"
     r"|uninitialized|wrong socket state", "none"),
    (r".", None, r"Check the IMEX configuration|NVLink SHARP|Fabric Manager", "node"),
    (r".", None, r"NCCL_[A-Z0-9_]{3,}|XML|interface found|AF_INET|creat\w* shared memory|Duplicate GPU"
                 r"|Mismatched NCCL version|NCCL version mismatch|Message truncated|message truncated"
                 r"|collective mismatch|library is too old|reverse path", "job"),
    # a WARN that returns success (or nothing this scan finds) is a warning: NCCL goes on
    (r".", "ncclSuccess", r".", "none"),
    (r".", "ncclInProgress", r".", "none"),
    # the caller's arguments and usage, wherever checked
    (r".", "ncclInvalidArgument", r".", "job"),
    (r".", "ncclInvalidUsage", r".", "job"),
    (r"misc/argcheck\.cc$", None, r".", "job"),
    # a peer's failure reported to this rank: the network's side (a symptom there)
    (r".", "ncclRemoteError", r".", "net"),
    # CUDA calls failing: the node's GPU or driver
    (r".", "ncclUnhandledCudaError", r".", "node"),
    # aws-ofi-nccl's CUDA calls and its reading of the node's topology
    (r"nccl_ofi_cuda|nccl_ofi_topo|platform-aws", None, r".", "node"),
    # the inter-node transports and their control paths
    (r"transport/net_ib|net_ib\.cc$|transport/net_socket\.cc$|misc/socket\.cc$|bootstrap\.cc$|proxy\.cc$"
     r"|transport/net\.cc$|transport/coll_net\.cc$|misc/ibvwrap\.cc$|misc/mlx5dvwrap\.cc$|plugin/net|net\.cc$"
     r"|gin/|ras/|misc/ibvsymbols|socket\.h$|ibvwrap\.h$|include/net|nccl_net_ofi|nccl_ofi", None, r".", "net"),
    # the node: intra-node transports, shared memory, CUDA/NVML/GDR wrappers, memory, topology, NVLS/MNNVL
    (r"transport/shm\.cc$|transport/p2p\.cc$|transport/nvls\.cc$|mnnvl\.cc$|misc/shmutils\.cc$|include/shm\.h$"
     r"|os/linux|misc/nvmlwrap\.cc$|misc/cudawrap\.cc$|misc/gdrwrap\.cc$|gdrwrap\.h$|cudawrap\.h$|alloc\.h$"
     r"|allocator\.cc$|mem_manager\.cc$|register/|graph/|misc/rocmwrap|hip|rocm|amd|msccl", None, r".", "node"),
    # NCCL's own state elsewhere (init, group, the launcher's plumbing): no side of its own
    (r".", "ncclInternalError", r".", "none"),
    (r".", "ncclSystemError", r".", "node"),
    (r".", None, r".", "none"),
)


def expected(path: str, result: str | None, fmt: str) -> str:
    for pattern, res, words, side in EXPECT:
        if (res is None or res == result) and re.search(pattern, path) and re.search(words, fmt):
            return side
    return "none"


@dataclass(frozen=True)
class Call:
    program: str
    tag: str
    path: str
    lineno: int
    func: str
    level: str  # WARN or INFO
    fmt: str
    result: str | None


# -------------------------------------------------------------------------- reading the sources

_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')
_INT_MACROS = {"PRIx64": "lx", "PRIu64": "lu", "PRId64": "ld", "PRIi64": "ld", "PRIx32": "x", "PRIu32": "u",
               "PRId32": "d", "PRIxPTR": "lx", "PRIuPTR": "lu", "PRIX64": "lX"}
_FUNC = re.compile(r"^(?:[\w:<>*&~ ]+?\s)?[*&]?(?P<name>[A-Za-z_]\w*(?:::~?\w+)?)\s*\([^;{}]*\)\s*(?:const\s*)?"
                   r"(?:override\s*)?\{", re.M)
_KEYWORDS = frozenset({"if", "for", "while", "switch", "catch", "else", "do", "return", "sizeof", "defined"})
_FAILURE_WORDS = re.compile(r"fail|error|unable|cannot|can't|could not|couldn't|invalid|mismatch|timeout|abort",
                            re.I)


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, check=False).stdout


def _balanced(text: str, start: int) -> int:
    """The index just past the `)` that closes the `(` at text[start], skipping strings and chars."""
    depth, i, n = 0, start, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def _format_of(args: str) -> str | None:
    """The format string of a call's arguments: the literals (and PRI macros) up to the first comma outside them."""
    out: list[str] = []
    i, n = 0, len(args)
    while i < n:
        c = args[i]
        if c.isspace() or c == "\\":
            i += 1
        elif c == '"':
            m = _LITERAL.match(args, i)
            if m is None:
                return None
            out.append(m[1])
            i = m.end()
        elif c == "," or c == ")":
            break
        elif (m := re.match(r"[A-Za-z_]\w*", args[i:])) is not None:
            word = m[0]
            out.append(_INT_MACROS.get(word, "%s"))  # "%" PRIx64 -> "%" "lx"; a macro's string parameter -> %s
            i += len(word)
        else:
            return None
    return "".join(out) if out else None


def _calls_in(program: str, tag: str, path: str, text: str) -> Iterator[Call]:
    funcs = [(m.start(), m["name"]) for m in _FUNC.finditer(text) if m["name"] not in _KEYWORDS]
    # aws-ofi-nccl logs through NCCL's logger with its own macros, `NET/OFI ` before each message
    call = r"(?<![\w.])NCCL_OFI_(WARN|INFO)\(" if program == "aws-ofi" else r"(?<![\w.])(WARN|INFO)\("
    for m in re.finditer(call, text):
        level = m[1]
        end = _balanced(text, m.end() - 1)
        inner = text[m.end():end - 1]
        if level == "INFO":
            # INFO(FLAGS, fmt, ...): only those whose words report a failure
            flags_end = inner.find(",")
            if flags_end < 0 or not inner[:flags_end].strip().startswith(("NCCL_", "NCCL_NET", "NCCL_INIT")):
                continue
            inner = inner[flags_end + 1:]
        fmt = _format_of(inner.lstrip())
        if fmt is None or not fmt.strip() or fmt.strip() in ("%s",):
            continue
        if level == "INFO" and (not _FAILURE_WORDS.search(fmt) or "%s:%d -> %d" in fmt):
            continue
        after = text[end:end + 400]
        stop = re.search(r"\n\s*\}\s*\n\s*\n|\bWARN\(|\bINFO\(", after)
        window = after[:stop.start()] if stop else after
        res = _RESULT.search(window)
        lineno = text.count("\n", 0, m.start()) + 1
        func = next((name for pos, name in reversed(funcs) if pos < m.start()), "").rsplit("::", 1)[-1]  # __func__
        yield Call(program, tag, path, lineno, func, level, fmt, res[1] if res else None)


def read_calls(program: str, repo: str, tag: str, roots: list[str]) -> list[Call]:
    files = [f for f in _git(repo, "ls-tree", "-r", "--name-only", tag, "--", *roots).splitlines()
             if f.endswith((".cc", ".c", ".h", ".cu", ".cpp", ".hpp")) and "/test" not in f and "windows" not in f]
    calls: list[Call] = []
    for f in files:
        text = _git(repo, "show", f"{tag}:{f}")
        if "WARN(" not in text and "INFO(" not in text:
            continue
        calls.extend(_calls_in(program, tag, f, text))
    return calls


# -------------------------------------------------------------------------- printing them as NCCL does

_SPEC = re.compile(r"%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?(hh|h|ll|l|z|j|t|L)?([diouxXeEfgGcspm%])")


def fill(fmt: str) -> str:
    def one(m: re.Match[str]) -> str:
        conv = m[5]
        return {"%": "%", "s": "x0y", "m": "x0y", "p": "0x7f3c5e00", "c": "c", "x": "1f", "X": "1F",
                "f": "1.5", "e": "1.5", "g": "1.5", "E": "1.5", "G": "1.5"}.get(conv, "3")
    text = fmt.encode().decode("unicode_escape", errors="replace") if "\\" in fmt else fmt
    return _SPEC.sub(one, text).replace("\n", " ").strip()


def shown(call: Call) -> str:
    """The line as the release prints it, on node-02's GPU 2."""
    file = call.path.removeprefix("src/").removeprefix("projects/rccl/src/")
    msg = fill(call.fmt)
    if call.program == "aws-ofi":
        msg = "NET/OFI " + msg
        if call.level == "WARN":  # the plugin's function where NCCL puts the file (a C build's name)
            return f"node-02:1234:1300 [2] {call.func or 'nccl_net_ofi_init'}:{call.lineno} NCCL WARN {msg}"
    if call.level == "INFO":
        return f"node-02:1234:1300 [2] NCCL INFO {msg}"
    if call.program == "nccl" and call.tag in ("HEAD", "v2.30.7-1") and call.func:
        return f"node-02:1234:1300 [2] {file}:{call.lineno} ({call.func}) NCCL WARN {msg}"
    return f"node-02:1234:1300 [2] {file}:{call.lineno} NCCL WARN {msg}"


# -------------------------------------------------------------------------- what firstfault reads

WORKLOAD = {
    "apiVersion": "firstfault/v1",
    "workload": {"id": "77", "scheduler": "static",
                 "window": {"start": "2026-11-02T10:00:00Z", "end": "2026-11-02T11:00:00Z"},
                 "nodes": ["node-01", "node-02", "node-03"],
                 "ranks": {"node-01": "0-1", "node-02": "2-3", "node-03": "4-5"}, "terminal_state": "FAILED"},
    "sources": [{"kind": "kernel", "path": "nodes/{node}/kern.log"},
                {"kind": "application", "path": "app/rank-{rank}.log"}],
}
_NET_TRANSPORTS = {"ib", "socket", "bootstrap", "proxy", "collnet", "ofi", "ucx"}
_NODE_TRANSPORTS = {"nvls", "p2p", "shm"}
_DOMAIN_SIDE = {"software": "job", "network": "net", "hardware": "node", "infrastructure": "node"}


def _events(line: str) -> tuple[list[Event], bool]:
    ex = Extraction(all_line_extractors())
    drafts, ctx = ex.drafts(Candidate("application", "app.log", 1, "node-02", 2, None, line))
    claimed = bool(drafts) or (ctx is not None and ctx.claimed)
    return list(Extraction(all_line_extractors()).events(Candidate("application", "app.log", 1, "node-02", 2, None,
                                                                    line))), claimed


def _event_side(evs: list[Event]) -> str:
    kinds = {e.kind for e in evs}
    if kinds & {"nccl.remote_error", "nccl.ib_completion_error", "net.link", "net.ib_verbs_error"}:
        return "net"
    for e in evs:
        f = e.fields
        if f.get("setup") or (e.kind == "app.exception"):
            return "job"
        if f.get("nccl_result") in ("ncclInvalidUsage", "ncclInvalidArgument"):
            return "job"
        if f.get("transport") in _NET_TRANSPORTS:
            return "net"
        if f.get("transport") in _NODE_TRANSPORTS or f.get("cuda_class") or f.get("local_status"):
            return "node"
    if kinds & {"nccl.error", "nccl.communicator_aborted"}:
        return "generic"
    return "other:" + ",".join(sorted(kinds)) if kinds else ""


def read(line: str, analyzer: Analyzer, tmp: Path, n: int) -> tuple[str, str]:
    """(side, what) firstfault reads the line as: a cause's domain, else its events' side, else generic /
    benign (claimed, no event) / unread; `what` ends ` +unrec` where the verdict lists the line as unrecognized."""
    evs, claimed = _events(line)
    root = tmp / f"b{n}"
    (root / "app").mkdir(parents=True)
    (root / "workload.yaml").write_text(yaml.safe_dump(copy.deepcopy(WORKLOAD), sort_keys=False))
    (root / "app" / "rank-2.log").write_text(line + "\n")
    v = analyzer.analyze_path(str(root))
    unrec = " +unrec" if v.unrecognized else ""
    if v.root_cause is not None:
        return (_DOMAIN_SIDE.get(v.attributed_domain, str(v.attributed_domain)),
                "cause " + v.root_cause.category + unrec)
    side = _event_side(evs)
    if side:
        return side, "symptom " + ",".join(sorted({e.kind for e in evs})) + unrec
    return ("benign", "claimed" + unrec) if claimed else ("unread", "-" + unrec)


def verdict(exp: str, side: str, what: str) -> str:
    """right / other / unread. A warning is read right when no cause is made of it, an INFO line when it is
    neither made a cause nor listed as unrecognized (NCCL went on, or it is a failure's aftermath)."""
    if exp == "info":
        return "other" if what.startswith("cause ") else "unread" if what.endswith(" +unrec") else "right"
    if exp == "none":
        return "other" if what.startswith("cause ") else "right"
    if side == exp:
        return "right"
    return "unread" if side in ("generic", "benign", "unread") else "other"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nccl", help="DIR[@TAG,TAG...] (default HEAD)")
    ap.add_argument("--rccl", help="DIR[@TAG,...]")
    ap.add_argument("--aws-ofi", dest="aws_ofi", help="DIR[@TAG,...]")
    ap.add_argument("--list", action="store_true", help="every message with its expected side and reading")
    ap.add_argument("--miss", action="store_true", help="only the messages not read as the expected side")
    ap.add_argument("--quoted", action="store_true", help="also the message alone, as PyTorch's `Last error:`")
    ap.add_argument("--info", action="store_true", help="only the INFO lines")
    args = ap.parse_args()
    calls: list[Call] = []
    for program, spec, roots in (("nccl", args.nccl, ["src"]), ("rccl", args.rccl, ["src", "projects/rccl/src"]),
                                 ("aws-ofi", args.aws_ofi, ["src", "include"])):
        if not spec:
            continue
        repo, _, tags = spec.partition("@")
        for tag in (tags.split(",") if tags else ["HEAD"]):
            calls.extend(read_calls(program, repo, tag, roots))
    seen: set[tuple[str, str, str]] = set()
    analyzer = Analyzer()
    counts: Counter[tuple[str, str, str]] = Counter()
    by_file: dict[str, Counter[str]] = defaultdict(Counter)
    bundles = itertools.count()
    with tempfile.TemporaryDirectory() as td:
        for call in calls:
            key = (call.program, call.path.rsplit("/", 1)[-1], call.fmt)
            if key in seen:
                continue
            seen.add(key)
            if args.info and call.level != "INFO":
                continue
            exp = "info" if call.level == "INFO" else expected(call.path, call.result, call.fmt)
            lines = [("header", shown(call))]
            if args.quoted and call.level == "WARN":
                lines.append(("quoted", fill(call.fmt)))
            for form, line in lines:
                side, what = read(line, analyzer, Path(td), next(bundles))
                got = verdict(exp, side, what)
                counts[(form, exp, got)] += 1
                if form == "header":
                    by_file[call.path.rsplit("/", 1)[-1]][got] += 1
                if args.list or (args.miss and got != "right"):
                    print(f"{form:6} {exp:5} {got:6} {side:8} {what:40} {call.program}@{call.tag} "
                          f"{call.path}:{call.lineno} [{call.result or '-'}] {line}")
    for form in ("header", "quoted"):
        total = sum(n for (f, _, _), n in counts.items() if f == form)
        if not total:
            continue
        print(f"{form}: {total} messages")
        for exp in ("net", "job", "node", "none", "info"):
            row = {g: counts[(form, exp, g)] for g in ("right", "other", "unread")}
            if sum(row.values()):
                print(f"  {exp:5} " + ", ".join(f"{g} {n}" for g, n in row.items()))
    print("per file (header form): right/other/unread")
    for file, c in sorted(by_file.items(), key=lambda kv: -sum(kv[1].values())):
        print(f"  {file:32} {c['right']:3} {c['other']:3} {c['unread']:3}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
