"""The vendor tables shipped beside the rules: NVIDIA Xids and NVSwitch SXids.

The data lives in `xid.yaml` / `sxid.yaml` (vendor knowledge is data, not
code branches); this module only reads and validates it, once, on first use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from types import MappingProxyType
from typing import Any

from firstfault import yamlio

XID_CLASSES: frozenset[str] = frozenset(
    {
        "memory",
        "memory_info",
        "nvlink",
        "nvlink5",
        "fallen_off_bus",
        "firmware",
        "pcie",
        "app",
        "sympathetic",
        "recovery",
        "informational",
        "other",
    }
)
SXID_CLASSES: frozenset[str] = frozenset({"fatal", "nonfatal", "always_fatal", "other"})


class CatalogTableError(ValueError):
    """A shipped table is malformed: a packaging bug, never user input."""


@dataclass(frozen=True, slots=True)
class XidInfo:
    code: int
    mnemonic: str
    description: str
    immediate: str | None  # NVIDIA immediate resolution bucket
    investigatory: str | None  # NVIDIA investigatory resolution bucket
    xid_class: str  # firstfault's attribution class (see the header of xid.yaml)
    legacy_causes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SxidInfo:
    code: int
    name: str
    sxid_class: str


def _load(name: str) -> dict[str, Any]:
    text = resources.files("firstfault").joinpath("catalog", name).read_text(encoding="utf-8")
    data = yamlio.load(text)
    if not isinstance(data, dict):
        raise CatalogTableError(f"catalog/{name}: top level must be a mapping")
    return data


def _opt_str(value: object, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise CatalogTableError(f"{where}: expected a string or null, got {value!r}")
    return value


def _req_str(row: Mapping[str, Any], key: str, where: str) -> str:
    value = row.get(key)
    if not isinstance(value, str) or not value:
        raise CatalogTableError(f"{where}: `{key}` must be a non-empty string")
    return value


def _code(row: Mapping[str, Any], where: str) -> int:
    code = row.get("code")
    if not isinstance(code, int) or isinstance(code, bool) or code <= 0:
        raise CatalogTableError(f"{where}: `code` must be a positive integer")
    return code


@lru_cache(maxsize=1)
def xid_table() -> Mapping[int, XidInfo]:
    """Every Xid of catalog/xid.yaml by code (read-only, loaded once)."""
    rows = _load("xid.yaml").get("xids")
    if not isinstance(rows, list):
        raise CatalogTableError("catalog/xid.yaml: `xids` must be a list")
    table: dict[int, XidInfo] = {}
    for i, row in enumerate(rows):
        where = f"catalog/xid.yaml: xids[{i}]"
        if not isinstance(row, dict):
            raise CatalogTableError(f"{where}: must be a mapping")
        code = _code(row, where)
        if code in table:
            raise CatalogTableError(f"{where}: duplicate code {code}")
        cls = _req_str(row, "class", where)
        if cls not in XID_CLASSES:
            raise CatalogTableError(f"{where}: unknown class {cls!r}")
        causes = row.get("legacy_causes") or []
        if not isinstance(causes, list) or not all(isinstance(c, str) for c in causes):
            raise CatalogTableError(f"{where}: `legacy_causes` must be a list of strings")
        table[code] = XidInfo(
            code=code,
            mnemonic=_req_str(row, "mnemonic", where),
            description=_req_str(row, "description", where),
            immediate=_opt_str(row.get("immediate"), f"{where}.immediate"),
            investigatory=_opt_str(row.get("investigatory"), f"{where}.investigatory"),
            xid_class=cls,
            legacy_causes=tuple(causes),
        )
    return MappingProxyType(table)


@lru_cache(maxsize=1)
def sxid_table() -> Mapping[int, SxidInfo]:
    """Every NVSwitch SXid of catalog/sxid.yaml by code (read-only, loaded once)."""
    rows = _load("sxid.yaml").get("sxids")
    if not isinstance(rows, list):
        raise CatalogTableError("catalog/sxid.yaml: `sxids` must be a list")
    table: dict[int, SxidInfo] = {}
    for i, row in enumerate(rows):
        where = f"catalog/sxid.yaml: sxids[{i}]"
        if not isinstance(row, dict):
            raise CatalogTableError(f"{where}: must be a mapping")
        code = _code(row, where)
        if code in table:
            raise CatalogTableError(f"{where}: duplicate code {code}")
        cls = _req_str(row, "class", where)
        if cls not in SXID_CLASSES:
            raise CatalogTableError(f"{where}: unknown class {cls!r}")
        table[code] = SxidInfo(code=code, name=_req_str(row, "name", where), sxid_class=cls)
    return MappingProxyType(table)


def xid_info(code: int) -> XidInfo | None:
    return xid_table().get(code)


def sxid_info(code: int) -> SxidInfo | None:
    return sxid_table().get(code)


def xid_class(code: int) -> str:
    """The attribution class of a Xid; codes newer than the table are `other`."""
    info = xid_info(code)
    return info.xid_class if info is not None else "other"


def sxid_class(code: int) -> str:
    info = sxid_info(code)
    return info.sxid_class if info is not None else "other"
