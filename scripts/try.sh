#!/usr/bin/env bash
# Sets up a virtualenv (if needed), analyses the shipped showcase bundle (an
# Xid 149 on GPU 3 of node-02 and the NCCL fallout on every other rank), then
# serves the dashboard over all the shipped samples on http://127.0.0.1:8080/
# (Ctrl-C stops it). `--no-dashboard` stops after the verdict; a bundle path
# may be given instead of the showcase.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
dashboard=1
bundle=examples/nvlink-xid149
for arg in "$@"; do
  case "$arg" in
    --no-dashboard) dashboard=0 ;;
    *) bundle=$arg ;;
  esac
done
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[dashboard]"
# An editable install leaves the bytecode to the first import, which a shell with PYTHONDONTWRITEBYTECODE=1 (set in
# many container images) never writes: every run would compile the package anew (2.0 s of CPU instead of 0.7 for the sample here).
.venv/bin/python -m compileall -q src >/dev/null
.venv/bin/firstfault analyze "$bundle"
if [ "$dashboard" = 1 ]; then
  echo
  echo "Starting the dashboard over the shipped samples (Ctrl-C to stop)..."
  exec .venv/bin/firstfault demo --reset
fi
