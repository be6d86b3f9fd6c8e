"""Example 52 / QuantMultiCoreSplitkMatmulTla: the README shape, the split factor rule, layouts and D types against
an independent golden (exact int32 products, two fp32 multiplies, one rounding), races and interleavings, the
epilogue's AI-core step (duplicated blocks with few cores, the one-core hang), assembly and argument errors."""

from __future__ import annotations

import importlib

import ml_dtypes
import numpy as np
import pytest

from catlass_py import golden
from catlass_py.arch import LaunchParams
from catlass_py.assemblies import quant_multi_core_splitk_matmul_tla as assembly
from catlass_py.epilogue import EpilogueAtlasA2PerTokenDequantTla, EpilogueHorizontalTileSwizzle
from catlass_py.epilogue.block import BlockEpiloguePerTokenDequantTla
from catlass_py.errors import ArgumentError, ConfigError, RaceError
from catlass_py.gemm import GemmCoord
from catlass_py.gemm.block import GemmIdentityBlockSwizzle
from catlass_py.kernel.splitk_matmul import SplitkReduceAdd
from catlass_py.ops import quant_multi_core_splitk_matmul_tla as op
from catlass_py.testing import check
from catlass_py.tile.copy_tla import TileCopyDequantTla
from catlass_py.tile.vector import TileBroadcastOneBlk, TileOneBlkColumnBroadcastMul, TileRowBroadcastMul

EX = importlib.import_module("catlass_py.examples.52_quant_multi_core_splitk_matmul_tla")


def _inputs(m, n, k, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.integers(-16, 16, (m, k)).astype(np.int8), rng.integers(-16, 16, (k, n)).astype(np.int8),
            rng.uniform(0, 1, n).astype(np.float32), rng.uniform(0, 1, m).astype(np.float32))


def _want(a, b, scale, pts):
    """Independent golden: the exact int64 product, then float32(acc) * scale * per-token scale (left to right)."""
    acc = (a.astype(np.int64) @ b.astype(np.int64)).astype(np.float32)
    return (acc * scale[None, :]) * pts[:, None]


def test_readme_shape_compare_success_bit_exact():
    res = EX.run(["256", "512", "1024", "0"], cores=20)
    assert res.passed and res.verdict == "Compare success."
    assert res.details["splitk_factor"] == 2 and res.details["bit_exact"]


@pytest.mark.parametrize("m,n,k,cores,factor", [(128, 256, 2048, 20, 4), (256, 512, 1024, 20, 2),
                                                (128, 256, 512, 20, 1), (1000, 1000, 1024, 20, 2)])
def test_splitk_factor_rule(m, n, k, cores, factor):
    kernel = assembly.assemble()
    assert kernel.get_splitk_factor(m, n, k, cores) == factor
    args = kernel.Arguments(GemmCoord(m, n, k), cores, *[None] * 10)
    assert kernel.get_workspace_size(args) == max(m * n * 4 * factor + m * n * 4, 2 * 1024 * 1024)


