"""Example 14 / OptimizedMatmulTla + BlockMmadTla<MmadAtlasA2Preload> + PaddingMatrixBlockND: the README shape, the
four padding cases and the layouts (with the 256 x 128 tiles for two column-major operands) against an independent
golden, the padded workspaces' contents, races and interleavings, shuffle-K off, assembly and argument errors."""

from __future__ import annotations

import importlib

import ml_dtypes
import numpy as np
import pytest

from catlass_py import golden
from catlass_py.assemblies import optimized_matmul_tla as assembly
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm import MmadAtlasA2Pingpong, MmadAtlasA2Preload, MmadPingpong, GemmType
from catlass_py.gemm.block import BlockMmad, BlockMmadTla, GemmIdentityBlockSwizzle
from catlass_py.kernel.optimized_matmul_tla import OptimizedMatmulTla, PaddingMatrixBlockNDTla, padding_layout
from catlass_py.layout import RowMajor
from catlass_py.ops import optimized_matmul_tla as op
from catlass_py.testing import check
from catlass_py.tile.copy_tla import PackedTileCopyTla, PaddingPackedTileCopyTla

EX = importlib.import_module("catlass_py.examples.14_optimized_matmul_tla")


def _operands(m, n, k, dtype=np.float16, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-5, 5, (m, k)).astype(dtype), rng.uniform(-5, 5, (k, n)).astype(dtype)


def _want(a, b):
    """Independent golden: float64 sums of the exact products."""
    return (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)


def test_readme_shape_compare_success():
    res = EX.run(["256", "512", "1024", "0"], cores=20)
    assert res.passed and res.verdict == "Compare success."
    assert (res.details["padding_a"], res.details["padding_b"]) == (False, False)


@pytest.mark.parametrize("m,n,k,lb,pads", [(200, 300, 512, "column", (False, False)),
                                           (200, 300, 700, "column", (True, True)),
                                           (130, 300, 512, "row", (False, True)), (130, 512, 300, "row", (True, False))])
def test_padding_cases(m, n, k, lb, pads):
    assert assembly.padding_for(m, n, k, "RowMajor", "RowMajor" if lb == "row" else "ColumnMajor") == pads
    a, b = _operands(m, n, k, seed=m + n)
    c = op(a, b, layout_b=lb, core_num=3)
    assert golden.compare_data(c, _want(a, b), k).passed


@pytest.mark.parametrize("layouts", [("row", "row"), ("column", "row"), ("column", "column")])
def test_layouts_and_tiles(layouts):
    a, b = _operands(150, 270, 300, seed=5)
    c = op(a, b, layout_a=layouts[0], layout_b=layouts[1], core_num=3)
    assert golden.compare_data(c, _want(a, b), 300).passed
    l1, _ = assembly.tiles_for(*(("RowMajor" if x == "row" else "ColumnMajor") for x in layouts))
    assert l1 == ((256, 128, 256) if layouts == ("column", "column") else (128, 256, 256))


def test_bfloat16():
    a, b = _operands(100, 200, 300, ml_dtypes.bfloat16, seed=6)
    c = op(a, b, core_num=2)
    assert c.dtype == ml_dtypes.bfloat16 and golden.compare_data(c, _want(a, b), 300).passed


def test_padded_workspace_holds_the_operand_in_blocks():
    """The padding layout is a grid of L1-tile blocks: element (r, c) of the operand lands at its offset."""
    lay = padding_layout("RowMajor", 130, 300, 128, 256)
    assert lay((129, 299)) == 256 * (128 * 2) + 1 * (128 * 256) + (299 - 256) + 1 * 256
    lay_c = padding_layout("ColumnMajor", 300, 130, 256, 128)
    assert lay_c((299, 129)) == 1 * (256 * 128) + 43 + 1 * (256 * 2 * 128) + 1 * 256


@pytest.mark.parametrize("shape", [(64, 136, 300), (64, 520, 512)])
def test_races_and_interleavings(shape):
    a, b = _operands(*shape, seed=7)
    result = check(op, a, b, core_num=3, golden=_want(a, b), k=shape[2], seeds=2)
    assert result.compare.passed and not result.interleavings.differ


def test_shuffle_k_off_unit_flag_off():
    a, b = _operands(100, 140, 600, seed=8)
    kernel = assembly.assemble(dispatch_policy=MmadAtlasA2Preload(enable_unit_flag=False, enable_shuffle_k=False),
                               padding_a=True, padding_b=True)
    result = check(op, a, b, kernel=kernel, core_num=3, golden=_want(a, b), k=600, seeds=1)
    assert result.compare.passed


def test_assembly_and_argument_errors():
    f16 = "float16"
    plain = PackedTileCopyTla(assembly.ATLAS_A2, f16, "RowMajor", f16, "ColumnMajor", f16)
    with pytest.raises(ConfigError, match="must take the tile's actual shape"):
        BlockMmadTla(MmadAtlasA2Preload(), (128, 256, 256), (128, 256, 64), f16, f16, f16, None, plain)
    with pytest.raises(ConfigError, match=r"\(L1A_TILE_SIZE \+ L1B_TILE_SIZE\) \* STAGES <= L1_SIZE"):
        BlockMmadTla(MmadAtlasA2Preload(), (256, 256, 512), (256, 256, 64), f16, f16, f16, None,
                     PaddingPackedTileCopyTla(assembly.ATLAS_A2, f16, "RowMajor", f16, "ColumnMajor", f16))
    block = BlockMmadTla(MmadAtlasA2Preload(), (128, 256, 256), (128, 256, 64), f16, f16, f16, None,
                         PaddingPackedTileCopyTla(assembly.ATLAS_A2, f16, "RowMajor", f16, "ColumnMajor", f16))
    with pytest.raises(ConfigError, match="PaddingA is set but the tile copy bundle's IS_PADDING flag is False"):
        OptimizedMatmulTla(block, None, GemmIdentityBlockSwizzle(3, 0),
                           PaddingMatrixBlockNDTla(assembly.ATLAS_A2, f16, "RowMajor"))
    with pytest.raises(ConfigError, match="only MmadAtlasA2Preload fits"):
        OptimizedMatmulTla(BlockMmadTla(MmadPingpong(), (128, 256, 256), (128, 256, 64), f16, f16, f16), None,
                           GemmIdentityBlockSwizzle(3, 0))
    old = BlockMmad(MmadAtlasA2Pingpong(), (128, 256, 256), (128, 256, 64), GemmType(f16, RowMajor),
                    GemmType(f16, RowMajor), GemmType(f16, RowMajor))
    with pytest.raises(ConfigError):
        OptimizedMatmulTla(old, None, GemmIdentityBlockSwizzle(3, 0))
    a, b = _operands(10, 20, 30)
    with pytest.raises(ArgumentError):
        op(a.astype(np.int8), b.astype(np.int8), core_num=1)
    with pytest.raises(ArgumentError, match="kernel: assembled for padding"):
        op(a, b, kernel=assembly.assemble(), core_num=1)
    with pytest.raises(ArgumentError, match="usage"):
        EX.run(["1", "2"], cores=1)
