#!/usr/bin/env bash
# Create (or reuse) .venv, install the runtime requirements and start LayerNorm Lab on localhost.
set -euo pipefail
cd "$(dirname "$0")"
python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt -c constraints.txt
exec .venv/bin/python -m ui.launch "$@"