@pytest.mark.parametrize("out", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("layouts", [("row", "column"), ("column", "row")])
def test_values_against_an_independent_golden(out, layouts):
    a, b, s, p = _inputs(150, 300, 1100, seed=1)
    d = op(a, b, s, p, layout_a=layouts[0], layout_b=layouts[1], out_dtype=out, core_num=8)
    want = _want(a, b, s, p)
    np_out = {"bfloat16": ml_dtypes.bfloat16, "float16": np.float16, "float32": np.float32}[out]
    assert d.dtype == np_out
    assert np.array_equal(d.astype(np.float32), want.astype(np_out).astype(np.float32))


def test_races_and_interleavings_with_many_cores():
    a, b, s, p = _inputs(200, 260, 1500, seed=2)
    kernel = assembly.assemble()
    result = check(op, a, b, s, p, kernel=kernel, core_num=20, golden=_want(a, b, s, p), k=1500, seeds=2)
    assert result.compare.passed and not result.interleavings.differ


def test_few_cores_dequantise_some_blocks_twice():
    """With 4 AI cores the epilogue steps by 4 / 2 = 2: AI cores 0 and 2 both take block 2 (identical bytes, a
    write-write race the detector reports); the values stay right."""
    a, b, s, p = _inputs(300, 520, 600, seed=3)
    d = op(a, b, s, p, core_num=4)
    assert golden.compare_data(d, _want(a, b, s, p), 600).passed
    with pytest.raises(RaceError, match="CopyUb2GmTla"):
        op(a, b, s, p, core_num=4, options=LaunchParams(detect_races=True))


def test_argument_errors():
    a, b, s, p = _inputs(10, 20, 30)
    with pytest.raises(ArgumentError, match="at least 2"):
        op(a, b, s, p, core_num=1)
    with pytest.raises(ArgumentError):
        op(a.astype(np.int32), b, s, p, core_num=2)
    with pytest.raises(ArgumentError, match="scale"):
        op(a, b, s[:3], p, core_num=2)
    with pytest.raises(ArgumentError):
        op(a, b, s.astype(np.float16), p, core_num=2)
    with pytest.raises(ArgumentError, match="out_dtype"):
        op(a, b, s, p, out_dtype="int8", core_num=2)
    assert op(a[:0], b, s, p[:0], core_num=2).shape == (0, 20)


def test_assembly_rules():
    arch_kw = {}
    tiles = (TileRowBroadcastMul(assembly.ATLAS_A2, "float32", (32, 256)),
             TileBroadcastOneBlk(assembly.ATLAS_A2, "float32", 32),
             TileOneBlkColumnBroadcastMul(assembly.ATLAS_A2, "float32", (32, 256)))
    copy = TileCopyDequantTla(assembly.ATLAS_A2, "int32", "float32", "float32", "bfloat16")
    policy = EpilogueAtlasA2PerTokenDequantTla(ub_stages=2, **arch_kw)
    with pytest.raises(ConfigError, match="TileShape is too large to fit in UB"):
        big = (TileRowBroadcastMul(assembly.ATLAS_A2, "float32", (64, 512)),
               TileBroadcastOneBlk(assembly.ATLAS_A2, "float32", 64),
               TileOneBlkColumnBroadcastMul(assembly.ATLAS_A2, "float32", (64, 512)))
        BlockEpiloguePerTokenDequantTla(policy, "int32", "float32", "float32", "bfloat16", *big,
                                        TileCopyDequantTla(assembly.ATLAS_A2, "int32", "float32", "float32",
                                                           "bfloat16"), EpilogueHorizontalTileSwizzle)
    with pytest.raises(ConfigError, match="TileShape must be consistent"):
        BlockEpiloguePerTokenDequantTla(policy, "int32", "float32", "float32", "bfloat16", tiles[0],
                                        TileBroadcastOneBlk(assembly.ATLAS_A2, "float32", 16), tiles[2], copy,
                                        EpilogueHorizontalTileSwizzle)
    with pytest.raises(ConfigError, match="element type template parameters"):
        BlockEpiloguePerTokenDequantTla(policy, "float32", "float32", "float32", "bfloat16", *tiles, copy,
                                        EpilogueHorizontalTileSwizzle)
    kernel = assembly.assemble()
    with pytest.raises(ConfigError, match="split-K scheduler"):
        type(kernel)(kernel.block_mmad, kernel.block_epilogue, GemmIdentityBlockSwizzle(3, 0), kernel.reduce_add)
    with pytest.raises(ConfigError, match="ReduceAdd reduces float32"):
        type(kernel)(kernel.block_mmad, kernel.block_epilogue, kernel.block_scheduler,
                     SplitkReduceAdd(assembly.ATLAS_A2, "float32", "float16", 1, 1024))
    with pytest.raises(ConfigError, match="ElementAccumulator must be a float type"):
        SplitkReduceAdd(assembly.ATLAS_A2, "int32", "float16", 1, 1024)
