"""Example 02 / GroupedMatmulSliceM: prefix-sum and segmented group lists, empty groups, both runtime tilings,
the rotating split across cores, errors."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from split_coverage import assert_round_robin, written_counts

from catlass_py import golden
from catlass_py.assemblies import grouped_matmul_slice_m as assembly
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm import GemmType, MmadAtlasA2PreloadAsync
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel import GroupedMatmulSliceM
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.ops import grouped_matmul_slice_m

EX = importlib.import_module("catlass_py.examples.02_grouped_matmul_slice_m")


def _operands(sizes, n, k, *, extra_rows=0, int8=False, seed=0):
    rng = np.random.default_rng(seed)
    m = int(sum(sizes)) + extra_rows
    g = len(sizes)
    if int8:
        return (rng.integers(-128, 128, (m, k), dtype=np.int8), rng.integers(-128, 128, (g, k, n), dtype=np.int8))
    return rng.uniform(-2, 2, (m, k)).astype(np.float16), rng.uniform(-2, 2, (g, k, n)).astype(np.float16)


def _check_split(report, m, n, rows, cores):
    c = written_counts(report, {None: (m, n)})[None]
    assert (c[:rows] == 1).all() and (c[rows:] == 0).all()
    assert_round_robin(report, cores, "group")


@pytest.mark.parametrize("sizes,n,k,extra,cores,layout_b", [
    ([1, 0, 3, 0, 200, 7], 300, 64, 5, 3, "column"),   # empty groups, tiny groups, k <= n tiling
    ([130, 2], 40, 600, 0, 2, "column"),               # k > n tiling: 256 x 128 blocks, 3 K tiles
    ([0, 0, 17], 10, 33, 9, 8, "row"),                 # more cores than blocks, rows past the last group
    ([5], 1, 1, 0, 1, "row"),                          # one group, one core, 1 x 1 x 1
])
def test_prefix_sum_group_lists(sizes, n, k, extra, cores, layout_b):
    a, b = _operands(sizes, n, k, extra_rows=extra, seed=len(sizes) + k)
    gl = np.cumsum(sizes).astype(np.int64)
    c, report = grouped_matmul_slice_m(a, b, gl, layout_b=layout_b, core_num=cores, return_report=True)
    expect = golden.grouped_matmul_slice_m(a, b, gl)
    rows = int(gl[-1])
    assert golden.compare_data(c, expect, k, valid=rows * n).passed
    assert not c[rows:].astype(np.float32).any()
    _check_split(report, a.shape[0], n, rows, cores)


def test_segmented_group_list_matches_prefix_sums():
    sizes = np.array([3, 0, 150, 20], np.int64)
    a, b = _operands(sizes, 270, 100, extra_rows=2)
    c_seg = grouped_matmul_slice_m(a, b, sizes, segmented=True, core_num=3)
    c_pre = grouped_matmul_slice_m(a, b, np.cumsum(sizes), core_num=3)
    assert np.array_equal(c_seg, c_pre)
    assert golden.compare_data(c_seg, golden.grouped_matmul_slice_m(a, b, sizes, segmented=True), 100).passed


def test_int8_bit_exact():
    sizes = [40, 0, 90]
    a, b = _operands(sizes, 70, 300, int8=True)
    gl = np.cumsum(sizes).astype(np.int64)
    c = grouped_matmul_slice_m(a, b, gl, core_num=2)
    assert np.array_equal(c, golden.grouped_matmul_slice_m(a, b, gl))


def test_tiling_choice_and_example():
    assert assembly.tiling_for(n=64, k=128) == "k>n"
    assert assembly.tiling_for(n=128, k=128) == "k<=n"
    k_gt_n = assembly.assemble(tiling="k>n")
    assert tuple(k_gt_n.block_mmad.l1_tile_shape) == (256, 128, 256)
    assert k_gt_n.block_scheduler.swizzle_direction == 0
    assert k_gt_n.block_mmad.policy.l0b_stages == 4
    res = EX.run(["6", "200", "120", "300"], cores=4)
    assert res.passed and res.details["tiling"] == "k>n"
    a, b, gl = EX.make_inputs(8, 512, 4, 4)
    assert list(gl) == [79, 154, 160, 181, 201, 205, 257, 288]  # GenerateGroupList after srand(0)


def test_group_list_errors():
    a, b = _operands([2, 2], 8, 8)
    with pytest.raises(ArgumentError, match="must not decrease"):
        grouped_matmul_slice_m(a, b, np.array([3, 1], np.int64), core_num=1)
    with pytest.raises(ArgumentError, match="<= m"):
        grouped_matmul_slice_m(a, b, np.array([1, 5], np.int64), core_num=1)
    with pytest.raises(ArgumentError, match="sum to at most"):
        grouped_matmul_slice_m(a, b, np.array([3, 3], np.int64), segmented=True, core_num=1)
    with pytest.raises(ArgumentError, match=">= 0"):
        grouped_matmul_slice_m(a, b, np.array([-1, 3], np.int64), segmented=True, core_num=1)
    with pytest.raises(ArgumentError, match="entries"):
        grouped_matmul_slice_m(a, b, np.array([4], np.int64), core_num=1)
    with pytest.raises(ArgumentError, match="int64"):
        grouped_matmul_slice_m(a, b, np.array([2, 4], np.int32), core_num=1)


def test_assembly_rejects_column_major_a():
    t = GemmType("float16", ColumnMajor)
    r = GemmType("float16", RowMajor)
    mmad = BlockMmad(MmadAtlasA2PreloadAsync(1, 2, 4, 2, 1, True, True), (128, 256, 256), (128, 256, 64), t, t, r)
    with pytest.raises(ConfigError, match="LayoutA must be RowMajor"):
        GroupedMatmulSliceM(mmad, None, GemmIdentityBlockSwizzle(3, 1))
    with pytest.raises(ConfigError, match="ElementGroupList"):
        assembly.assemble().__class__(assembly.assemble().block_mmad, None, GemmIdentityBlockSwizzle(), "float32")


def test_pipeline_events_balanced_through_device_gemm():
    from split_coverage import gm, run_clean

    from catlass_py.gemm import GemmCoord

    sizes = [3, 0, 140]
    a, b = _operands(sizes, 300, 520)
    gl = np.cumsum(sizes).astype(np.int64)
    kernel = assembly.assemble(tiling="k>n")
    c = np.zeros((a.shape[0], 300), np.float16)
    stored_b = np.ascontiguousarray(np.swapaxes(b, 1, 2))
    run_clean(kernel, kernel.Arguments(GemmCoord(a.shape[0], 300, 520), 3, gm("gl", gl), gm("a", a), gm("b", stored_b),
                                       gm("c", c, read_only=False)), 2)
    assert golden.compare_data(c, golden.grouped_matmul_slice_m(a, b, gl), 520).passed
