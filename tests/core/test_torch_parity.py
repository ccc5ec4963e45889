"""ln_core against PyTorch's own LayerNorm and RMSNorm, from numbers stored by torch.

tests/core/data/torch_reference.npz was written by bench/torch_parity_data.py (torch 2.13.0,
CPU), so this suite needs no torch. The cases cover both affine options (with and without
gamma / beta, bias=False), normalized_shape over one, two and three trailing axes, D = 1,
float32, and RMSNorm.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from kit import assert_close

from ln_core import backward, forward, rms_backward, rms_forward

DATA = Path(__file__).resolve().parent / "data" / "torch_reference.npz"
# float64 agrees to rounding; float32 to a few units in its 7 digits.
RTOL = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 1e-5}


def _cases() -> dict[str, dict]:
    with np.load(DATA) as stored:
        cases: dict[str, dict] = {}
        for key in stored.files:
            name, field = key.split("__")
            cases.setdefault(name, {})[field] = stored[key]
    return cases


CASES = _cases()


def test_every_kind_of_case_is_stored():
    metas = [json.loads(str(case["meta"])) for case in CASES.values()]
    assert {m["kind"] for m in metas} == {"layer", "rms"}
    assert {m["k"] for m in metas} == {1, 2, 3}
    assert any("gamma" not in case for case in CASES.values())
    assert any("gamma" in case and "beta" not in case for case in CASES.values())


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    case = CASES[name]
    meta = json.loads(str(case["meta"]))
    axis = tuple(range(-meta["k"], 0))
    gamma, beta = case.get("gamma"), case.get("beta")
    if meta["kind"] == "layer":
        cache = forward(case["x"], gamma, beta, meta["eps"], axis)
        grads = backward(case["dout"], cache)
    else:
        cache = rms_forward(case["x"], gamma, beta, meta["eps"], axis)
        grads = rms_backward(case["dout"], cache)
    rtol = RTOL[cache.dtype]
    assert cache.out.dtype == case["x"].dtype
    assert_close(cache.out, case["out"], rtol, what="out")
    assert_close(grads.dx, case["dx"], rtol, scale=1.0, what="dx")
    for param in ("gamma", "beta"):
        ours = getattr(grads, f"d{param}")
        if param in case:
            assert_close(ours, case[f"d{param}"], rtol, scale=1.0, what=f"d{param}")
        else:
            assert ours is None


def test_a_single_feature_gives_exactly_zero_dx_where_torch_rounds():
    case = CASES["layernorm_single_feature"]
    cache = forward(case["x"], case["gamma"], case["beta"])
    np.testing.assert_array_equal(backward(case["dout"], cache).dx, 0.0)
    assert 0 < np.max(np.abs(case["dx"])) < 1e-12
