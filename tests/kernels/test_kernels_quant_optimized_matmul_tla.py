"""Example 42 / QuantOptimizedMatmulTla: the README shape, the padding cases and layouts against an independent
golden (exact int32 products, two fp32 multiplies, one rounding), races and interleavings through the workspace
ring with and without padding, the flag-id rule, assembly and argument errors."""

from __future__ import annotations

import importlib

import ml_dtypes
import numpy as np
import pytest

from catlass_py.assemblies import quant_optimized_matmul_tla as assembly
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm import MmadAtlasA2Preload
from catlass_py.ops import quant_optimized_matmul_tla as op
from catlass_py.testing import check

EX = importlib.import_module("catlass_py.examples.42_quant_optimized_matmul_tla")


def _inputs(m, n, k, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.integers(-5, 5, (m, k)).astype(np.int8), rng.integers(-5, 5, (k, n)).astype(np.int8),
            rng.uniform(0, 1, n).astype(np.float32), rng.uniform(0, 1, m).astype(np.float32))


def _want(a, b, scale, pts):
    """Independent golden: exact int64 product, float32(acc) * scale * per-token scale, left to right."""
    acc = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.float32)
    return (acc * scale[None, :]) * pts[:, None]


def _exact(d, want):
    return np.array_equal(d.astype(np.float32), want.astype(d.dtype).astype(np.float32))


def test_readme_shape_compare_success_bit_exact():
    res = EX.run(["256", "512", "1024", "0"], cores=20)
    assert res.passed and res.verdict == "Compare success." and res.details["bit_exact"]
    assert (res.details["padding_a"], res.details["padding_b"]) == (False, False)


@pytest.mark.parametrize("m,n,k,la,lb", [(130, 300, 700, "row", "column"), (130, 300, 512, "row", "row"),
                                         (300, 260, 512, "column", "row"), (200, 300, 512, "column", "column")])
def test_layouts_and_padding(m, n, k, la, lb):
    a, b, s, p = _inputs(m, n, k, seed=m)
    d = op(a, b, s, p, layout_a=la, layout_b=lb, core_num=3)
    assert d.dtype == ml_dtypes.bfloat16 and _exact(d, _want(a, b, s, p))


@pytest.mark.parametrize("out", ["float16", "float32"])
def test_output_types(out):
    a, b, s, p = _inputs(100, 200, 600, seed=4)
    d = op(a, b, s, p, out_dtype=out, core_num=2)
    assert _exact(d, _want(a, b, s, p))


@pytest.mark.parametrize("shape", [(64, 300, 300), (300, 520, 512)])
def test_races_and_interleavings(shape):
    a, b, s, p = _inputs(*shape, seed=5)
    result = check(op, a, b, s, p, core_num=3, golden=_want(a, b, s, p), k=shape[2], seeds=2)
    assert result.compare.passed and not result.interleavings.differ


def test_rules():
    with pytest.raises(ConfigError, match="include the padding flag 4"):
        assembly.assemble(padding_a=True, workspace_stages=3)
    kernel = assembly.assemble(workspace_stages=3, dispatch_policy=MmadAtlasA2Preload(enable_shuffle_k=True))
    a, b, s, p = _inputs(300, 600, 512, seed=6)
    assert _exact(op(a, b, s, p, kernel=kernel, core_num=2), _want(a, b, s, p))
    with pytest.raises(ArgumentError, match="kernel: assembled for padding"):
        op(*_inputs(10, 20, 30), kernel=kernel, core_num=2)
    with pytest.raises(ArgumentError, match="usage"):
        EX.run(["1"], cores=1)
