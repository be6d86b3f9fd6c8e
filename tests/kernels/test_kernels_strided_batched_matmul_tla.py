"""Example 45 / StridedBatchedMatmulTla + BlockMmadTla<MmadPingpongTlaV2>: the README shapes (packed, with leading
dimensions, with layouts), padded leading dimensions and batch strides in every layout pair against an
independent golden, races and interleavings, the split, CATLASS's argument rules, assembly errors."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from split_coverage import assert_round_robin

from catlass_py import golden
from catlass_py.assemblies import strided_batched_matmul_tla as assembly
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm import GemmCoord, GemmShape, MmadPingpong, MmadPingpongTlaV2
from catlass_py.gemm.block import BlockMmadTla, GemmIdentityBlockSwizzle
from catlass_py.kernel.basic_matmul_tla import BasicMatmulTla
from catlass_py.kernel.strided_batched_matmul_tla import StridedBatchedMatmulTla, batched_layout
from catlass_py.ops import strided_batched_matmul_tla
from catlass_py.testing import check

EX = importlib.import_module("catlass_py.examples.45_strided_batched_matmul_tla")


def _operands(batch, m, n, k, dtype=np.float16, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == np.int8:
        return (rng.integers(-128, 128, (batch, m, k), dtype=np.int8),
                rng.integers(-128, 128, (batch, k, n), dtype=np.int8))
    return rng.uniform(-5, 5, (batch, m, k)).astype(dtype), rng.uniform(-5, 5, (batch, k, n)).astype(dtype)


def _want(a, b):
    """Independent golden: einsum over exact float64 (int64 for int8) products."""
    if a.dtype == np.int8:
        return np.einsum("bmk,bkn->bmn", a.astype(np.int64), b.astype(np.int64)).astype(np.int32)
    return np.einsum("bmk,bkn->bmn", a.astype(np.float64), b.astype(np.float64)).astype(np.float32)


def _assert_matches(c, a, b):
    want = _want(a, b)
    if a.dtype == np.int8:
        assert np.array_equal(c, want)
    else:
        assert c.dtype == a.dtype and c.shape == want.shape
        assert golden.compare_data(c, want, a.shape[2]).passed


@pytest.mark.parametrize("argv", [["5", "256", "512", "1024"], ["5", "256", "512", "1024", "0", "1100", "600", "600"],
                                  ["5", "256", "512", "1024", "row", "col"],
                                  ["5", "256", "512", "1024", "0", "col", "row"]])
def test_readme_shapes_compare_success(argv):
    res = EX.run(argv, cores=24)
    assert res.passed and res.verdict == "Compare success."
    assert res.details["total_blocks"] == 5 * 2 * 2


def test_readme_batch_stride_line_is_rejected_like_catlass():
    """``... 1100 600 600 300000 400000 500000``: B's batch stride 400000 is shorter than one 1024 x 512 matrix at
    ldb 600 ((k-1)*ldb + n = 614312), which the C++ parser rejects too (without ENABLE_TRANS_A)."""
    with pytest.raises(ArgumentError, match="Invalid batch strides.*614312"):
        EX.run(["5", "256", "512", "1024", "0", "1100", "600", "600", "300000", "400000", "500000"], cores=2)
    res = EX.run(["2", "100", "60", "90", "0", "100", "70", "64", "10001", "6400", "6500", "col", "row"], cores=3)
    assert res.passed


@pytest.mark.parametrize("layouts", [("row", "row"), ("column", "row"), ("row", "column"), ("column", "column")])
def test_padded_strides_every_layout(layouts):
    a, b = _operands(3, 70, 300, 333, seed=1)
    la, lb = layouts
    lda = (333 if la == "row" else 70) + 13
    ldb = (300 if lb == "row" else 333) + 7
    c = strided_batched_matmul_tla(a, b, layout_a=la, layout_b=lb, lda=lda, ldb=ldb, ldc=301,
                                   stride_a=lda * 400, stride_b=ldb * 400, stride_c=301 * 71, core_num=3)
    _assert_matches(c, a, b)


@pytest.mark.parametrize("dtype,out", [(np.int8, None), ("bfloat16", None), (np.float16, "float32")])
def test_dtypes(dtype, out):
    import ml_dtypes

    dtype = ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype
    a, b = _operands(2, 40, 50, 300, dtype, seed=2)
    c = strided_batched_matmul_tla(a, b, out_dtype=out, core_num=2)
    if out == "float32":
        assert c.dtype == np.float32
        assert golden.compare_data(c, _want(a, b), 300).passed
    else:
        _assert_matches(c, a, b)


@pytest.mark.parametrize("unit_flag", [True, False])
def test_races_interleavings_and_split(unit_flag):
    a, b = _operands(3, 300, 260, 600, seed=3)
    kernel = assembly.assemble(dispatch_policy=MmadPingpongTlaV2(enable_unit_flag=unit_flag), swizzle=(3, 0))
    result = check(strided_batched_matmul_tla, a, b, kernel=kernel, core_num=4, golden=_want(a, b), k=600, seeds=2)
    assert result.compare.passed and not result.interleavings.differ
    c, report = strided_batched_matmul_tla(a, b, kernel=kernel, core_num=4, return_report=True)
    assert_round_robin(report, 4)
    assert sum(report.blocks_per_core()) == 3 * 3 * 2


def test_one_row_runs_as_sixteen():
    a, b = _operands(2, 1, 300, 70, seed=4)
    _assert_matches(strided_batched_matmul_tla(a, b, core_num=2), a, b)


def test_argument_rules():
    with pytest.raises(ArgumentError, match="usage"):
        EX.run(["5", "256", "512"], cores=1)
    with pytest.raises(ArgumentError, match="usage"):
        EX.run(["5", "256", "512", "1024", "0", "1100"], cores=1)
    with pytest.raises(ArgumentError, match="greater than 0"):
        EX.run(["0", "256", "512", "1024"], cores=1)
    with pytest.raises(ArgumentError, match=r"require lda>=1024, ldb>=512, ldc>=512"):
        EX.run(["5", "256", "512", "1024", "0", "1000", "600", "600"], cores=1)
    a, b = _operands(2, 10, 20, 30)
    with pytest.raises(ArgumentError, match="greater than 0"):
        strided_batched_matmul_tla(a, b, lda=0, core_num=1)
    with pytest.raises(ArgumentError, match="Invalid batch strides"):
        strided_batched_matmul_tla(a, b, stride_c=10, core_num=1)
    with pytest.raises(ArgumentError, match="to match"):
        strided_batched_matmul_tla(a, b[:1], core_num=1)
    with pytest.raises(ArgumentError):
        strided_batched_matmul_tla(a[0], b[0], core_num=1)


def test_assembly_rules():
    with pytest.raises(ConfigError, match=r"\(L1A_TILE_SIZE \+ L1B_TILE_SIZE\) \* STAGES <= L1_SIZE"):
        BlockMmadTla(MmadPingpongTlaV2(), (256, 256, 512), (256, 256, 64), "float16", "float16", "float16")
    with pytest.raises(ConfigError, match=r"L0C_TILE_SIZE <= L0C_SIZE"):
        BlockMmadTla(MmadPingpongTlaV2(), (256, 256, 64), (256, 256, 16), "float16", "float16", "float16")
    v1 = BlockMmadTla(MmadPingpong(), (128, 256, 256), (128, 256, 64), "float16", "float16", "float16")
    v2 = BlockMmadTla(MmadPingpongTlaV2(), (128, 256, 256), (128, 256, 64), "float16", "float16", "float16")
    with pytest.raises(ConfigError, match="only MmadPingpongTlaV2 fits"):
        StridedBatchedMatmulTla(v1, None, GemmIdentityBlockSwizzle(3, 0))
    with pytest.raises(ConfigError, match="only MmadPingpong fits"):
        BasicMatmulTla(v2, None, GemmIdentityBlockSwizzle(3, 0))
    kernel = StridedBatchedMatmulTla(v2, None, GemmIdentityBlockSwizzle(3, 0))
    good = batched_layout(2, 10, 30, 300, 30, "RowMajor")
    args = kernel.Arguments(2, GemmCoord(10, 20, 30), None, good, None, batched_layout(2, 30, 20, 600, 20, "RowMajor"),
                            None, batched_layout(3, 10, 20, 200, 20, "RowMajor"))
    with pytest.raises(ConfigError, match=r"layoutC must be a rank-3 TLA layout of shape \(2, 10, 20\)"):
        kernel.can_implement(args)
    assert GemmShape(128, 256, 256) == v2.l1_tile_shape
