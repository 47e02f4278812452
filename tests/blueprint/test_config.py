"""cluster.yaml validation: unknown keys with path and line, secrets never inline."""

from __future__ import annotations

from pathlib import Path

import pytest

from firstfault.blueprint.config import ConfigError, Secret, load_config

GOOD = """\
cluster: prod-a
scheduler:
  slurm: {sacct: sacct, timezone: UTC}
logs:
  loki:
    url: http://127.0.0.1:3100
    queries:
      kernel: '{job="syslog", host="{node}"}'
    http:
      auth:
        bearer: {env: LOKI_TOKEN}
metrics:
  prometheus: {url: "http://127.0.0.1:9090", node_label: instance}
outputs:
  stdout: {format: json}
  database: {url: "sqlite:///tmp/v.db"}
  webhooks:
    - url: http://127.0.0.1:9/hook
      secret: {file: /etc/firstfault/hook.key}
      dead_letter: /var/lib/firstfault/dead.jsonl
"""


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "cluster.yaml"
    p.write_text(text)
    return p


def test_a_full_config_loads(tmp_path: Path) -> None:
    cfg = load_config(_write(tmp_path, GOOD))
    assert cfg.cluster == "prod-a" and cfg.service is None
    assert cfg.logs.loki is not None and cfg.logs.loki.queries["kernel"].startswith("{job=")
    assert cfg.outputs.webhooks[0].secret.file == Path("/etc/firstfault/hook.key")


def test_unknown_key_names_path_and_line(tmp_path: Path) -> None:
    text = GOOD.replace("node_label: instance", "node_label: instance, stepp: 15")
    with pytest.raises(ConfigError) as exc:
        load_config(_write(tmp_path, text))
    assert "metrics.prometheus.stepp: unknown key" in str(exc.value)
    assert "cluster.yaml:13:" in str(exc.value)  # the prometheus line


def test_secrets_cannot_be_literal(tmp_path: Path) -> None:
    text = GOOD.replace("bearer: {env: LOKI_TOKEN}", "bearer: s3cr3t")
    with pytest.raises(ConfigError, match=r"logs\.loki\.http\.auth\.bearer"):
        load_config(_write(tmp_path, text))


def test_secret_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "k"
    f.write_text("abc\n")
    assert Secret(file=f).read() == "abc"
    monkeypatch.setenv("FF_TEST_SECRET", "xyz")
    assert Secret(env="FF_TEST_SECRET").read() == "xyz"
    monkeypatch.delenv("FF_TEST_SECRET")
    with pytest.raises(ConfigError, match="FF_TEST_SECRET"):
        Secret(env="FF_TEST_SECRET").read()
    with pytest.raises(ValueError, match="exactly one"):
        Secret(file=f, env="X")


AM = """\
  alertmanager:
    - url: http://127.0.0.1:9093/
      dashboard_url: https://firstfault.example
      domains: [hardware, network, ambiguous]
      labels: {severity: page, team: gpu-ops}
      resolve_after: 3600
      http:
        retries: 2
        auth:
          username: firstfault
          password: {env: FF_AM_PASSWORD}
    - url: http://127.0.0.1:9094
"""


def test_alertmanager_outputs_build_sinks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from firstfault.blueprint import build
    from firstfault.sinks.alertmanager import DEFAULT_DOMAINS, DEFAULT_OUTCOMES, AlertmanagerSink

    monkeypatch.setenv("FF_AM_PASSWORD", "pw")
    cfg = load_config(_write(tmp_path, GOOD + AM))
    cfg.outputs.webhooks = []  # its secret file is not on this machine
    sinks = [s for s in build.sinks(cfg, with_database=False) if isinstance(s, AlertmanagerSink)]
    assert [s.endpoint for s in sinks] == ["http://127.0.0.1:9093/api/v2/alerts", "http://127.0.0.1:9094/api/v2/alerts"]
    first, second = sinks
    assert first.domains == {"hardware", "network", "ambiguous"} and first.outcomes == set(DEFAULT_OUTCOMES)
    assert first.labels == {"severity": "page", "team": "gpu-ops"} and first.retries == 2
    assert first.resolve_after.total_seconds() == 3600 and first.dashboard_url == "https://firstfault.example"
    assert first._client.headers["Authorization"] == "Basic Zmlyc3RmYXVsdDpwdw=="  # firstfault:pw
    # The second takes the defaults: every cause domain and ambiguous; never none or unknown.
    assert second.domains == set(DEFAULT_DOMAINS) and not {"none", "unknown"} & second.domains
    assert second.dashboard_url is None and "Authorization" not in second._client.headers
    for s in sinks:
        s.close()


@pytest.mark.parametrize(("change", "where"), [
    ("domains: [hardware, network, ambiguous]", "domains: [hardwear]"),
    ("labels: {severity: page, team: gpu-ops}", "labels: {node: x}"),
    ("labels: {severity: page, team: gpu-ops}", "labels: {bad-name: x}"),
    ("resolve_after: 3600", "resolve_after: 0"),
])
def test_bad_alertmanager_outputs_name_the_field(tmp_path: Path, change: str, where: str) -> None:
    with pytest.raises(ConfigError) as exc:
        load_config(_write(tmp_path, GOOD + AM.replace(change, where)))
    assert "outputs.alertmanager.0" in str(exc.value)

