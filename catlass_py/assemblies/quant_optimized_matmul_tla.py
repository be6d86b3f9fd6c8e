"""CATLASS example 42 quant_optimized_matmul_tla (``examples/42_quant_optimized_matmul_tla/
quant_optimized_matmul_tla.cpp``): ``QuantOptimizedMatmulTla`` with ``BlockMmadTla<MmadAtlasA2Preload<false, true>>``
(int8, A RowMajor, B ColumnMajor, L1 128 x 256 x 512 / L0 K 128; 256 x 128 when both are column-major),
``PaddingPackedTileCopyTla`` and ``PaddingMatrixBlockND`` prologues when a leading dimension is not a multiple of
256 elements, the per-token-dequant TLA epilogue (float scales, bfloat16 D, 32 x 256 tiles, 2 UB stages), 2
workspace stages, swizzle ``<3,0>`` when m > n else ``<3,1>``. Assembled step by step like the C++.

Used by ``examples/42_quant_optimized_matmul_tla.py`` and :mod:`catlass_py.ops.quant_optimized_matmul_tla`.
"""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import Count, Element, Flag, Layout, Policy, Swizzle, TileShape
from catlass_py.assemblies.optimized_matmul_tla import padding_for, swizzle_for
from catlass_py.epilogue import EpilogueAtlasA2PerTokenDequantTla, EpilogueHorizontalTileSwizzle
from catlass_py.epilogue.block import BlockEpiloguePerTokenDequantTla
from catlass_py.gemm import GemmShape, MmadAtlasA2Preload
from catlass_py.gemm.block import BlockMmadTla, GemmIdentityBlockSwizzle
from catlass_py.kernel.optimized_matmul_tla import PaddingMatrixBlockNDTla
from catlass_py.kernel.quant_optimized_matmul_tla import QuantOptimizedMatmulTla
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.tile.copy_tla import PaddingPackedTileCopyTla, TileCopyDequantTla, tag_name
from catlass_py.tile.vector import TileBroadcastOneBlk, TileOneBlkColumnBroadcastMul, TileRowBroadcastMul


def tiles_for(layout_a: str, layout_b: str) -> tuple[tuple, tuple]:
    """(L1TileShape, L0TileShape): ``256 x 128 x 512`` / ``256 x 128 x 128`` when A and B are both ColumnMajor,
    else ``128 x 256 x 512`` / ``128 x 256 x 128``."""
    if layout_a == "ColumnMajor" and layout_b == "ColumnMajor":
        return (256, 128, 512), (256, 128, 128)
    return (128, 256, 512), (128, 256, 128)


def assemble(arch=ATLAS_A2, *, layout_a: Layout = RowMajor, layout_b: Layout = ColumnMajor, padding_a: Flag = False,
             padding_b: Flag = False, swizzle: Swizzle = (3, 0), element_d: Element = "bfloat16",
             dispatch_policy: Policy | None = None, workspace_stages: Count = 2, ub_stages: Count = 2,
             l1_tile: TileShape | None = None, l0_tile: TileShape | None = None, enable_unit_flag: Flag = False,
             enable_shuffle_k: Flag = True):
    """Build the kernel like the C++ example for one of its padding cases. The keywords swap template parameters:
    the layout tags of A and B (a name or a layout class), whether each is padded, the swizzle, D's element, the
    dispatch policy (default ``MmadAtlasA2Preload`` with ``enable_unit_flag`` and ``enable_shuffle_k``), the
    workspace and UB stages and the ``L1TileShape`` / ``L0TileShape`` (default: the example's choice by the
    layouts, :func:`tiles_for`)."""
    layout_a, layout_b = tag_name(layout_a), tag_name(layout_b)
    # 1. Dispatch policy: MmadAtlasA2Preload<enableUnitFlag = false, enableShuffleK = true>.
    if dispatch_policy is None:
        dispatch_policy = MmadAtlasA2Preload(enable_unit_flag=enable_unit_flag, enable_shuffle_k=enable_shuffle_k,
                                             arch=arch)
    default_l1, default_l0 = tiles_for(layout_a, layout_b)
    l1_tile = default_l1 if l1_tile is None else l1_tile
    l0_tile = default_l0 if l0_tile is None else l0_tile
    # 2. BlockMmadTla on the (possibly padded) int8 operands, int32 C.
    tile_copy = PaddingPackedTileCopyTla(arch, "int8", layout_a, "int8", layout_b, "int32", "RowMajor",
                                         is_padding_a=padding_a, is_padding_b=padding_b)
    block_mmad = BlockMmadTla(dispatch_policy, GemmShape(*l1_tile), GemmShape(*l0_tile), "int8", "int8", "int32",
                              None, tile_copy)
    # 3. Epilogue: EpilogueAtlasA2PerTokenDequantTla<2>, fp32 compute on 32 x 256 tiles.
    epilogue = BlockEpiloguePerTokenDequantTla(
        EpilogueAtlasA2PerTokenDequantTla(ub_stages=ub_stages, arch=arch), "int32", "float32", "float32", element_d,
        TileRowBroadcastMul(arch, "float32", (32, 256)), TileBroadcastOneBlk(arch, "float32", 32),
        TileOneBlkColumnBroadcastMul(arch, "float32", (32, 256)),
        TileCopyDequantTla(arch, "int32", "float32", "float32", element_d), EpilogueHorizontalTileSwizzle)
    # 4. Paddings: PaddingMatrixBlockND<ArchTag, Tensor, 96 KiB / sizeof(int8)>.
    pad_a = PaddingMatrixBlockNDTla(arch, "int8", layout_a, 96 * 1024) if padding_a else None
    pad_b = PaddingMatrixBlockNDTla(arch, "int8", layout_b, 96 * 1024) if padding_b else None
    # 5. Scheduler and kernel (WORKSPACE_STAGES = 2).
    return QuantOptimizedMatmulTla(block_mmad, epilogue, GemmIdentityBlockSwizzle(*swizzle), pad_a, pad_b,
                                   workspace_stages)


__all__ = ["assemble", "padding_for", "swizzle_for", "tiles_for"]
