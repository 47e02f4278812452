"""Pickles from a failed job, read with bounds and without running code.

A flight-recorder dump is a pickle of plain containers and scalars. A pickle
is a small program, though: it can name any global (and so call it), and it
can reuse what it built (the memo), so a few hundred bytes can stand for a
structure that takes gigabytes once anything walks or renders it, or for
hundreds of millions of objects. So a pickle is read in two passes:

1. `check_pickle` walks the opcode stream (the stdlib's own opcode table,
   `pickletools.opcodes`, says how long each argument is) and runs the
   pickle machine on sizes, not objects: for every object it knows its
   depth and its expanded size (what it would take written out, each reuse
   counted again: containers, scalars, string bytes). It refuses, before
   anything is built, a pickle that names a global, calls or builds an
   object, or goes past a limit: objects created, depth, expanded size,
   integer width, memo index. It also refuses a container changed after it
   was placed in another (a pickler never does that; it would let a small
   count stand for a large structure).
2. `load` then lets the C unpickler build it, with `find_class` and
   `persistent_load` refusing anyway (a second guard, for anything the
   first one did not foresee).
"""

from __future__ import annotations

import io
import pickle
import pickletools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["PickleLimits", "PickleRefused", "UnsafeDumpError", "check_pickle", "load"]


class UnsafeDumpError(pickle.UnpicklingError):
    """The pickle names a Python global or asks for code: refused, nothing from it is executed."""


class PickleRefused(pickle.UnpicklingError):
    """The pickle goes past a limit (objects, depth, expanded size, integer width) or is malformed."""


@dataclass(frozen=True, slots=True)
class PickleLimits:
    """What one pickle may build. A PyTorch flight-recorder dump of 2,000 entries with 20 frames
    each is about 600,000 objects, depth 6, 5 MB expanded."""

    max_objects: int = 4_000_000  # objects created (a reuse from the memo is not one)
    max_depth: int = 32  # containers inside containers
    max_expanded: int = 256 << 20  # objects plus string and integer bytes, each reuse counted again
    max_int_bytes: int = 4096  # one integer (32,768 bits, about 9,860 digits)


_CHECK_EVERY: Final = 0xFFFF  # opcodes between two calls of the deadline check, less one (a mask)

# What each opcode does, by kind; the stdlib's opcode table gives its argument's length.
(_SCALAR, _UNICODE, _INTEGER, _DECIMAL, _PUT, _MEMOIZE, _GET, _MARK, _EMPTY, _ADD, _APPEND, _SETITEM,
 _FROM_MARK, _TUPLE_N, _POP, _POP_MARK, _DUP, _STOP, _NOTHING, _CODE) = range(20)
_KINDS: Final[dict[str, int]] = {
    **dict.fromkeys(("BININT", "BININT1", "BININT2", "STRING", "BINSTRING", "SHORT_BINSTRING", "BINBYTES",
                     "SHORT_BINBYTES", "BINBYTES8", "BYTEARRAY8", "NONE", "NEWTRUE", "NEWFALSE", "UNICODE",
                     "BINUNICODE8", "FLOAT", "BINFLOAT"), _SCALAR),
    "SHORT_BINUNICODE": _UNICODE, "BINUNICODE": _UNICODE,  # kept as offsets: STACK_GLOBAL's names
    "LONG1": _INTEGER, "LONG4": _INTEGER, "INT": _DECIMAL, "LONG": _DECIMAL,
    "PUT": _PUT, "BINPUT": _PUT, "LONG_BINPUT": _PUT, "MEMOIZE": _MEMOIZE,
    "GET": _GET, "BINGET": _GET, "LONG_BINGET": _GET, "MARK": _MARK,
    "EMPTY_LIST": _EMPTY, "EMPTY_TUPLE": _EMPTY, "EMPTY_DICT": _EMPTY, "EMPTY_SET": _EMPTY,
    "APPENDS": _ADD, "SETITEMS": _ADD, "ADDITEMS": _ADD, "APPEND": _APPEND, "SETITEM": _SETITEM,
    "LIST": _FROM_MARK, "TUPLE": _FROM_MARK, "DICT": _FROM_MARK, "FROZENSET": _FROM_MARK,
    "TUPLE1": _TUPLE_N, "TUPLE2": _TUPLE_N, "TUPLE3": _TUPLE_N,
    "POP": _POP, "POP_MARK": _POP_MARK, "DUP": _DUP, "STOP": _STOP, "PROTO": _NOTHING, "FRAME": _NOTHING,
    **dict.fromkeys(("GLOBAL", "STACK_GLOBAL", "REDUCE", "BUILD", "INST", "OBJ", "NEWOBJ", "NEWOBJ_EX", "EXT1",
                     "EXT2", "EXT4", "PERSID", "BINPERSID", "NEXT_BUFFER", "READONLY_BUFFER"), _CODE),
}
_NAMES: Final[dict[int, str]] = {ord(op.code): op.name for op in pickletools.opcodes}
# By opcode byte: its kind (-1: not an opcode) and its argument, a fixed byte count or one of pickletools'
# markers (a line, a length prefix). A KeyError here: a new opcode this module must learn.
_KIND: Final[list[int]] = [_KINDS[_NAMES[b]] if b in _NAMES else -1 for b in range(256)]
_ARG: Final[list[int]] = [0] * 256
for _info in pickletools.opcodes:
    _ARG[ord(_info.code)] = _info.arg.n if _info.arg is not None else 0
