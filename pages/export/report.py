"""A short self-contained HTML report of one example (no scripts, no external files)."""

from __future__ import annotations

import html

from ln_core.verdict import CANNOT_RESOLVE, FAIL, PASS
from teaching.glossary import described, meaning
from teaching.inputs import AFFINE, PER
from ui.draw.tables import vectors_frame
from ui.export.bundle import Bundle

_STYLE = """
body { font-family: sans-serif; max-width: 60rem; margin: 2rem auto; color: #111; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; font-size: 0.9rem; }
th, td { border: 1px solid #bbb; padding: 0.2rem 0.5rem; text-align: right; }
h2 { border-bottom: 2px solid #111; }
.pass { color: #2b8a3e; } .fail { color: #c92a2a; } .unresolved { color: #555; }
"""
_STATUS_CLASS = {PASS: "pass", FAIL: "fail", CANNOT_RESOLVE: "unresolved"}


def _table(bundle: Bundle, name: str) -> str:
    return vectors_frame(bundle.arrays[name]).to_html(float_format=lambda v: f"{v:.6g}")


def html_report(bundle: Bundle) -> str:
    """Inputs, every node and gradient, and the gradient check, as one HTML page."""
    meta = bundle.meta
    # Each error beside its status: where the check cannot resolve a tensor its relative
    # error is round-off against round-off, anything up to 1, and is no failure.
    tensors = list(next(iter(meta["relative_errors"].values())))
    errors = "".join(
        f"<tr><td>{html.escape(method)}</td>"
        + "".join(
            f"<td>{error:.2e} <span class='{_STATUS_CLASS[status]}'>({html.escape(status)})"
            "</span></td>"
            for error, status in zip(per.values(), meta["statuses"][method].values(), strict=True)
        )
        + "</tr>"
        for method, per in meta["relative_errors"].items()
    )
    header = "".join(f"<th>{html.escape(t)}</th>" for t in tensors)
    sections = [
        f"<h1>LayerNorm Lab report</h1><p>x of shape {tuple(meta['shape'])}, "
        f"{meta['dtype']}, eps = {meta['eps']:g}, affine parameters: "
        f"{html.escape(AFFINE[meta['affine']])}, normalized {html.escape(PER[meta['per']])}. "
        f"<b class='{_STATUS_CLASS[meta['verdict']]}'>{html.escape(meta['headline'])}</b> "
        f"(the gradient check, step h = {meta['h']:.2e}; each tensor's gap judged against what "
        "round-off explains).</p>",
        *(f"<p>{html.escape(advice)}</p>" for advice in meta["cannot_resolve"]),
        "<h2>Gradient check (relative error)</h2>"
        f"<table><tr><th></th>{header}</tr>{errors}</table>",
    ]
    for group, title in (("inputs", "Inputs"), ("nodes", "Forward nodes"), ("grads", "Gradients")):
        sections.append(f"<h2>{title}</h2>")
        for name in bundle.arrays:
            if name.startswith(f"{group}/"):
                short = name.split("/", 1)[1]
                sections.append(f"<h3>{html.escape(short)}</h3>")
                if described(short):
                    sections.append(f"<p>{html.escape(meaning(short))}</p>")
                sections.append(_table(bundle, name))
    body = "\n".join(sections)
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>LayerNorm Lab report</title>"
        f"<style>{_STYLE}</style></head><body>{body}</body></html>"
    )
