"""What firstfault reads in the words vLLM, SGLang and Ray print on a failing run's path.

Reads the programs' own Python sources from snapshots (git directories: a `fetch` of github:vllm-project/vllm,
github:sgl-project/sglang, github:ray-project/ray, or a package's unpacked wheel committed into a git directory of
its own), finds with Python's `ast` the messages of `raise X(...)` and of `logger.error / critical / exception(...)`
(a string, an f-string, a concatenation, or a name bound to one in the same function), keeps those that a row of
EXPECT below is about, fills each (`{expr}` and `%s` become a word or a number), prints it as the program prints it
and asks firstfault's line extractors (collect/scan.Extraction, the production path) what they read:

    raise X(msg)      a traceback's last line, `Class: msg` (the program's own class with its module: `vllm.v1.engine.
                      exceptions.EngineDeadError: ...`), after a `Traceback (most recent call last):` header
    logger.error(msg) a record under the program's own logger format: vLLM's `(EngineCore_DP0 pid=4242) ERROR 05-01
                      12:00:00 [core.py:1757] msg`, SGLang's `[2026-05-01 12:00:00 TP0] msg`, Ray's `2026-05-01
                      12:00:00,123\tERROR services.py:1431 -- msg`

and, for the exception classes whose message is their `__str__`'s (Ray's), the class's line as Ray prints it
(CLASS_LINES). What each line means is decided here, in EXPECT's and CLASS_LINES' `expect` column, from the
class's docstring and the message's words, not from what firstfault says:

    setup     the job's set-up (a port in use, a KV cache or memory fraction that does not fit, a library or backend
              missing, resources the cluster lacks)           -> app.exception with setup
    peer      another process, worker, actor, engine or node died (a symptom) -> nccl.remote_error
    timeout   a wait ran out (a barrier, a start-up, an RPC; a symptom)        -> nccl.timeout
    collective a collective library failed, why said elsewhere                 -> nccl.error
    host_oom  the node's memory ran out (the kernel's or Ray's memory monitor) -> host.oom
    storage   the node's disk full                                             -> storage.*
    exception the workload's own exception                                     -> app.exception
    quiet     names no cause: what follows it (a traceback) or came before decides: right when nothing is read

Not a test: the snapshots are not in the repository.

    .venv/bin/python bench/program_scan.py --vllm DIR --sglang DIR --ray DIR [--list]
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
from collections import Counter
from dataclasses import dataclass

from firstfault.collect.scan import Extraction, all_line_extractors
from firstfault.extract.base import Candidate, Draft

TB = "Traceback (most recent call last):"

# (program, where: a regex on the file's path, message: a regex on the unfilled format string, expect, meaning).
# The first row whose file and message fit decides what the message means.
EXPECT: tuple[tuple[str, str, str, str, str], ...] = (
    # ---- vLLM
    ("vllm", r"v1/engine/core\.py", r"^EngineCore (?:failed to start|encountered a fatal error)\.", "quiet",
     "the engine core's own traceback follows"),
    ("vllm", r"v1/executor/multiproc_executor\.py", r"^WorkerProc failed(?: to start)?\.", "quiet",
     "the worker's own traceback follows"),
    ("vllm", r"v1/executor", r"^Worker proc %s died unexpectedly", "peer", "a worker process died"),
    ("vllm", r"v1/executor", r"^RayWorkerProc rank=%s died unexpectedly", "peer", "a Ray worker actor died"),
    ("vllm", r"v1/executor", r"^Executor failed\.$", "peer", "the executor after a worker died"),
    ("vllm", r"v1/executor", r"^One or more workers failed$|^Worker failed with error '", "peer",
     "a worker's failure reported by the executor"),
    ("vllm", r"v1/executor", r"^Worker \{i\} failed to initialize: ", "peer", "a Ray worker's start failed"),
    ("vllm", r"v1/executor", r"^RPC call to \{method\} timed out\.", "timeout", "workers did not answer in time"),
    ("vllm", r"v1/utils\.py", r"^Process \{proc\.name\} \(PID: \{proc\.pid\}\) died with exit code", "peer",
     "an engine or API process died"),
    ("vllm", r"v1/utils\.py", r"^Engine core process \{.*\} died unexpectedly", "peer", "the engine core died"),
    ("vllm", r"v1/engine/utils\.py", r"^(?:Engine core|Frontend process failed during engine core) initialization"
     r"|^Engine core initialization failed", "peer", "the API server after the engine failed to start"),
    ("vllm", r"v1/engine", r"^Timed out waiting for (?:new )?engine core processes to start", "timeout",
     "the engine did not start in time"),
    ("vllm", r"v1/engine", r"^Did not receive response from front-end process within", "timeout",
     "the front end did not answer in time"),
    ("vllm", r"v1/engine", r"^DP Coordinator process failed to report ZMQ addresses within timeout", "timeout",
     "the coordinator did not start in time"),
    ("vllm", r"distributed/utils\.py", r"^Barrier (?:departure )?timed out after", "timeout",
     "a barrier's wait ran out"),
    ("vllm", r"device_communicators/pynccl_wrapper\.py", r"^NCCL error: ", "collective", "an NCCL call failed"),
    ("vllm", r"device_communicators/pynccl", r"^Failed to load NCCL library from|^failed to load the NCCL library",
     "setup", "the NCCL library is not there or does not fit"),
    ("vllm", r"v1/core/kv_cache", r"^No available memory for the cache blocks|^To serve at least one request with "
     r"the model's max seq len", "setup", "the KV cache the memory fraction leaves does not fit"),
    ("vllm", r"v1/worker/utils\.py", r"^Free memory on device .* on startup is less than", "setup",
     "another process holds the memory the fraction asks for"),
    ("vllm", r"utils/network_utils\.py", r"^Could not find open port after", "setup", "every port tried was in use"),
    ("vllm", r"v1/executor/ray_utils\.py", r"^Cannot provide a placement group", "setup",
     "the cluster lacks the GPUs the parallel sizes ask for"),
    ("vllm", r"v1/executor/ray_utils\.py", r"^Failed to import Ray: ", "setup", "Ray not installed"),
    ("vllm", r"config/model\.py", r"^The model type \{model_type\} does not support float16", "setup",
     "a dtype the model does not support"),
    ("vllm", r"config/parallel\.py", r"^Unrecognized distributed executor backend", "setup", "a backend name"),
    ("vllm", r"model_executor/models/registry\.py", r"^Model architectures .* are not supported", "setup",
     "an architecture this build cannot serve"),
    # ---- SGLang
    ("sglang", r"entrypoints/engine\.py", r"^Received sigquit from a child process", "peer", "a child failed"),
    ("sglang", r"managers/tokenizer_manager\.py", r"^SIGQUIT received\. .*one child failed", "peer",
     "a child failed"),
    ("sglang", r"utils/watchdog\.py", r"^Subprocess \{name\} \(pid=\{proc\.pid\}\) crashed with exit code", "peer",
     "a child process died"),
    ("sglang", r"multimodal_gen/runtime/launch_server\.py", r"^Rank \{i\} scheduler is dead", "peer",
     "a scheduler process died"),
    ("sglang", r"", r"^(?:Scheduler|DetokenizerManager|TokenizerManager|DataParallelController|"
     r"MultiTokenizerRouter) hit an exception: ", "quiet", "the traceback in the record decides"),
    ("sglang", r"entrypoints/engine\.py", r"^Initialization failed\. Please see the error messages above", "peer",
     "the launcher after a child failed to start"),
    ("sglang", r"entrypoints/http_server\.py", r"^Initialization failed\. warmup error: ", "quiet",
     "the warmup's traceback decides"),
    ("sglang", r"utils/watchdog\.py", r"watchdog timeout \(", "timeout", "a forward batch hung past the watchdog"),
    ("sglang", r"entrypoints/http_server\.py", r"^Health check failed\. Server couldn't get a response", "timeout",
     "the detokenizer did not answer in time"),
    ("sglang", r"server_args\.py", r"^Port is already in use\.", "setup", "a port in use"),
    ("sglang", r"entrypoints/engine\.py", r"is already in use\. When running multiple instances", "setup",
     "a port in use"),
    ("sglang", r"model_runner", r"^Not enough memory\. Please try to increase --mem-fraction-static", "setup",
     "the KV cache the memory fraction leaves does not fit"),
    ("sglang", r"mem_cache", r"^alloc_req_slots runs out of memory\. Please set a smaller number", "setup",
     "the request pool the server's flags sized"),
    ("sglang", r"mem_cache/memory_pool_host\.py", r"^Not enough host memory available\.", "setup",
     "the hierarchical cache asked more host memory than is free"),
    ("sglang", r"managers/data_parallel_controller\.py", r"^Failed to receive worker ports from node 0 within timeout",
     "timeout", "node 0 did not answer in time"),
    ("sglang", r"disaggregation/mooncake/conn\.py", r"Prefill instance with bootstrap_port=.* is dead", "peer",
     "the prefill instance died"),
    ("sglang", r"sglang/utils\.py", r"^Server process exited with code", "peer", "the server process died"),
    # ---- Ray
    ("ray", r"_private/services\.py", r"^Failed to bind to \{host\}:\{port\} because it's already occupied", "setup",
     "a port in use"),
    ("ray", r"_private/node\.py", r"^The current node timed out during startup", "timeout",
     "the raylet or GCS did not start in time"),
    ("ray", r"_private/services\.py", r"^Timed out after \{timeout\} seconds while waiting for node to startup",
     "timeout", "the node did not start in time"),
    ("ray", r"_private/services\.py", r"^The requested object store memory size is greater than the total", "setup",
     "an object store size the node does not have"),
    ("ray", r"train/_internal/backend_executor\.py", r"^Placement group creation timed out\. Make sure your cluster",
     "setup", "the cluster lacks the resources the job asked for"),
    ("ray", r"dashboard/modules/job/job_manager\.py", r"^Job supervisor actor for \{job_id\} died", "peer",
     "the job's supervisor actor died"),
)


@dataclass(frozen=True)
class ClassLine:
    program: str
    path: str  # the file whose class and __str__ give the line
    line: str  # as the driver prints the exception's last line
    expect: str
    meaning: str


# Ray's exception classes (ray/exceptions.py), each as `ray.get` raises it into a driver, its message the class's
# __str__ or the exit detail Ray passes it (the C++ core worker's and raylet's words, filled).
CLASS_LINES: tuple[ClassLine, ...] = (
    ClassLine("ray", "ray/exceptions.py", "ray.exceptions.LocalRayletDiedError: The task's local raylet died. Check "
              "raylet.out for more information.", "peer", "the node's raylet died"),
    ClassLine("ray", "ray/exceptions.py", "ray.exceptions.WorkerCrashedError: The worker died unexpectedly while "
              "executing this task. Check python-core-worker-*.log files for more information.", "peer",
              "the task's worker died"),
    ClassLine("ray", "ray/exceptions.py", "ray.exceptions.ActorDiedError: The actor died unexpectedly before "
              "finishing this task.", "peer", "an actor died"),
    ClassLine("ray", "ray/exceptions.py", "ray.exceptions.RayActorError: The actor experienced an error before "
              "finishing this task.", "peer", "an actor died or is unreachable"),
    ClassLine("ray", "ray/exceptions.py", "ray.exceptions.ActorUnavailableError: The actor 0b1c is unavailable: "
              "The actor is temporarily unavailable: RpcError: RPC Error message: Socket closed; RPC Error details: . "
              "The task may or may not have been executed on the actor.", "peer", "an actor not reachable"),
    ClassLine("ray", "ray/exceptions.py", "ray.exceptions.NodeDiedError: The node with node id 7f2b and address "
              "10.0.0.7 and node name 10.0.0.7 has been marked dead because the detector has missed too many "
              "heartbeats from it.", "peer", "a node dead or unreachable"),
    ClassLine("ray", "ray/exceptions.py", "ray.exceptions.ObjectLostError: Failed to retrieve object 00ff. To see "
              "information about where this ObjectRef was created in Python, set the environment variable "
              "RAY_record_ref_creation_sites=1 during `ray start` and `ray.init()`.", "peer",
              "every copy lost with its node"),
    ClassLine("ray", "ray/exceptions.py", "ray.exceptions.OwnerDiedError: Failed to retrieve object 00ff. The object's "
              "owner has exited. This is the Python worker that first created the ObjectRef via `.remote()` or "
              "`ray.put()`.", "peer", "the object's owner died"),
    ClassLine("ray", "ray/exceptions.py", "ray.exceptions.ObjectReconstructionFailedError: Failed to retrieve object "
              "00ff. The object cannot be reconstructed because it was created by an actor, ray.put() call, or its "
              "ObjectRef was created by a different worker.", "peer", "a lost object could not be rebuilt"),
    ClassLine("ray", "ray/exceptions.py", "ray.exceptions.ObjectFetchTimedOutError: Failed to retrieve object 00ff. "
              "Fetch for object 00ff timed out because no locations were found for the object. This may indicate a "
              "system-level bug.", "timeout", "a fetch's wait ran out"),
    ClassLine("ray", "ray/exceptions.py", "ray.exceptions.RaySystemError: System error: X", "peer",
               "Ray's own system failed (the raylet killed)"),
    ClassLine("ray", "ray/exceptions.py", "ray.exceptions.RpcError: Socket closed", "peer",
              "the RPC system lost its peer"),
    ClassLine("ray", "ray/experimental/rdt/rdt_manager.py", "ray.exceptions.GetTimeoutError: ray.get timed out after "
              "30s.", "timeout", "ray.get's wait ran out"),
    ClassLine("ray", "ray/exceptions.py", "ray.exceptions.OutOfMemoryError: Task was killed due to the node running "
              "low on memory.", "host_oom", "Ray's memory monitor killed the task: the node's memory"),
    ClassLine("ray", "ray/exceptions.py", "ray.exceptions.OutOfDiskError: The object cannot be created because the "
              "local object store is full and the local disk's utilization is over capacity (95% by default).Tip: Use "
              "`df` on this node to check disk usage and `ray memory` to check object store memory usage.", "storage",
              "the node's disk full"),
    ClassLine("ray", "ray/exceptions.py", "ray.exceptions.ObjectStoreFullError: Failed to put object 00ff in object "
              "store because it is full. Object size is 1024 bytes.", "exception", "the job's objects fill the store"),
    ClassLine("ray", "ray/exceptions.py", "ray.exceptions.TaskUnschedulableError: The task is not schedulable: "
              "X", "quiet", "its node is dead or infeasible (the docstring's example: a node dead)"),
    ClassLine("ray", "ray/exceptions.py", "ray.exceptions.ActorUnschedulableError: The actor is not schedulable: "
              "X", "quiet", "its node is dead or infeasible (the docstring's example: a node dead)"),
    ClassLine("ray", "ray/exceptions.py", "ray.exceptions.RuntimeEnvSetupError: Failed to set up runtime environment.",
              "setup", "the runtime environment could not be built"),
    ClassLine("ray", "ray/exceptions.py", "ray.exceptions.TaskPlacementGroupRemoved: The placement group "
              "corresponding to this task has been removed.", "quiet", "its placement group removed by its owner"),
    ClassLine("ray", "ray/exceptions.py", "ray.exceptions.ActorPlacementGroupRemoved: The placement group "
              "corresponding to this Actor has been removed.", "quiet", "its placement group removed by its owner"),
    ClassLine("ray", "ray/exceptions.py", "ray.exceptions.TaskCancelledError: Task: 00ff was cancelled.", "quiet",
              "cancelled because of something else"),
    ClassLine("vllm", "vllm/v1/engine/exceptions.py", "vllm.v1.engine.exceptions.EngineDeadError: EngineCore "
              "encountered an issue. See stack trace (above) for the root cause.", "peer",
              "the engine core died before"),
)


@dataclass(frozen=True)
class Message:
    program: str
    path: str
    line: int
    kind: str  # raise | error | critical | exception | class
    cls: str  # the raised class, qualified where it is the program's own
    fmt: str


def _git(repo: str, *args: str, data: str | None = None) -> str:
    return subprocess.run(["git", "-C", repo, *args], input=data, capture_output=True, text=True, check=False).stdout


def _blobs(repo: str, paths: list[str]) -> list[str]:
    """The files' text at HEAD, read in one `git cat-file --batch`."""
    names = "".join(f"HEAD:{p}\n" for p in paths).encode()
    proc = subprocess.run(["git", "-C", repo, "cat-file", "--batch"], input=names, capture_output=True, check=False)
    out, data, i = [], proc.stdout, 0
    for _ in paths:
        end = data.index(b"\n", i)
        size = int(data[i:end].split()[2])
        out.append(data[end + 1:end + 1 + size].decode("utf-8", "replace"))
        i = end + 1 + size + 1
    return out


