"""Helpers for the notebook tests: views like the lab's, running notebooks, reading outputs."""

from __future__ import annotations

import os
import re
import tempfile

import nbformat
import numpy as np

import ln_core
from teaching.inputs import Inputs
from teaching.presets import PRESETS, make_example
from ui.export.notebook import View

KERNEL = "lnlab-tests"
LINK = "http://localhost:8501/?preset=Random+normal&seed=0"
# Python numbers as the lab writes them (repr of a float, or a whole number).
NUMBER = re.compile(r"(?<![\w.])-?\d+(\.\d+)?(e[+-]?\d+)?")


def lab_inputs(
    preset: str, dtype: str, affine: str = "both", per: str = "token", seed: int = 0
) -> Inputs:
    """The inputs the lab builds for a preset at its own shape (or rows 3 x 8), with the random
    dout of ui.state, cast to `dtype` as ui.state.inputs does."""
    shape = PRESETS[preset].shape or (3, 8)
    example = make_example(preset, shape, seed)
    dout = np.random.default_rng(seed + 1).standard_normal(example.x.shape)
    arrays = (example.x, example.gamma, example.beta, dout)
    x, gamma, beta, dout = (a.astype(dtype) for a in arrays)
    return Inputs(x, gamma, beta, dout, 1e-5, dtype, affine=affine, per=per)


def lab_view(preset: str, dtype: str, affine: str = "both", per: str = "token") -> View:
    return View(lab_inputs(preset, dtype, affine, per), preset, LINK)


def page_view(preset: str, dtype: str, norm: str) -> View:
    """The comparison page's view: the inputs as rows (tokens flattened), `norm` chosen."""
    return View(lab_inputs(preset, dtype).rows(), preset, LINK, norm)


def lab_grads(inputs: Inputs) -> ln_core.StagedGrads:
    """What the lab shows: ui.compute.forward_backward's ln_core calls."""
    cache = ln_core.forward(
        inputs.x, inputs.layer_gamma, inputs.layer_beta, inputs.eps, inputs.axis
    )
    return ln_core.backward(inputs.dout, cache)


def page_grads(view: View) -> ln_core.Grads:
    """What the comparison page shows for its normalization: ui.compute.rms's ln_core calls,
    or ui.compute.forward_backward's over the page's axis (0 for BatchNorm)."""
    i = view.inputs
    if view.norm == "rms":
        return ln_core.rms_backward(i.dout, ln_core.rms_forward(i.x, i.gamma, i.beta, i.eps))
    axis = 0 if view.norm == "batch" else -1
    return ln_core.backward(i.dout, ln_core.forward(i.x, i.layer_gamma, i.layer_beta, i.eps, axis))


def lab_check(inputs: Inputs) -> ln_core.GradientCheck:
    """ui.compute.gradient_check's ln_core call."""
    i = inputs
    return ln_core.gradient_check(i.x, i.layer_gamma, i.layer_beta, i.dout, i.eps, axis=i.axis)


def code_cells(notebook: bytes) -> list[str]:
    return [c.source for c in nbformat.reads(notebook, 4).cells if c.cell_type == "code"]


def markdown_cells(notebook: bytes) -> list[str]:
    return [c.source for c in nbformat.reads(notebook, 4).cells if c.cell_type == "markdown"]


def without_numbers(source: str) -> str:
    return NUMBER.sub("<number>", source)


# Forget every name the previous notebook defined (%reset without its slow history clean-up).
FORGET = """\
for _name in [n for n in globals() if not n.startswith("_") and n not in KEEP]:
    del globals()[_name]"""
KEEP = ("In", "Out", "get_ipython", "exit", "quit", "open", "KEEP")


def merged(
    notebooks: list[bytes], drawn: int | None = None, apart: tuple[str, ...] = ()
) -> nbformat.NotebookNode:
    """One notebook running several in turn, each in a fresh namespace (one kernel start).

    drawn: keep the figure cell of only the first `drawn` notebooks (drawing costs the most).
    apart: the ids of the cells whose outputs are read; when given, the code cells between
    them run joined, in their order (each cell's round trip to the kernel costs more than the
    cell itself), and Markdown cells are left out.
    """
    cells = [nbformat.v4.new_code_cell(f"KEEP = {KEEP!r}", id="keep")]
    for k, data in enumerate(notebooks):
        cells.append(nbformat.v4.new_code_cell(FORGET, id=f"case{k}-forget"))
        pending: list[str] = []
        for cell in nbformat.reads(data, 4).cells:
            if cell.id == "jacobian-figure" and drawn is not None and k >= drawn:
                continue
            if apart and cell.cell_type == "markdown":
                continue
            if apart and cell.id not in apart:
                pending.append(cell.source)
                continue
            if pending:
                joined = "\n\n".join(pending)
                cells.append(nbformat.v4.new_code_cell(joined, id=f"case{k}-before-{cell.id}"))
                pending = []
            cells.append(replace_id(cell, f"case{k}-{cell.id}"))
        if pending:
            cells.append(nbformat.v4.new_code_cell("\n\n".join(pending), id=f"case{k}-end"))
    return nbformat.v4.new_notebook(cells=cells, metadata=nbformat.reads(notebooks[0], 4).metadata)


def replace_id(cell: nbformat.NotebookNode, new_id: str) -> nbformat.NotebookNode:
    copy = nbformat.from_dict(dict(cell))
    copy.id = new_id
    return copy


def execute(notebook: nbformat.NotebookNode, kernels) -> nbformat.NotebookNode:
    """Run every cell on a fresh kernel of KERNEL, in an empty folder (so nothing of this
    repository can be imported from the current directory); a cell that raises fails the run."""
    from jupyter_client import KernelManager
    from nbclient import NotebookClient

    manager = KernelManager(kernel_name=KERNEL, kernel_spec_manager=kernels)
    # A kernel as Jupyter starts one: Streamlit, imported by other tests, sets MPLBACKEND=Agg
    # in this process, which would keep the kernel's figures from showing.
    env = {k: v for k, v in os.environ.items() if k not in ("MPLBACKEND", "PYTHONPATH")}
    with tempfile.TemporaryDirectory() as folder:
        resources = {"metadata": {"path": folder}}
        NotebookClient(notebook, km=manager, timeout=120, resources=resources).execute(env=env)
    return notebook


def printed(cell: nbformat.NotebookNode) -> str:
    """Everything a code cell printed."""
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def by_id(notebook: nbformat.NotebookNode) -> dict[str, nbformat.NotebookNode]:
    return {cell.id: cell for cell in notebook.cells}
