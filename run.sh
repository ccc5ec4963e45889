#!/usr/bin/env bash
# Create (or reuse) .venv, install the runtime requirements and start LayerNorm Lab on localhost.
set -euo pipefail
cd "$(dirname "$0")"
python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt -c constraints.txt
# `./run.sh --replicas N [--port P]`: N processes behind HAProxy on one port (README, Large classes).
if [[ "${1:-}" == "--replicas" ]]; then
  exec .venv/bin/python -m deploy.replicas "${@:2}"
fi
exec .venv/bin/python -m ui.server.launch "$@"
