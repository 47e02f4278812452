"""Settings precedence (flags > FIRSTFAULT_* > YAML file > defaults) and `serve` refusing a bad catalog."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from firstfault.cli.serve import serve
from firstfault.engine.loader import default_root
from firstfault.service.settings import SettingsError, load_settings


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for k in list(os.environ):
        if k.startswith("FIRSTFAULT_"):
            monkeypatch.delenv(k)


def test_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "ff.yaml"
    cfg.write_text("port: 9000\nmax_queue: 3\nmax_concurrent: 5\ntokens:\n"
                   "  - {name: team-a, secret: aaaaaaaaaaaaaaaaaaaa, scopes: [catalog]}\n")
    monkeypatch.setenv("FIRSTFAULT_MAX_QUEUE", "4")
    monkeypatch.setenv("FIRSTFAULT_MAX_CONCURRENT", "6")
    s = load_settings(cfg, max_concurrent=7, port=None)
    assert (s.port, s.max_queue, s.max_concurrent) == (9000, 4, 7)
    assert [(t.name, t.scopes) for t in s.tokens] == [("team-a", ["catalog"])]
    assert "aaaa" not in repr(s)
    monkeypatch.setenv("FIRSTFAULT_CONFIG", str(cfg))
    assert load_settings().port == 9000


def test_tokens_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FIRSTFAULT_TOKENS", "x" * 20 + ", " + "y" * 20)
    s = load_settings()
    assert [t.secret.get_secret_value() for t in s.tokens] == ["x" * 20, "y" * 20]
    assert s.tokens[0].scopes == ["analyze", "catalog"]
    monkeypatch.setenv("FIRSTFAULT_TOKENS", '[{"name": "b", "secret": "' + "z" * 20 + '", "scopes": ["analyze"]}]')
    assert load_settings().tokens[0].name == "b"


@pytest.mark.parametrize(("text", "fragment"), [
    ("prot: 1\n", "prot: unknown setting"),
    ("max_queue: many\n", "max_queue"),
    ("tokens: [short]\n", "tokens.0.secret"),
    ("port: [1\n", "cannot read settings"),
])
def test_bad_settings_file_names_the_setting(tmp_path: Path, text: str, fragment: str) -> None:
    cfg = tmp_path / "ff.yaml"
    cfg.write_text(text)
    with pytest.raises(SettingsError) as err:
        load_settings(cfg)
    assert fragment in str(err.value)


def test_missing_settings_file() -> None:
    with pytest.raises(SettingsError, match="not found"):
        load_settings("/nonexistent/ff.yaml")


def test_serve_refuses_a_catalog_that_fails_validation(tmp_path: Path) -> None:
    rules = tmp_path / "catalog"
    shutil.copytree(default_root(), rules)
    victim = sorted((rules / "rules").glob("*.yaml"))[0]
    victim.write_text(victim.read_text().replace("category:", "categroy:", 1))
    result = CliRunner().invoke(serve, ["--rules", str(rules), "--port", "1"])
    assert result.exit_code == 2
    assert f"{victim}:" in result.output and "categroy" in result.output


def test_serve_refuses_bad_settings(tmp_path: Path) -> None:
    result = CliRunner().invoke(serve, ["--port", "99999"])
    assert result.exit_code == 2
    assert "port" in result.output


@pytest.mark.parametrize("text", [
    # issue 26, item 2: the second `tokens:` used to win silently, starting the Service with authentication off
    "tokens:\n  - {name: ops, secret: aaaaaaaaaaaaaaaaaaaa}\nport: 9000\ntokens: []\n",
    "port: 9000\nmax_queue: 3\nport: 9001\n",
])
def test_a_key_given_twice_in_the_settings_file_is_refused_naming_both_lines(tmp_path: Path, text: str) -> None:
    cfg = tmp_path / "ff.yaml"
    cfg.write_text(text)
    with pytest.raises(SettingsError) as err:
        load_settings(cfg)
    msg = str(err.value)
    assert "duplicate key" in msg and f"{cfg}:" in msg, msg
    first, again = ("1", "4") if text.startswith("tokens") else ("1", "3")
    assert f"first at line {first}, again at line {again}" in msg, msg


def test_the_same_key_in_two_token_entries_is_no_duplicate(tmp_path: Path) -> None:
    # near miss: `name` and `secret` repeat across list items, each once per mapping
    cfg = tmp_path / "ff.yaml"
    cfg.write_text("tokens:\n  - {name: a, secret: aaaaaaaaaaaaaaaaaaaa}\n"
                   "  - {name: b, secret: bbbbbbbbbbbbbbbbbbbb}\n")
    assert [t.name for t in load_settings(cfg).tokens] == ["a", "b"]
