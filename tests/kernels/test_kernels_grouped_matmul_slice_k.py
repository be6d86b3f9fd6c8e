"""Example 05 / GroupedMatmulSliceK: K slices against the golden, the AIV zero-fill of empty K groups (over
uninitialised device memory), the split across cores, errors."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from split_coverage import assert_each_written_once, assert_round_robin, gm, run_clean

from catlass_py import data, golden
from catlass_py.analysis import WorkloadRecorder
from catlass_py.arch import GlobalBuffer, LaunchParams
from catlass_py.assemblies import grouped_matmul_slice_k as assembly
from catlass_py.data import fill_random_fp16_t
from catlass_py.errors import ArgumentError, ConfigError, RaceError
from catlass_py.gemm import GemmCoord, GemmType, MmadAtlasA2PreloadAsync
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel import GroupedMatmulSliceK
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.ops import grouped_matmul_slice_k

EX = importlib.import_module("catlass_py.examples.05_grouped_matmul_slice_k")


def _operands(m, n, k, int8=False, seed=0):
    rng = np.random.default_rng(seed)
    if int8:
        return rng.integers(-128, 128, (m, k), dtype=np.int8), rng.integers(-128, 128, (k, n), dtype=np.int8)
    return rng.uniform(-2, 2, (m, k)).astype(np.float16), rng.uniform(-2, 2, (k, n)).astype(np.float16)


def _launch_poisoned(a, b, gl, cores, **launch_options):
    """Run the example's kernel on a C buffer that starts as poison (uninitialised device memory)."""
    g, (m, k), n = len(gl), a.shape, b.shape[1]
    kernel = assembly.assemble()
    c_buf = GlobalBuffer.empty(g * m * n * 2, "c")
    rec = WorkloadRecorder()
    args = kernel.Arguments(GemmCoord(m, n, k), g, gm("gl", gl), gm("a", np.ascontiguousarray(a.T)), gm("b", b),
                            c_buf.tensor("float16"))
    result = run_clean(kernel, args, cores, observers=(rec,), **launch_options)
    return c_buf.raw.view(np.float16).reshape(g, m, n).copy(), rec.report, result


@pytest.mark.parametrize("gl,m,n,cores", [
    ([0, 40, 40, 200, 300, 300], 100, 70, 2),   # empty first, middle and last groups
    ([300], 129, 257, 3),                       # one group: tails in m and n, 2 K tiles
    ([10, 20], 5, 3, 6),                        # tiny, more cores than blocks
])
def test_slices_and_zero_fill_over_poison(gl, m, n, cores):
    gl = np.array(gl, np.int64)
    k = int(gl[-1]) + 7  # K past the last group value is never read
    a, b = _operands(m, n, k, seed=m)
    c, report, _ = _launch_poisoned(a, b, gl, cores)
    expect = golden.grouped_matmul_slice_k(a, b, gl)
    assert not np.isnan(c).any()  # the empty groups were zero-filled, the others fully written
    assert golden.compare_data(c, expect, k).passed
    empty = np.diff(np.concatenate([[0], gl])) == 0
    assert not c[empty].any()
    assert_each_written_once(report, {g: (m, n) for g in np.flatnonzero(~empty)}, "group")
    assert_round_robin(report, cores, "group")
    fills = [mk.data["group"] for mk in report.markers if mk.kind == "zero_fill"]
    assert sorted(set(fills)) == list(np.flatnonzero(empty))
    assert len(fills) == 2 * cores * int(empty.sum())  # every AIV of every AI core fills every empty group


def test_all_groups_empty():
    a, b = _operands(20, 30, 16)
    c = grouped_matmul_slice_k(a, b, np.zeros(3, np.int64), core_num=2)
    assert c.shape == (3, 20, 30) and not c.any()


def test_op_int8_bit_exact():
    a, b = _operands(70, 50, 300, int8=True)
    gl = np.array([100, 100, 290], np.int64)
    c = grouped_matmul_slice_k(a, b, gl, core_num=3)
    assert c.dtype == np.int32 and np.array_equal(c, golden.grouped_matmul_slice_k(a, b, gl))


def test_redundant_zero_fill_is_a_write_write_race():
    """CATLASS lets every AIV write the same zeros, unordered: the race detector reports it (benign: equal
    values). Recorded here so that a change in either the kernel or the detector is noticed."""
    a, b = _operands(16, 16, 32)
    with pytest.raises(RaceError, match="zero_fill"):
        _launch_poisoned(a, b, np.array([0, 32], np.int64), 1, options=LaunchParams(detect_races=True))


def test_example_host_data():
    res = EX.run(["5", "40", "60", "200"], cores=3)
    assert res.passed
    a, b, gl = EX.make_inputs(4, 8, 8, 64)
    assert (a == 5).mean() > 0.99 and (b == 5).mean() > 0.99  # fp16_t arithmetic: inf / inf == 1
    x = fill_random_fp16_t(data.GlibcRand(), 200000, -5.0, 5.0)
    assert set(np.unique(x[x != 5])).issubset(set(np.arange(-5, 5.01, 2 ** -10).astype(np.float16)))


def test_errors():
    a, b = _operands(8, 8, 16)
    with pytest.raises(ArgumentError, match="<= k"):
        grouped_matmul_slice_k(a, b, np.array([8, 20], np.int64), core_num=1)
    with pytest.raises(ArgumentError, match="at least one group"):
        grouped_matmul_slice_k(a, b, np.zeros(0, np.int64), core_num=1)
    with pytest.raises(ArgumentError, match="b: expected shape"):
        grouped_matmul_slice_k(a, b.T[:3], np.array([8], np.int64), core_num=1)
    r = GemmType("float16", RowMajor)
    mmad = BlockMmad(MmadAtlasA2PreloadAsync(1, 2, 4, 2, 1, True, True), (128, 256, 256), (128, 256, 64), r, r, r)
    with pytest.raises(ConfigError, match="LayoutA must be ColumnMajor"):
        GroupedMatmulSliceK(mmad, None, GemmIdentityBlockSwizzle(3, 1))
    c = GemmType("float16", ColumnMajor)
    ok = BlockMmad(MmadAtlasA2PreloadAsync(1, 2, 4, 2, 1, True, True), (128, 256, 256), (128, 256, 64), c, r, r)
    assert GroupedMatmulSliceK(ok, None, GemmIdentityBlockSwizzle(3, 1)).mem_fill.element.name == "float16"
