#!/usr/bin/env bash
# Install the bench requirements into .venv, run every bench/bench_*.py (or only the names
# given, e.g. `bash bench/run.sh throughput memory`), then rewrite the tables in bench/RESULTS.md.
# Results land in bench/results/ (not committed). Best run on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -r requirements-bench.txt -c constraints.txt

if [[ $# -gt 0 ]]; then
  names=("$@")
else
  names=()
  for script in bench/bench_*.py; do
    name=$(basename "$script" .py)
    names+=("${name#bench_}")
  done
fi

.venv/bin/python -m bench.machine
# A benchmark that misses its target exits 1; the others still run and the report is written.
status=0
for name in "${names[@]}"; do
  echo "== bench_$name"
  .venv/bin/python -m "bench.bench_$name" || status=1
done
.venv/bin/python -m bench.report
exit "$status"
