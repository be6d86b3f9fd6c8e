"""Example 08 / GroupedMatmul: arbitrary per-group shapes (including empty ones) against the golden, the split
across cores, the 256-group limit."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from split_coverage import assert_each_written_once, assert_round_robin, gm, run_clean

from catlass_py import golden
from catlass_py.arch import GlobalBuffer
from catlass_py.assemblies import grouped_matmul as assembly
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.ops import grouped_matmul

EX = importlib.import_module("catlass_py.examples.08_grouped_matmul")


def _operands(shapes, int8=False, seed=0):
    rng = np.random.default_rng(seed)
    if int8:
        return ([rng.integers(-128, 128, (m, k), dtype=np.int8) for m, n, k in shapes],
                [rng.integers(-128, 128, (k, n), dtype=np.int8) for m, n, k in shapes])
    return ([rng.uniform(-2, 2, (m, k)).astype(np.float16) for m, n, k in shapes],
            [rng.uniform(-2, 2, (k, n)).astype(np.float16) for m, n, k in shapes])


SHAPES = [(5, 300, 70), (130, 10, 0), (257, 513, 33), (1, 1, 1), (0, 4, 5), (40, 0, 9), (128, 256, 600)]


@pytest.mark.parametrize("cores", [1, 3, 24])
def test_arbitrary_shapes(cores):
    a, b = _operands(SHAPES, seed=cores)
    c, report = grouped_matmul(a, b, core_num=cores, return_report=True)
    for g, (ci, gi, (m, n, k)) in enumerate(zip(c, golden.grouped_matmul(a, b), SHAPES)):
        assert ci.shape == (m, n)
        assert golden.compare_data(ci, gi, max(k, 1)).passed, g
    assert not c[1].any()  # k == 0: nothing issued, the zeroed output stays 0
    assert_each_written_once(report, {g: (m, n) for g, (m, n, k) in enumerate(SHAPES)}, "group")
    assert_round_robin(report, cores, "group")


def test_int8_row_and_column_layouts_bit_exact():
    shapes = [(70, 50, 300), (3, 260, 17)]
    a, b = _operands(shapes, int8=True)
    for la, lb in (("row", "column"), ("column", "row")):
        c = grouped_matmul(a, b, layout_a=la, layout_b=lb, core_num=2)
        assert all(np.array_equal(x, y) for x, y in zip(c, golden.grouped_matmul(a, b)))


def test_empty_k_group_keeps_device_memory():
    """With the example's PreloadAsync block a k == 0 group issues no work: C keeps its old bytes."""
    m, n = 16, 32
    gl = np.array([0, 64], np.int32)
    kernel = assembly.assemble()
    shapes, la, lb, lc = EX.problem_lists(m, n, gl)
    a, b = _operands([(m, 0, 64)], seed=1)[0][0], np.ones((64, n), np.float16)
    c_buf = GlobalBuffer.empty(2 * m * n * 2, "c")
    args = kernel.Arguments(2, shapes, gm("a", np.ascontiguousarray(a.T)), la, gm("b", b), lb, c_buf.tensor("float16"), lc)
    run_clean(kernel, args, 2)
    c = c_buf.raw.view(np.float16).reshape(2, m, n)
    assert np.isnan(c[0]).all()  # untouched poison
    assert golden.compare_data(c[1], golden.matmul(a, b), 64).passed


def test_example_and_problem_lists():
    res = EX.run(["12", "40", "50", "30"], cores=3)
    assert res.passed and res.details["empty_groups"] > 0  # 12 groups over k = 30: repeated values
    shapes, la, lb, lc = EX.problem_lists(4, 5, [2, 2, 7])
    assert [s.k for s in shapes] == [2, 0, 5]
    assert la[2] == ColumnMajor(4, 5) and lb[2] == RowMajor(5, 5) and lc[0] == RowMajor(4, 5)


def test_limits_and_errors():
    a, b = _operands([(1, 1, 1)] * 257)
    with pytest.raises(ArgumentError, match="at most 256"):
        grouped_matmul(a, b, core_num=1)
    kernel = assembly.assemble()
    args = kernel.Arguments(257, [GemmCoord(1, 1, 1)] * 257, None, [], None, [], None, [])
    assert not kernel.can_implement(args)
    with pytest.raises(ArgumentError, match="b_list"):
        grouped_matmul(a[:2], b[:1], core_num=1)
    with pytest.raises(ArgumentError, match="b_list\\[0\\]"):
        grouped_matmul([np.zeros((2, 3), np.float16)], [np.zeros((4, 2), np.float16)], core_num=1)
    with pytest.raises(ArgumentError, match="dtype"):
        grouped_matmul([np.zeros((2, 3), np.float16)], [np.zeros((3, 2), np.int8)], core_num=1)
    with pytest.raises(ArgumentError, match="list"):
        grouped_matmul(np.zeros((2, 3, 3), np.float16), [np.zeros((3, 2), np.float16)], core_num=1)
    with pytest.raises(ArgumentError, match="problem_count"):
        EX.run(["300", "4", "4", "4"], cores=1)