# ---------------------------------------------------------------- actions (docs/actions.md)

ACTIONS = """\
cluster: prod-a
outputs:
  database: {url: "sqlite:///tmp/v.db"}
actions:
  max_per_hour: 3
  drain: {}
"""


def test_actions_are_off_unless_configured_and_dry_run_by_default(tmp_path: Path) -> None:
    from firstfault.blueprint import build

    assert load_config(_write(tmp_path, GOOD)).actions is None
    assert build.actors(load_config(_write(tmp_path, GOOD)), "sqlite:///tmp/v.db") == []
    cfg = load_config(_write(tmp_path, ACTIONS))
    assert cfg.actions is not None and cfg.actions.cordon is None
    (drain,) = build.actors(cfg, build.database_url(cfg))
    assert drain.name == "drain"
    assert (drain.policy.dry_run, drain.policy.max_per_hour, drain.policy.max_share) == (True, 3, 0.1)
    assert drain.policy.categories == ("gpu.*", "host.hardware", "network.link")


def test_actions_need_the_verdict_store(tmp_path: Path) -> None:
    from firstfault.blueprint import build

    cfg = load_config(_write(tmp_path, ACTIONS.replace('  database: {url: "sqlite:///tmp/v.db"}\n', "  stdout: {}\n")))
    with pytest.raises(ConfigError, match=r"actions need the verdict store \(outputs.database\)"):
        build.actors(cfg, build.database_url(cfg))


@pytest.mark.parametrize("cats", ["[app.*]", "[gpu.*, scheduler]", "['*']", "[host]", "[]"])
def test_actions_refuse_software_and_scheduler_categories(tmp_path: Path, cats: str) -> None:
    with pytest.raises(ConfigError) as exc:
        load_config(_write(tmp_path, ACTIONS.replace("  max_per_hour: 3\n", f"  categories: {cats}\n")))
    assert "actions:" in str(exc.value) or "actions." in str(exc.value)
    assert "categor" in str(exc.value)


@pytest.mark.parametrize(("old", "new", "field"), [
    ("max_per_hour: 3", "max_share: 1.5", "max_share"),
    ("max_per_hour: 3", "max_per_hour: -1", "max_per_hour"),
    ("drain: {}", "drain: {dryrun: false}", "drain.dryrun"),
])
def test_actions_bad_values_name_the_field(tmp_path: Path, old: str, new: str, field: str) -> None:
    with pytest.raises(ConfigError, match=rf"actions\.{field}"):
        load_config(_write(tmp_path, ACTIONS.replace(old, new)))


def test_follow_defaults_and_a_static_list(tmp_path: Path) -> None:
    from firstfault.blueprint import build

    cfg = load_config(_write(tmp_path, GOOD + "follow:\n  static:\n    - {id: run-7, start: '2026-12-01T10:00:00Z', "
                                              "nodes: 'gpu-[01-02]'}\n"))
    assert (cfg.follow.interval, cfg.follow.list_interval, cfg.follow.max_attempts) == (2.0, 10.0, 1000)
    src = build.running_source(cfg, "static")
    assert [r.ref for r in src.running()] == ["run-7"]
    assert src.identify("run-7").workload.nodes == ["gpu-01", "gpu-02"]
    # --scheduler static without follow.static, or a node list that is not one: the config's error.
    with pytest.raises(ConfigError, match=r"needs follow\.static"):
        build.running_source(load_config(_write(tmp_path, GOOD)), "static")
    bad = GOOD + "follow:\n  static:\n    - {id: r, start: '2026-12-01T10:00:00Z', nodes: 'gpu-[02-01]'}\n"
    with pytest.raises(ConfigError, match=r"follow\.static"):
        build.running_source(load_config(_write(tmp_path, bad)), "static")


@pytest.mark.parametrize(("block", "message"), [
    ("actions:\n  requeue: {}\n", "set provisional: true"),
    ("actions:\n  provisional: true\n  requeue: {}\n  cancel: {}\n", "requeue or cancel, not both"),
    ("outputs:\n  alertmanager:\n    - {url: 'http://am:9093', provisional_alertname: FirstfaultVerdict}\n",
     "must differ from alertname"),
])
def test_follow_actions_and_alerts_refuse_what_cannot_work(tmp_path: Path, block: str, message: str) -> None:
    text = (GOOD.split("outputs:")[0] + block) if block.startswith("outputs") else GOOD + block
    with pytest.raises(ConfigError, match=message):
        load_config(_write(tmp_path, text))


def test_provisional_actions_are_built_only_when_asked(tmp_path: Path) -> None:
    from firstfault.blueprint import build
    from firstfault.store.repo import VerdictStore

    with VerdictStore.open(f"sqlite:///{tmp_path / 'v.db'}") as store:
        cfg = load_config(_write(tmp_path, GOOD + "actions:\n  drain: {}\n"))
        assert build.provisional_actors(cfg, store) == []  # provisional: false by default
        cfg = load_config(_write(tmp_path, GOOD + "actions:\n  provisional: true\n  drain: {}\n  cancel: {}\n"))
        got = build.provisional_actors(cfg, store)
        assert [a.name for a in got] == ["drain", "cancel"]
        assert all(a.policy.dry_run for a in got)
