#!/usr/bin/env bash
# axe-core (the accessibility engine browsers' dev tools use) for the browser tests, from the
# npm registry at a pinned version, into tests/browser/node_modules (ignored by git).
set -euo pipefail
cd "$(dirname "$0")"
AXE_VERSION=4.14.1
if [[ -f node_modules/axe-core/axe.min.js ]] \
    && grep -q "\"version\": \"$AXE_VERSION\"" node_modules/axe-core/package.json; then
  exit 0
fi
npm install --silent --no-audit --no-fund --no-save --prefix . "axe-core@$AXE_VERSION"
