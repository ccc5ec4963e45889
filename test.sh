#!/usr/bin/env bash
# Create (or reuse) .venv, install the dev requirements, lint (code and imports), and run every test.
set -euo pipefail
cd "$(dirname "$0")"
python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-dev.txt -c constraints.txt
.venv/bin/python -m ruff check .
# axe-core for the accessibility tests, from npm at a pinned version (skipped without npm; CI
# requires the machine's Node.js with its own npm, and a missing axe-core fails there).
if command -v npm >/dev/null; then tests/browser/install_axe.sh; fi
# The import contracts (pyproject.toml, [tool.importlinter]): layers, no cycles, pure core.
.venv/bin/lint-imports
exec .venv/bin/python -m pytest "$@"