del _info
_PREFIX: Final = {pickletools.TAKEN_FROM_ARGUMENT1: (1, False), pickletools.TAKEN_FROM_ARGUMENT4: (4, True),
                  pickletools.TAKEN_FROM_ARGUMENT4U: (4, False), pickletools.TAKEN_FROM_ARGUMENT8U: (8, False)}
_TEXT_ARG: Final = pickletools.UP_TO_NEWLINE

# The check's view of an object. A scalar: a tuple (expanded size, depth 0), a string (size, 0, start, end) of
# its bytes. A container: a list [expanded size, depth, placed], `placed` once it is inside another one.


def check_pickle(data: bytes, limits: PickleLimits = PickleLimits(),
                 check: Callable[[], None] | None = None) -> None:
    """Raises UnsafeDumpError (code) or PickleRefused (a limit; malformed); returns when `data` is safe to load.

    `check` is called every 65,536 opcodes (an analysis deadline).
    """
    stack: list[Any] = []
    marks: list[int] = [0]  # where each open mark starts; [0]: the bottom of the stack
    memo: dict[int, Any] = {}
    pos = created = ops = 0
    start = -1
    try:
        while True:
            start = pos
            code = data[pos]
            pos += 1
            ops += 1
            if not ops & _CHECK_EVERY:
                if created > limits.max_objects or len(stack) > limits.max_objects:
                    raise _Refused(f"more than {limits.max_objects:,} objects")
                if check is not None:
                    check()
            # The hottest opcodes of a dump (protocols 2 to 5) first; _other reads the rest.
            if code in (0x68, 0x6A):  # BINGET, LONG_BINGET: a 1- or 4-byte index
                width = 1 if code == 0x68 else 4
                idx = int.from_bytes(data[pos:pos + width], "little")
                pos += width
                got = memo.get(idx)
                if got is None:
                    raise _Refused(f"memo index {idx:,} was never stored")
                stack.append(got)
            elif code in (0x94, 0x71, 0x72):  # MEMOIZE, BINPUT, LONG_BINPUT
                if len(stack) <= marks[-1]:
                    raise _Refused("a memo store with nothing to store")
                if code == 0x94:
                    idx = len(memo)
                else:  # BINPUT, LONG_BINPUT: a 1- or 4-byte index
                    width = 1 if code == 0x71 else 4
                    idx = int.from_bytes(data[pos:pos + width], "little")
                    pos += width
                if idx > created:  # a pickler numbers what it stores from 0; a far index makes the C memo huge
                    raise _Refused(f"memo index {idx:,} beyond the {created:,} objects read so far")
                memo[idx] = stack[-1]
            elif code in (0x8C, 0x58):  # SHORT_BINUNICODE, BINUNICODE
                if code == 0x8C:
                    a = pos + 1
                    pos = a + data[pos]
                else:
                    a = pos + 4
                    pos = a + int.from_bytes(data[pos:a], "little")
                created += 1
                stack.append((1 + pos - a, 0, a, pos))
            elif code == 0x4B:  # BININT1
                pos += 1
                created += 1
                stack.append(_LEAVES[2])
            elif code == 0x28:  # MARK
                marks.append(len(stack))
            elif code == 0x7D:  # EMPTY_DICT
                created += 1
                stack.append([1, 0, False])
            else:
                pos, created = _other(code, data, pos, created, stack, marks, memo, limits)
                if code == 0x2E:  # STOP
                    return
    except IndexError:
        raise PickleRefused("the pickle is truncated, or ends without STOP") from None
    except _Refused as exc:
        raise PickleRefused(f"{exc} (opcode at byte {start:,})") from None


