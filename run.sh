#!/usr/bin/env bash
# Create (or reuse) .venv, install the runtime requirements and start LayerNorm Lab on localhost.
set -euo pipefail
cd "$(dirname "$0")"
python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt -c constraints.txt
# `./run.sh --replicas N|auto [--port P]`: N processes (auto: one per core) behind HAProxy on one
# port (README, Large classes); deploy/replicas.py checks N and says what is wrong with it.
case "${1:-}" in
  --replicas) exec .venv/bin/python -m deploy.replicas "${@:2}" ;;
  --replicas=*) exec .venv/bin/python -m deploy.replicas "${1#--replicas=}" "${@:2}" ;;
esac
exec .venv/bin/python -m ui.server.launch "$@"
