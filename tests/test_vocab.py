"""catalog/vocab.py's check of a field that must be a regular expression (vendor tables and rules use it), and rows
read back from the on-disk cache, which that check passed when their entry was written (checked_rows)."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from firstfault.catalog import tables, vocab
from firstfault.catalog.vocab import check_regex, checked_rows


@pytest.mark.parametrize("pattern", [r"Xid \(PCI:[0-9a-f:.]+\): (\d+)", r"^ncclSystemError$", "(?i)out of memory"])
def test_a_regex_that_compiles_passes(pattern: str) -> None:
    assert check_regex(pattern) is None


@pytest.mark.parametrize(("pattern", "why"), [
    (r"Xid \(PCI:[0-9a-f:.+\): (\d+)", "unterminated character set"),  # one bracket short of the one above
    ("(?P<a>x)(?P<a>y)", "redefinition of group name"),
    ("*oops", "nothing to repeat"),
])
def test_a_regex_that_does_not_compile_is_a_value_error_naming_it(pattern: str, why: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f"bad regex {pattern!r}: {why}")):
        check_regex(pattern)


def test_rows_read_back_as_checked_are_not_compiled_again_and_the_check_comes_back_after() -> None:
    """checked_rows: inside it, a regex field is taken as the check passed it when its rows were written (a bad one
    is not compiled, so not refused); after it, and after an error inside it, the check compiles again."""
    with checked_rows():
        assert check_regex("*oops") is None
    with pytest.raises(ValueError, match="nothing to repeat"):
        check_regex("*oops")
    with pytest.raises(KeyError), checked_rows():
        raise KeyError("x")
    with pytest.raises(ValueError, match="nothing to repeat"):
        check_regex("*oops")



class _Compiles(list[str]):
    """The patterns compiled through `compile` (a stand-in for re.compile that counts them)."""

    def compile(self, pattern: str, flags: int = 0) -> re.Pattern[str]:
        self.append(pattern)
        return re.compile(pattern, flags)


def _count_compiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> _Compiles:
    """A table cache of the test's own, on; and the list its stand-in for re.compile fills."""
    monkeypatch.setenv("FIRSTFAULT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("FIRSTFAULT_CACHE", raising=False)
    return _Compiles()


def test_a_table_read_back_from_the_cache_compiles_no_regex_and_is_the_table_built(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The exception table (catalog/exceptions.yaml: a regex per row's message) built on a cache miss has each message
    compiled by the check; read back from the entry that build wrote (its key: the file's and the validating sources'
    sha256), none is compiled, and the rows are the same. Near miss: with the cache off, every read is a build, and
    each compiles them all."""
    compiled = _count_compiles(tmp_path, monkeypatch)
    counting = compiled.compile
    monkeypatch.setattr(vocab, "re", SimpleNamespace(compile=counting, error=re.error))
    load = tables.exception_class_table.__wrapped__  # (the _kept loader, under its lru_cache)
    built = load()
    with_message = sum(1 for row in built if row.message is not None)
    assert with_message > 50 and len(compiled) == with_message
    compiled.clear()
    assert load() == built and compiled == []
    monkeypatch.setenv("FIRSTFAULT_CACHE", "off")
    assert load() == built and len(compiled) == with_message


@pytest.mark.parametrize("table", ["end_reports", "stall_reports", "level_header_table"])
def test_a_table_whose_checks_read_a_regex_s_groups_compiles_none_when_read_back(
        table: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The end and stall reports (catalog/ends.yaml) and the level headers (exceptions.yaml): each row's check compiles
    its pattern to read its groups (or match its example) on a build; read back from the entry that build wrote, no
    check compiles one (vocab.rows_checked), and the rows are the same. Near miss: a row built with a pattern whose
    groups its check refuses is still refused."""
    compiled = _count_compiles(tmp_path, monkeypatch)
    counting = compiled.compile
    monkeypatch.setattr(tables, "re", SimpleNamespace(compile=counting, error=re.error))
    monkeypatch.setattr(vocab, "re", SimpleNamespace(compile=counting, error=re.error))
    load = getattr(tables, table).__wrapped__  # (the _kept loader, under its lru_cache)
    built = load()
    assert len(compiled) >= len(built)
    compiled.clear()
    assert load() == built and compiled == []
    row = built[0]
    if table == "end_reports":
        bad = {"pattern": r"exited with (?P<code>\d+)\s*$", "outcome": "clean"}  # a `code` group, no `code` outcome
    elif table == "stall_reports":
        bad = {"pattern": r"stalled on (?P<who>\w+)"}  # a group its readers do not know
    else:
        bad = {"header": row.header.replace("(?P<level>", "(?P<lvl>", 1)}  # the level's group renamed
    assert bad != {k: getattr(row, k) for k in bad}
    with pytest.raises(ValueError):
        type(row)(**{**{f: getattr(row, f) for f in row.__struct_fields__}, **bad})


@pytest.mark.parametrize("table", ["cann_table", "storage_tables"])
def test_a_table_holding_read_only_mappings_is_read_back_as_built(
        table: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A table whose fields are read-only mappings (CANN's codes by code, the storage clients by name) is written to
    its entry (as the dicts they show) and read back without its file's document, equal to the build, each mapping
    read-only again. Near miss: with the cache off, every read builds it from the document."""
    from types import MappingProxyType

    monkeypatch.setenv("FIRSTFAULT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("FIRSTFAULT_CACHE", raising=False)
    documents: list[str] = []
    real = tables._document
    monkeypatch.setattr(tables, "_document", lambda name: (documents.append(name), real(name))[1])
    load = getattr(tables, table).__wrapped__  # (the _kept loader, under its lru_cache)
    built = load()
    assert documents and any(isinstance(f, MappingProxyType) for f in built)
    documents.clear()
    back = load()
    assert back == built and documents == []
    assert [type(f) for f in back] == [type(f) for f in built]
    monkeypatch.setenv("FIRSTFAULT_CACHE", "off")
    assert load() == built and documents