# Scalars of a few bytes, shared: what a scalar costs the check while it is on the stack is one pointer.
_LEAVES: Final = [(size, 0) for size in range(64)]


class _Refused(Exception):
    """A limit or a malformed opcode; check_pickle adds where."""


def _other(code: int, data: bytes, pos: int, created: int, stack: list[Any], marks: list[int],
           memo: dict[int, Any], limits: PickleLimits) -> tuple[int, int]:
    """Every opcode but the hottest few: reads its argument, changes the stack; returns (pos, created)."""
    kind = _KIND[code]
    arg = _ARG[code]
    # The argument: data[a:pos] (a text argument with its newline).
    a = pos
    if arg >= 0:
        pos += arg
    elif arg == _TEXT_ARG:
        end = data.index(b"\n", pos)
        if code in (0x63, 0x69):  # GLOBAL, INST: a second line (the name)
            end = data.index(b"\n", end + 1)
        pos = end + 1
    elif arg in _PREFIX:
        width, signed = _PREFIX[arg]
        a = pos + width
        length = int.from_bytes(data[pos:a], "little", signed=signed)
        if length < 0:
            raise _Refused("a negative length")
        pos = a + length
    else:
        raise _Refused(f"{_NAMES[code]}: an argument this check cannot read")
    if pos > len(data):
        raise IndexError
    top = len(stack) - marks[-1]  # items above the innermost mark

    if kind == _UNICODE:
        stack.append((1 + pos - a, 0, a, pos))
        created += 1
    elif kind == _SCALAR:
        size = 1 + pos - a
        stack.append(_LEAVES[size] if size < 64 else (size, 0))
        created += 1
    elif kind in (_INTEGER, _DECIMAL):
        # Decimal text: a digit is log2(10) / 8 = 0.415 bytes (5/12 is just above).
        width = (pos - a) * 5 // 12 + 1 if kind == _DECIMAL else pos - a
        if width > limits.max_int_bytes:
            raise _Refused(f"an integer of about {width:,} bytes (the limit is {limits.max_int_bytes:,})")
        size = 1 + pos - a
        stack.append(_LEAVES[size] if size < 64 else (size, 0))
        created += 1
    elif kind in (_PUT, _MEMOIZE):
        if top < 1:
            raise _Refused("a memo store with nothing to store")
        if kind == _MEMOIZE:
            idx = len(memo)
        elif arg == _TEXT_ARG:
            idx = _decimal(data[a:pos - 1])
        else:
            idx = int.from_bytes(data[a:pos], "little")
        if idx > created:  # a pickler numbers what it stores from 0; a far index makes the C memo huge
            raise _Refused(f"memo index {idx:,} beyond the {created:,} objects read so far")
        memo[idx] = stack[-1]
    elif kind == _GET:
        idx = _decimal(data[a:pos - 1]) if arg == _TEXT_ARG else int.from_bytes(data[a:pos], "little")
        got = memo.get(idx)
        if got is None:
            raise _Refused(f"memo index {idx:,} was never stored")
        stack.append(got)
    elif kind == _EMPTY:
        stack.append([1, 0, False])
        created += 1
    elif kind == _ADD:  # APPENDS, SETITEMS, ADDITEMS: the items since the mark, into what is below it
        if len(marks) < 2:
            raise _Refused("no mark to take items from")
        at = marks.pop()
        if at - 1 < marks[-1] or type(stack[at - 1]) is not list:
            raise _Refused(f"{_NAMES[code]} without a container")
        if code == 0x75 and (len(stack) - at) % 2:
            raise _Refused("SETITEMS with an odd number of items")
        _place(stack[at - 1], stack, at, limits)
    elif kind in (_APPEND, _SETITEM):
        k = 1 if kind == _APPEND else 2
        if top < k + 1 or type(stack[-k - 1]) is not list:
            raise _Refused(f"{_NAMES[code]} without a container")
        _place(stack[-k - 1], stack, len(stack) - k, limits)
    elif kind in (_FROM_MARK, _TUPLE_N):
        if kind == _FROM_MARK:
            if len(marks) < 2:
                raise _Refused("no mark to take items from")
            at = marks.pop()
        else:
            k = code - 0x84  # TUPLE1, TUPLE2, TUPLE3 are 0x85, 0x86, 0x87
            if top < k:
                raise _Refused(f"{_NAMES[code]} needs {k} items")
            at = len(stack) - k
        if code == 0x64 and (len(stack) - at) % 2:
            raise _Refused("DICT with an odd number of items")
        node = [1, 0, False]
        _place(node, stack, at, limits)
        stack.append(node)
        created += 1
    elif kind == _POP:
        if top > 0:
            stack.pop()
        elif len(marks) > 1:  # POP of a mark (the C unpickler allows it)
            marks.pop()
        else:
            raise _Refused("POP with an empty stack")
    elif kind == _POP_MARK:
        if len(marks) < 2:
            raise _Refused("no mark to pop")
        del stack[marks.pop():]
    elif kind == _DUP:
        if top < 1:
            raise _Refused("DUP with an empty stack")
        stack.append(stack[-1])
    elif kind == _STOP:
        if not stack:
            raise _Refused("STOP with nothing on the stack")
        if created > limits.max_objects:  # between two periodic checks
            raise _Refused(f"more than {limits.max_objects:,} objects")
    elif kind == _NOTHING:  # PROTO, FRAME
        pass
    elif kind == _CODE:
        raise UnsafeDumpError(f"refused: {_code_name(code, data, a, pos, stack)} (a flight-recorder dump "
                              "holds only builtin containers and scalars; nothing is imported or executed)")
    else:
        raise _Refused(f"unknown opcode {code:#04x}")
    return pos, created


