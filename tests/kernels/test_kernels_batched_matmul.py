"""Example 01 / BatchedMatmul: batches against the golden, both runtime swizzles, the split, errors."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from split_coverage import assert_each_written_once, assert_round_robin

from catlass_py import golden
from catlass_py.assemblies import batched_matmul as assembly
from catlass_py.errors import ArgumentError
from catlass_py.ops import batched_matmul

EX = importlib.import_module("catlass_py.examples.01_batched_matmul")


def _operands(batch, m, n, k, int8=False, seed=0):
    rng = np.random.default_rng(seed)
    if int8:
        return (rng.integers(-128, 128, (batch, m, k), dtype=np.int8),
                rng.integers(-128, 128, (batch, k, n), dtype=np.int8))
    return (rng.uniform(-2, 2, (batch, m, k)).astype(np.float16), rng.uniform(-2, 2, (batch, k, n)).astype(np.float16))


@pytest.mark.parametrize("batch,m,n,k,cores", [
    (1, 1, 1, 1, 1),
    (3, 300, 20, 270, 2),    # m > n: swizzle <3,0>; n smaller than a tile
    (2, 20, 300, 100, 5),    # m <= n: swizzle <3,1>; more cores than blocks per batch
    (4, 129, 257, 64, 3),    # tails in m and n
])
def test_shapes(batch, m, n, k, cores):
    a, b = _operands(batch, m, n, k, seed=batch + m)
    c, report = batched_matmul(a, b, core_num=cores, return_report=True)
    assert c.shape == (batch, m, n) and c.dtype == np.float16
    assert golden.compare_data(c, golden.batched_matmul(a, b), k).passed
    assert_each_written_once(report, {i: (m, n) for i in range(batch)}, "batch")
    assert_round_robin(report, cores)  # loop indexes the task sequence over all batches


def test_int8_column_major_bit_exact():
    a, b = _operands(3, 70, 90, 200, int8=True)
    c = batched_matmul(a, b, layout_a="column", layout_b="column", core_num=2)
    assert np.array_equal(c, golden.batched_matmul(a, b))


def test_runtime_swizzle_choice():
    assert assembly.swizzle_for(300, 20) == (3, 0)
    assert assembly.swizzle_for(20, 300) == (3, 1)
    assert assembly.swizzle_for(64, 64) == (3, 1)
    a, b = _operands(1, 600, 700, 32)
    _, report = batched_matmul(a, b, core_num=1, return_report=True)
    order = [(blk["m_idx"], blk["n_idx"]) for blk in report.blocks[0]]
    # <3,1>: strips of 3 block-columns walking right first: (0,0) (0,1) (0,2) (1,0) ...
    assert order[:4] == [(0, 0), (0, 1), (0, 2), (1, 0)]


def test_example_host_data():
    res = EX.run(["2", "100", "300", "64"], cores=3)
    assert res.passed
    assert res.details["swizzle"] == "<3,1>"
    a, _ = EX.make_inputs(1, 4, 4, 4)
    assert (a == -5).mean() > 0.9  # int bounds: the generic template's integer rand()/RAND_MAX


@pytest.mark.parametrize("a,b,match", [
    (np.zeros((2, 4, 4), np.float16), np.zeros((3, 4, 4), np.float16), "b: expected shape"),
    (np.zeros((4, 4), np.float16), np.zeros((4, 4), np.float16), "3-D"),
    (np.zeros((1, 4, 0), np.float16), np.zeros((1, 0, 4), np.float16), "k"),
    (np.zeros((1, 4, 4), np.float64), np.zeros((1, 4, 4), np.float64), "dtype"),
])
def test_argument_errors(a, b, match):
    with pytest.raises(ArgumentError, match=match):
        batched_matmul(a, b, core_num=1)
