"""Where benchmark results live and the one JSON shape every benchmark writes.

A result is {"name", "title", "order", "text", "tables", "blocks", "raw"}: `text` (Markdown),
`tables` ([{"columns", "rows", optional "caption"}], cells as strings) and `blocks` (verbatim
text) are ready for BENCHMARKS.md; `raw` keeps every measurement.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def table(columns: list[str], rows: list[list[Any]]) -> dict[str, Any]:
    return {"columns": columns, "rows": [[str(cell) for cell in row] for row in rows]}


def write_result(
    name: str,
    title: str,
    order: float,
    text: str,
    tables: list[dict],
    raw: dict,
    blocks: list[str] | None = None,
) -> Path:
    """Write results/<name>.json and return its path. `order` places it in bench/RESULTS.md."""
    RESULTS_DIR.mkdir(exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    payload = {
        "name": name,
        "title": title,
        "order": order,
        "text": text,
        "tables": tables,
        "blocks": blocks or [],
        "raw": raw,
        "load_average": os.getloadavg(),
    }
    path.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"wrote {path}")
    return path


def read_results() -> list[dict[str, Any]]:
    """Every results/*.json, in their `order`."""
    results = [json.loads(p.read_text()) for p in sorted(RESULTS_DIR.glob("*.json"))]
    return sorted(results, key=lambda r: (r.get("order", 99), r["name"]))


def ms(value: float) -> str:
    """Milliseconds to 3 significant digits."""
    return f"{value:.3g}" if value < 1000 else f"{value:,.0f}"


def times(ratio: float) -> str:
    return f"{ratio:.3g}x" if ratio < 1000 else f"{ratio:,.0f}x"


def yes_no(met: bool) -> str:
    return "yes" if met else "**no**"