def _place(into: list[Any], stack: list[Any], at: int, limits: PickleLimits) -> None:
    """Moves stack[at:] into the container `into`: its expanded size and depth grow by theirs."""
    if into[2]:
        raise _Refused("a container is changed after it was placed in another")
    size, depth = into[0], into[1]
    for it in stack[at:]:
        size += it[0]
        if it[1] >= depth:
            depth = it[1] + 1
        if type(it) is list:
            it[2] = True
    del stack[at:]
    into[0], into[1] = size, depth
    if depth > limits.max_depth:
        raise _Refused(f"nesting deeper than {limits.max_depth}")
    if size > limits.max_expanded:
        raise _Refused(f"the structure expands past {limits.max_expanded:,} (objects and bytes, each reuse counted)")


def _decimal(text: bytes) -> int:
    if not text.isdigit() or len(text) > 10:
        raise _Refused("a bad memo index")
    return int(text)


def _code_name(code: int, data: bytes, a: int, pos: int, stack: list[Any]) -> str:
    """What the pickle asks for, for the refusal: the global it names when it names one."""
    if code in (0x63, 0x69):  # GLOBAL, INST: "module\nname\n"
        module, _, name = data[a:pos].decode("utf-8", "replace").rstrip("\n").partition("\n")
        return f"the pickle names the global {module}.{name}"
    if code == 0x93 and len(stack) >= 2 and len(stack[-2]) == 4 and len(stack[-1]) == 4:  # STACK_GLOBAL
        module, name = (data[s[2]:s[3]].decode("utf-8", "replace") for s in stack[-2:])
        return f"the pickle names the global {module}.{name}"
    if code in (0x50, 0x51):
        return "the pickle asks for a persistent id"
    return f"the pickle asks for code ({_NAMES[code]})"


class _RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise UnsafeDumpError(
            f"refused: the pickle names the global {module}.{name} (a flight-recorder dump holds only "
            "builtin containers and scalars; nothing is imported or executed)"
        )

    def persistent_load(self, pid: Any) -> Any:
        raise UnsafeDumpError("refused: the pickle asks for a persistent id")


def load(data: bytes, limits: PickleLimits = PickleLimits(), check: Callable[[], None] | None = None) -> Any:
    """The object a pickle holds, after `check_pickle` has found it within `limits` and free of code."""
    check_pickle(data, limits, check)
    return _RestrictedUnpickler(io.BytesIO(data)).load()
