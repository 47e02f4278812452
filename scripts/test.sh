#!/usr/bin/env bash
# Sets up a virtualenv (if needed) and runs every check: lint, types, the
# rule catalog's own tests, and the test suite. Used by CI (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev,lab]'
# Real servers for the integration tests (Prometheus, Slurm, PostgreSQL,
# Chromium): installed in CI, or whenever we run as root and they are missing.
if [ "${CI:-}" = "true" ] || [ "$(id -u)" = 0 ]; then ./scripts/ci/install-servers.sh; fi
mkdir -p test-artifacts
echo "== ruff";            .venv/bin/ruff check src tests bench lab
echo "== mypy --strict";   .venv/bin/mypy
echo "== rules check";     .venv/bin/firstfault rules check
echo "== rules test";      .venv/bin/firstfault rules test --junit test-artifacts/rules-junit.xml
# The parallel reader forks, which it does only in a process without other threads: its tests run in
# a pytest process of their own, before the suite's servers start threads in the main one.
echo "== pytest (parallel reader)"; .venv/bin/python -m pytest --junitxml=test-artifacts/pytest-parallel-junit.xml tests/test_parallel.py
echo "== pytest";          .venv/bin/python -m pytest --junitxml=test-artifacts/pytest-junit.xml --ignore=tests/test_parallel.py "$@"
