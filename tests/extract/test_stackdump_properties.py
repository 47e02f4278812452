"""Property tests (Hypothesis, fixed seed, bounded cases) of the stack-dump reader (issue 26): dumps built
from py-spy and faulthandler lines with numbers of any width, names of any length and any noise are read
without raising, every number past 64 bits is a problem on its own line, and what is kept fits a verdict."""

from __future__ import annotations

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from firstfault.extract.stackdump import MAX_PROCESSES, read_stack_dump
from firstfault.extract.structured import MAX_ISSUES, TEXT_LIMIT, fits_int64

SEED = 20261203
BOUNDED = settings(max_examples=200, deadline=None, database=None, derandomize=False,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# Numbers as a dump prints them: short, around 64 bits, and thousands of digits.
numbers = st.one_of(st.integers(0, 10**6).map(str), st.integers(10**17, 10**21).map(str),
                    st.integers(20, 6000).map(lambda n: "9" * n))
names = st.one_of(st.sampled_from(["all_reduce", "wait", "_try_get_data", "save", "<module>", "train_step"]),
                  st.text(alphabet=st.characters(blacklist_characters="\r\n\"()", blacklist_categories=["Cs"]),
                          min_size=1, max_size=40),
                  st.integers(501, 3000).map(lambda n: "f" * n))
files = st.sampled_from(["torch/distributed/distributed_c10d.py", "torch/utils/data/dataloader.py", "train.py",
                         "/opt/ckpt/checkpoint.py", "torch/serialization.py"])


@st.composite
def line(draw: st.DrawFn) -> tuple[str, str | None]:
    """A dump line, and the number on it that must fit 64 bits to be kept (None: no such number)."""
    kind = draw(st.sampled_from(["process", "thread", "pyspy", "faulthandler", "noise", "blank"]))
    n = draw(numbers)
    if kind == "process":
        return f"Process {n}: python train.py", n
    if kind == "thread":
        head = draw(st.sampled_from(["Thread", "Current thread"]))
        return f'{head} {draw(numbers)} ({draw(st.sampled_from(["idle", "active", "most recent call first"]))}): ' \
               f'"{draw(names)}"', None
    if kind == "pyspy":
        return f"    {draw(names).strip() or 'f'} ({draw(files)}:{n})", n
    if kind == "faulthandler":
        return f'  File "{draw(files)}", line {n} in {draw(names).split()[0] if draw(names).split() else "f"}', n
    if kind == "noise":
        return draw(st.text(max_size=80).map(lambda t: t.replace("\n", " ").replace("\r", " "))), None
    return "", None


@seed(SEED)
@BOUNDED
@given(st.lists(line(), max_size=60))
def test_any_dump_is_read_and_wide_numbers_are_problems_on_their_lines(lines: list[tuple[str, str | None]]) -> None:
    text = "\n".join(t for t, _ in lines) + "\n"
    res = read_stack_dump(text.encode(), "stacks/rank-0.txt", rank=0)
    assert len(res.events) <= MAX_PROCESSES and len(res.issues) <= MAX_ISSUES
    n_lines = len(lines)
    for ev in res.events:
        assert ev.kind == "stack.frame" and ev.evidence.line is not None and 1 <= ev.evidence.line <= n_lines
        for key in ("func", "file", "thread"):
            assert isinstance(ev.fields[key], str) and len(str(ev.fields[key])) <= TEXT_LIMIT
        for key in ("line", "depth", "pid"):
            v = ev.fields.get(key)
            assert v is None or (isinstance(v, int) and fits_int64(v))
        # The frame an event names was a line whose number fits.
        number = lines[ev.evidence.line - 1][1]
        assert number is not None and len(number) < 20 and fits_int64(int(number))
    for issue in res.issues:
        if issue.message.endswith("not read"):
            continue  # the process cap
        assert issue.line is not None and 1 <= issue.line <= n_lines
        number = lines[issue.line - 1][1]
        assert number is not None and (len(number) >= 20 or not fits_int64(int(number)))


@seed(SEED)
@BOUNDED
@given(st.binary(max_size=500))
def test_any_bytes_are_read(data: bytes) -> None:
    res = read_stack_dump(data, "s")
    assert all(e.kind == "stack.frame" for e in res.events)
