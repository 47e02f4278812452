"""Stack dumps past what a hung job prints (issue 26, items 8 and 11): linear reading, numbers past
64 bits named and left out, a cap on processes, the deadline called as lines are read."""

from __future__ import annotations

import time

import pytest

from firstfault.extract.stackdump import MAX_PROCESSES, read_stack_dump
from tests.extract.test_flightrec import PYSPY


def processes(n: int) -> bytes:
    """`n` py-spy process blocks, each waiting in all_reduce."""
    return "".join(
        f'Process {p}: python train.py\nThread {p} (idle): "MainThread"\n'
        "    all_reduce (torch/distributed/distributed_c10d.py:2050)\n    train (train.py:88)\n\n"
        for p in range(n)).encode()


def test_ten_thousand_processes_read_in_linear_time() -> None:
    """Issue: 10k processes took 33 s (each event looked its line up in a fresh split of the whole dump)."""
    t = time.perf_counter()
    res = read_stack_dump(processes(10_000), "stacks/node-01.txt")
    assert time.perf_counter() - t < 8
    assert len(res.events) == MAX_PROCESSES
    assert res.events[-1].evidence.text == "all_reduce (torch/distributed/distributed_c10d.py:2050)"
    assert res.events[-1].evidence.line == 5 * (MAX_PROCESSES - 1) + 3


def test_processes_past_the_cap_are_counted() -> None:
    res = read_stack_dump(processes(MAX_PROCESSES + 3), "s")
    assert len(res.events) == MAX_PROCESSES
    assert [(i.line, i.message) for i in res.issues] == [(5 * MAX_PROCESSES + 1, "3 more processes than 4,096; "
                                                          "not read")]
    res = read_stack_dump(processes(MAX_PROCESSES), "s")
    assert len(res.events) == MAX_PROCESSES and res.issues == []


def test_a_5000_digit_line_number_is_an_error_and_the_rest_is_read() -> None:
    """Issue: a 5,000-digit number in a stack dump crashed the analysis (int() past 4,300 digits)."""
    text = PYSPY.replace("dataloader.py:1133)", "dataloader.py:" + "9" * 5000 + ")")
    res = read_stack_dump(text.encode(), "stacks/rank-3.txt", rank=3)
    (ev,) = res.events
    # The frame is left out: the next data-loader frame is the innermost interesting one.
    assert (ev.fields["func"], ev.fields["line"], ev.fields["category"]) == ("_get_data", 1294, "data_loader")
    assert [(i.line, i.message) for i in res.issues] == [
        (7, "a frame line number of 5,000 digits, past 64 bits; the frame is left out")]


def test_a_pid_past_64_bits_is_left_out_and_its_process_read() -> None:
    text = PYSPY.replace("Process 3842:", "Process " + "7" * 5000 + ":")
    res = read_stack_dump(text.encode(), "s")
    (ev,) = res.events
    assert "pid" not in ev.fields and ev.fields["category"] == "data_loader"
    assert res.issues[0].message.startswith("a pid of 5,000 digits")


@pytest.mark.parametrize("digits, kept", [("9223372036854775807", True), ("9223372036854775808", False),
                                          ("12345678901234567890", False)])
def test_line_numbers_at_the_64_bit_edge(digits: str, kept: bool) -> None:
    text = f'Thread 1 (idle): "MainThread"\n    all_reduce (torch/distributed/distributed_c10d.py:{digits})\n'
    res = read_stack_dump(text.encode(), "s")
    assert (len(res.events) == 1 and res.events[0].fields["line"] == int(digits)) is kept
    assert (res.issues == []) is kept


def test_a_huge_thread_name_is_clipped() -> None:
    text = 'Thread 1 (idle): "' + "t" * 100_000 + '"\n    wait (threading.py:324)\n'
    (ev,) = read_stack_dump(text.encode(), "s").events
    assert len(str(ev.fields["thread"])) == 500


class _Stop(Exception):
    pass


def test_the_deadline_is_called_as_lines_are_read() -> None:
    calls: list[int] = []
    read_stack_dump(processes(2000), "s", check=lambda: calls.append(1))
    assert len(calls) == 10_000 // 4096

    def expired() -> None:
        raise _Stop

    with pytest.raises(_Stop):
        read_stack_dump(processes(2000), "s", check=expired)


def test_line_numbers_count_newlines_only() -> None:
    """Found by the property test: a form feed or U+2028 inside a line (splitlines() breaks there) shifted
    every later evidence line number off the file's."""
    text = 'Thread 1 (idle): "MainThread"\n# page\x0cbreak\u2028here\n    all_reduce (torch/distributed/c10d.py:7)\n'
    (ev,) = read_stack_dump(text.encode(), "s").events
    assert ev.evidence.line == 3 and ev.fields["func"] == "all_reduce"
