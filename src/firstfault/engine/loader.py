"""The rule catalog: one YAML file per rule, loaded and validated at start-up.

Validation errors carry file:line (from the YAML node marks) and a
validator id, Sigma-style (engine/validators.py), so `firstfault rules
check` points at the fault.

The engine works on the records of engine/rules.py, which msgspec validates from the YAML. A start-up
that reads the catalog from the on-disk cache (load_catalog_cached) decodes one msgpack entry into the
`Catalog` record: it imports neither yaml nor the validators, and gets the same records.
"""

import hashlib
from functools import lru_cache
from importlib import resources
from pathlib import Path

from firstfault.engine.rules import Explains, LoadedRule, Rule, Settings
from firstfault.records import Record


class CatalogError(Exception):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


class Catalog(Record, kw_only=True):
    """The loaded catalog: settings, rules, the sha256 of its files and where it was read from."""

    settings: Settings
    rules: list[LoadedRule]
    sha256: str
    root: str

    @property
    def version(self) -> str:
        return self.settings.version

    def active(self) -> list[Rule]:
        return [lr.rule for lr in self.rules if lr.rule.status != "deprecated"]

    def by_id(self, rule_id: str) -> Rule | None:
        for lr in self.rules:
            if lr.rule.id == rule_id:
                return lr.rule
        return None


def default_root() -> Path:
    return Path(str(resources.files("firstfault") / "catalog"))


def _expand_sets(rules: list[LoadedRule], settings: Settings) -> list[str]:
    """Replaces `{set: name}` entries of `explains` with the named list (which may name other sets;
    a loop of sets is the explains-cycle validator's problem and expands each set once)."""
    problems: list[str] = []

    def expand(name: str, seen: frozenset[str]) -> list[Explains] | None:
        named = settings.explain_sets.get(name)
        if named is None:
            return None
        out: list[Explains] = []
        for ex in named:
            if ex.set is not None:
                if ex.set not in seen:
                    out.extend(expand(ex.set, seen | {ex.set}) or [])
            elif ex.category is not None:
                out.append(ex)
        return out

    for name, entries in sorted(settings.explain_sets.items()):
        for ex in entries:
            if ex.set is not None and ex.set not in settings.explain_sets:
                problems.append(f"catalog.yaml:1: [explains-set] explain set {name!r} names no explain set "
                                f"{ex.set!r}")
    for lr in rules:
        out: list[Explains] = []
        for ex in lr.rule.explains:
            if ex.set is not None:
                named = expand(ex.set, frozenset({ex.set}))
                if named is None:
                    problems.append(f"{lr.file}:{lr.line_of.get('explains', 1)}: [explains-set] "
                                    f"no explain set {ex.set!r} in catalog.yaml")
                    continue
                out.extend(named)
            elif ex.category is not None:
                out.append(ex)
            else:
                problems.append(f"{lr.file}:{lr.line_of.get('explains', 1)}: [explains-form] "
                                "an explains entry needs a category or a set")
        lr.rule.explains = out
    return problems


def load_catalog(root: str | Path | None = None) -> Catalog:
    """Loads and validates a catalog directory (catalog.yaml + rules/*.yaml)."""
    import yaml

    from firstfault import yamlio
    from firstfault.engine.rules import read_rule, read_settings
    from firstfault.records import ValidationError
    from firstfault.records import problems as schema_problems

    base = Path(root) if root is not None else default_root()
    problems: list[str] = []
    digest = hashlib.sha256()
    settings_file = base / "catalog.yaml"
    settings: Settings | None = None
    if not settings_file.is_file():
        raise CatalogError([f"{settings_file}:1: [catalog-settings] missing catalog.yaml"])
    for data_file in sorted(base.glob("*.yaml")):
        digest.update(data_file.name.encode() + b"\0" + data_file.read_bytes() + b"\0")
    text = settings_file.read_text(encoding="utf-8")
    try:
        settings = read_settings(yamlio.load(text))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problems.append(f"{settings_file}:{mark.line + 1 if mark is not None else 1}: [catalog-settings] {exc}")
    except ValidationError as exc:
        problems.extend(schema_problems(exc, text, str(settings_file), "[catalog-settings]"))
    rules: list[LoadedRule] = []
    rule_dir = base / "rules"
    files = sorted(rule_dir.glob("*.yaml")) if rule_dir.is_dir() else []
    if not files:
        problems.append(f"{rule_dir}:1: [rules-present] no rule files")
    for path in files:
        raw = path.read_bytes()
        digest.update(b"rules/" + path.name.encode() + b"\0" + raw + b"\0")
        text = raw.decode("utf-8", errors="replace")
        try:
            data, key_lines = yamlio.load_with_lines(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else 1
            problems.append(f"{path}:{line}: [yaml] {exc}")
            continue
        if not isinstance(data, dict):
            problems.append(f"{path}:1: [yaml] a rule file holds one mapping")
            continue
        try:
            rule = read_rule(data)
        except ValidationError as exc:  # msgspec stops at a file's first problem
            problems.extend(schema_problems(exc, text, str(path), "[schema]"))
            continue
        rules.append(LoadedRule(rule=rule, file=str(path), line_of=key_lines))
    if settings is not None:
        problems.extend(_expand_sets(rules, settings))
    from firstfault.engine.validators import run_validators  # a start-up from the cache validates nothing

    problems.extend(str(p) for p in run_validators(rules, settings))
    if problems or settings is None:
        raise CatalogError(problems)
    return Catalog(settings=settings, rules=rules, sha256=digest.hexdigest(), root=str(base))


@lru_cache(maxsize=1)
def shipped_catalog() -> Catalog:
    return load_catalog_cached(None)


def load_catalog_cached(root: str | Path | None = None) -> Catalog:
    """load_catalog, kept on disk by the sha256 of the catalog's files, of the code that reads them and of
    the msgspec that validated them (firstfault/cache.py): a start-up decodes one msgpack entry into the
    `Catalog` record instead of parsing and validating every rule, and imports no yaml. A corrupt or stale
    entry (one that does not decode into today's records) is read again from the YAML. An invalid catalog
    is never cached, so its errors are reported as by load_catalog."""
    import sys

    import msgspec

    from firstfault import cache

    base = Path(root) if root is not None else default_root()
    here = Path(__file__)
    parts: list[bytes | str] = [str(base.resolve()), sys.version, msgspec.__version__]
    for mod in (__file__, str(here.with_name("rules.py")), str(here.with_name("validators.py")),
                str(here.parents[1] / "records.py"), str(here.parents[1] / "yamlio.py"),
                str(here.parents[1] / "model.py")):
        try:
            parts += [mod, Path(mod).read_bytes()]
        except OSError:
            return load_catalog(root)
    for f in [*sorted(base.glob("*.yaml")), *sorted((base / "rules").glob("*.yaml"))]:
        try:
            parts += [str(f.relative_to(base)), f.read_bytes()]
        except OSError:
            return load_catalog(root)
    name = "catalog-" + cache.key(*parts) + ".msgpack"
    data = cache.get(name)
    if data is not None:
        try:
            return msgspec.msgpack.decode(data, type=Catalog)
        except (msgspec.DecodeError, msgspec.ValidationError):  # a corrupt or stale entry: load it again
            pass
    cat = load_catalog(root)
    entry = msgspec.msgpack.encode(cat)
    # Written only when it reads back as this very catalog (a test event's field may hold a YAML date, which
    # msgpack keeps as text).
    if msgspec.msgpack.decode(entry, type=Catalog) == cat:
        cache.put(name, entry)
    return cat