def _literal(node: ast.AST, bound: dict[str, str]) -> str | None:
    """The format string a message argument spells: `{expr}` for an f-string's fields, %-specs left as written."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(str(v.value) if isinstance(v, ast.Constant) else "{" + ast.unparse(getattr(v, "value", v)) + "}"
                       for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _literal(node.left, bound), _literal(node.right, bound)
        return a + b if a is not None and b is not None else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _literal(node.left, bound)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _literal(node.func.value, bound)
    if isinstance(node, ast.Name):
        return bound.get(node.id)
    return None


def _messages(program: str, repo: str, roots: tuple[str, ...]) -> list[Message]:
    paths = [p for p in _git(repo, "ls-tree", "-r", "--name-only", "HEAD", "--", *roots).splitlines()
             if p.endswith(".py") and "/tests/" not in p and "/test/" not in p]
    owned: dict[str, str] = {}  # a class the program defines -> its module
    trees: list[tuple[str, ast.Module]] = []
    for path, source in zip(paths, _blobs(repo, paths), strict=True):
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        trees.append((path, tree))
        module = path.removesuffix(".py").replace("/", ".").removeprefix("python.")
        for top in tree.body:
            if isinstance(top, ast.ClassDef):
                owned.setdefault(top.name, module)
    out: list[Message] = []
    for path, tree in trees:
        bound: dict[str, str] = {}  # a name bound to a string anywhere in the file (`msg = "..."; raise X(msg)`)
        for n in ast.walk(tree):
            if (isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
                    and (text := _literal(n.value, {})) is not None):
                bound[n.targets[0].id] = text
        for n in ast.walk(tree):
            if isinstance(n, ast.Raise) and isinstance(n.exc, ast.Call) and n.exc.args:
                name = ast.unparse(n.exc.func).rsplit(".", 1)[-1]
                fmt = _literal(n.exc.args[0], bound)
                if fmt:
                    cls = f"{owned[name]}.{name}" if name in owned else name
                    out.append(Message(program, path, n.lineno, "raise", cls, fmt))
            elif (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.args
                  and n.func.attr in ("error", "critical", "exception", "fatal")
                  and "log" in ast.unparse(n.func.value).lower()):
                fmt = _literal(n.args[0], bound)
                if fmt:
                    out.append(Message(program, path, n.lineno, n.func.attr, "", fmt))
    return sorted(set(out), key=lambda m: (m.path, m.line, m.fmt))


_NUMERIC = re.compile(r"pid|rank|code|port|size|num|count|len|timeout|seconds|mins|_s\b|bytes|gib|idx|world|\bi\b"
                      r"|required|attempt|exitcode|returncode")
_NUMERIC_BEFORE = re.compile(r"(?:pid|PID|code|rank|Rank|port|after|within|=|: |\()\s?$")


def fill(fmt: str) -> str:
    """The message as printed: a field that reads as a number becomes `1`, any other `X`."""
    def value(expr: str, before: str) -> str:
        if expr.endswith(("architectures", "archs")):
            return "['X']"  # a list, as the program prints it
        return "1" if _NUMERIC.search(expr.lower()) or _NUMERIC_BEFORE.search(before) else "X"

    out: list[str] = []
    i = 0
    for m in re.finditer(r"\{([^{}]*)\}|%[-0-9.]*([sdrifx])", fmt):
        out.append(fmt[i:m.start()])
        before = "".join(out)[-12:]
        out.append("1" if m.group(2) in ("d", "i", "f", "x") else value(m.group(1) or "", before))
        i = m.end()
    out.append(fmt[i:])
    return " ".join("".join(out).split())


def printed(m: Message) -> list[str]:
    """The lines the program prints for the message: a traceback's last line, or a record under its logger."""
    text = fill(m.fmt)
    file = m.path.rsplit("/", 1)[-1]
    if m.kind == "raise":
        return [TB, f"{m.cls}: {text}"]
    level = {"exception": "ERROR", "fatal": "CRITICAL"}.get(m.kind, m.kind.upper())
    if m.program == "vllm":
        proc = ("EngineCore_DP0" if "/engine/" in m.path else "Worker_TP1" if "/executor/" in m.path
                or "/worker/" in m.path else "APIServer")
        return [f"({proc} pid=4242) {level} 05-01 12:00:00 [{file}:{m.line}] {text}"]
    if m.program == "sglang":
        return [f"[2026-05-01 12:00:00 TP0] {text}"]
    return [f"2026-05-01 12:00:00,123\t{level} {file}:{m.line} -- {text}"]


