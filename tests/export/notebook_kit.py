"""Helpers for the notebook tests: views like the lab's, running notebooks, reading outputs."""

from __future__ import annotations

import re

import nbformat
import numpy as np

import ln_core
from teaching.presets import PRESETS, make_example
from ui.export.notebook import View
from ui.inputs import Inputs

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


def lab_grads(inputs: Inputs) -> ln_core.StagedGrads:
    """What the lab shows: ui.compute.forward_backward's ln_core calls."""
    cache = ln_core.forward(
        inputs.x, inputs.layer_gamma, inputs.layer_beta, inputs.eps, inputs.axis
    )
    return ln_core.backward(inputs.dout, cache)


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


def merged(notebooks: list[bytes]) -> nbformat.NotebookNode:
    """One notebook running several in turn, each after a fresh namespace (one kernel start)."""
    cells = []
    for k, data in enumerate(notebooks):
        cells.append(nbformat.v4.new_code_cell("%reset -f", id=f"case{k}-reset"))
        for cell in nbformat.reads(data, 4).cells:
            cells.append(replace_id(cell, f"case{k}-{cell.id}"))
    return nbformat.v4.new_notebook(cells=cells, metadata=nbformat.reads(notebooks[0], 4).metadata)


def replace_id(cell: nbformat.NotebookNode, new_id: str) -> nbformat.NotebookNode:
    copy = nbformat.from_dict(dict(cell))
    copy.id = new_id
    return copy


def execute(notebook: nbformat.NotebookNode, kernels) -> nbformat.NotebookNode:
    """Run every cell on a fresh kernel of KERNEL; a cell that raises fails the run."""
    from jupyter_client import KernelManager
    from nbclient import NotebookClient

    manager = KernelManager(kernel_name=KERNEL, kernel_spec_manager=kernels)
    NotebookClient(notebook, km=manager, timeout=120).execute()
    return notebook


def printed(cell: nbformat.NotebookNode) -> str:
    """Everything a code cell printed."""
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def by_id(notebook: nbformat.NotebookNode) -> dict[str, nbformat.NotebookNode]:
    return {cell.id: cell for cell in notebook.cells}
