#!/usr/bin/env bash
# Sets up a virtualenv (if needed) and runs every check: lint, types, the
# rule catalog's own tests, and the test suite. Used by CI (.ci/run).
#
# The quick checks start at once and pytest beside them (each check's output is printed whole after pytest's; the
# quick checks' own CPU is about half of the two cores' for their minute: pytest's start-up and first tests fill
# the rest), pytest on pytest-xdist workers (PYTEST_XDIST_AUTO_NUM_WORKERS, default: one more than the CPUs, since the Slurm and lab
# tests spend much of their time waiting on real jobs: a Slurm time limit is a minute). The failure lab makes one fault
# afresh per launcher and mode; FIRSTFAULT_LAB=all makes every one of them (CI sets it: .ci/run). That variable is the
# switch for the full tier as a whole (tests/tier.py): unset, the heaviest property tests draw fewer examples and seeds
# (the same tests, the same assertions), so the quick run stays within ten minutes on 2 cores; CI draws them all.
# Arguments go to the main pytest run.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[dev,lab]'
# The editable install leaves bytecode to the first import, which PYTHONDONTWRITEBYTECODE=1 (set on these machines
# and in many container images) never writes: each `firstfault` the tests start would compile the package anew
# (2.0 s of CPU instead of 0.7 for the shipped sample).
.venv/bin/python -m compileall -q src >/dev/null
# Real servers for the integration tests (Prometheus, Slurm, PostgreSQL,
# Chromium): installed in CI, or whenever we run as root and they are missing.
if [ "${CI:-}" = "true" ] || [ "$(id -u)" = 0 ]; then ./scripts/ci/install-servers.sh; fi
mkdir -p test-artifacts/logs
start=$SECONDS

# name, then the command: started in the background, its output kept in test-artifacts/logs/NAME.log.
names=() pids=()
check() {
  local name=$1; shift
  "$@" > "test-artifacts/logs/$name.log" 2>&1 &
  names+=("$name") pids+=($!)
}
check ruff          .venv/bin/ruff check src tests bench lab
check mypy-strict   .venv/bin/mypy
check rules-check   .venv/bin/firstfault rules check
check rules-test    .venv/bin/firstfault rules test --junit test-artifacts/rules-junit.xml
# The parallel reader forks, which it does only in a process without other threads: its tests run in
# a pytest process of their own (no xdist, no server of the suite's).
check pytest-parallel-reader \
  .venv/bin/python -m pytest --junitxml=test-artifacts/pytest-parallel-junit.xml tests/analysis/test_parallel.py

# Tests that share a server run on one worker (tests/conftest.py groups them: --dist loadgroup).
echo "== pytest (lab: ${FIRSTFAULT_LAB:-sample}; the quick checks run beside it: their output follows)"
rc=0
export PYTEST_XDIST_AUTO_NUM_WORKERS=${PYTEST_XDIST_AUTO_NUM_WORKERS:-$(( $(nproc) + 1 ))}
.venv/bin/python -m pytest -n auto --dist loadgroup --junitxml=test-artifacts/pytest-junit.xml \
  --ignore=tests/analysis/test_parallel.py "$@" || rc=$?
failed=()
[ "$rc" = 0 ] || failed+=("pytest")
for i in "${!names[@]}"; do
  qrc=0; wait "${pids[$i]}" || qrc=$?
  echo "== ${names[$i]}$([ "$qrc" = 0 ] || echo " FAILED (exit $qrc)")"
  cat "test-artifacts/logs/${names[$i]}.log"
  [ "$qrc" = 0 ] || failed+=("${names[$i]}")
done
echo "== all checks: $((SECONDS - start)) s"
if [ "${#failed[@]}" -gt 0 ]; then
  echo "FAILED: ${failed[*]}" >&2
  [ "$rc" = 0 ] && exit 1
fi
exit "$rc"
