#!/usr/bin/env bash
# Sets up a virtualenv (if needed) and analyses the shipped showcase bundle:
# an Xid 149 on GPU 3 of node-02 and the NCCL fallout on every other rank.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
.venv/bin/firstfault analyze "${1:-examples/nvlink-xid149}"