def family(drafts: list[Draft]) -> str:
    """What firstfault made of the lines, in EXPECT's words ("-": nothing)."""
    names = []
    for d in drafts:
        if d.kind == "app.exception":
            names.append("setup" if d.fields.get("setup") or d.fields.get("shm") else "exception")
        elif d.kind.startswith("storage."):
            names.append("storage")
        else:
            names.append({"nccl.remote_error": "peer", "nccl.timeout": "timeout", "nccl.error": "collective",
                          "nccl.communicator_aborted": "aborted", "app.cuda_oom": "accelerator_oom",
                          }.get(d.kind, "host_oom" if d.kind.startswith("host.oom") else d.kind))
    return next((n for n in names if n != "exception"), names[0] if names else "-")


def read(lines: list[str]) -> str:
    ex = Extraction(all_line_extractors())
    drafts: list[Draft] = []
    for n, text in enumerate(lines, 1):
        got, _ = ex.drafts(Candidate("application", "app.log", n, None, None, None, text))
        drafts.extend(got)
    return family(drafts)


def verdict(expect: str, got: str) -> str:
    if got == expect or (expect == "quiet" and got in ("-", "peer", "timeout")):
        return "right"
    return "unread" if got == "-" else "other"


ROOTS = {"vllm": ("vllm", "python/vllm"), "sglang": ("sglang", "python/sglang"), "ray": ("ray", "python/ray")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for program in ROOTS:
        ap.add_argument(f"--{program}")
    ap.add_argument("--list", action="store_true", help="every line with what it means and what firstfault read")
    args = ap.parse_args()
    rows: list[tuple[str, str, str, str, str]] = []  # program, where, line, expect, got
    hit: set[int] = set()
    for program, roots in ROOTS.items():
        repo = getattr(args, program)
        if not repo:
            continue
        for m in _messages(program, repo, roots):
            for k, (prog, where, rx, expect, _meaning) in enumerate(EXPECT):
                if prog == program and re.search(where, m.path) and re.search(rx, m.fmt):
                    lines = printed(m)
                    rows.append((program, f"{m.path}:{m.line}", lines[-1], expect, read(lines)))
                    hit.add(k)
                    break
        for c in CLASS_LINES:
            if c.program == program:
                rows.append((program, c.path, c.line, c.expect, read([TB, c.line])))
    for k, (prog, where, rx, *_) in enumerate(EXPECT):
        if k not in hit and getattr(args, prog):
            print(f"not in the sources: {prog} {where} {rx}")
    if args.list:
        for program, where, line, expect, got in rows:
            print(f"{verdict(expect, got):6} {expect:9} {got:16} {program:6} {where}: {line[:160]}")
    counts = Counter((r[0], verdict(r[3], r[4])) for r in rows)
    for program in ROOTS:
        total = sum(n for (p, _), n in counts.items() if p == program)
        if total:
            print(f"{program}: {total} lines (right {counts[program, 'right']}, other {counts[program, 'other']}, "
                  f"unread {counts[program, 'unread']})")


if __name__ == "__main__":
    main()
