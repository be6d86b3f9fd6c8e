"""CATLASS example 07 grouped_matmul_slice_m_per_token_dequant_moe
(``examples/07_grouped_matmul_slice_m_per_token_dequant_moe/grouped_matmul_slice_m_per_token_dequant_moe.cpp``):
``GroupedMatmulSliceMPerTokenDequant`` (full-size workspace) with ``MmadAtlasA2PreloadAsync`` and the per-token-dequant
epilogue, assembled step by step like the C++.

Used by ``examples/07_grouped_matmul_slice_m_per_token_dequant_moe.py`` and
:mod:`catlass_py.ops.grouped_matmul_slice_m_per_token_dequant_moe`.
"""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import Count, Element, Flag, Swizzle, TileShape
from catlass_py.epilogue import BlockEpilogue, EpilogueAtlasA2PerTokenDequant, EpilogueHorizontalTileSwizzle
from catlass_py.gemm import GemmShape, GemmType, MmadAtlasA2PreloadAsync
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel.grouped_matmul_slice_m_per_token_dequant import GroupedMatmulSliceMPerTokenDequant
from catlass_py.layout import RowMajor, VectorLayout
from catlass_py.tile import EpilogueTileCopy, TileBroadcastOneBlk, TileOneBlkColumnBroadcastMul, TileRowBroadcastMul


def assemble(arch=ATLAS_A2, *, out_dtype: Element = "float16", scale_dtype: Element = "float32",
             element_group_list: Element = "int32", ub_stages: Count = 2,
             l1_tile: TileShape = GemmShape(128, 256, 256), l0_tile: TileShape = GemmShape(128, 256, 64),
             swizzle: Swizzle = (3, 0), preload_stages: Count = 1, l1_stages: Count = 2, l0a_stages: Count = 2,
             l0b_stages: Count = 4, l0c_stages: Count = 1, enable_shuffle_k: Flag = True):
    """Build the kernel like the C++ example (int32 group list, fp32 scales, fp16 D). ``scale_dtype`` may be
    D's type instead (the general per-token-dequant specialisation); the other keywords swap the epilogue's UB
    stages, the tile shapes, the swizzle and the template constants of the dispatch policy."""
    # 1. Block-level MMAD: PreloadAsync (one callback after each fixpipe), 2 L1 / 2 L0A / 4 L0B / 1 L0C stages.
    dispatch_policy = MmadAtlasA2PreloadAsync(
        preload_stages=preload_stages, l1_stages=l1_stages, l0a_stages=l0a_stages, l0b_stages=l0b_stages,
        l0c_stages=l0c_stages, enable_unit_flag=False, enable_shuffle_k=enable_shuffle_k, arch=arch,
    )
    l1_tile_shape = GemmShape(*l1_tile)
    l0_tile_shape = GemmShape(*l0_tile)
    a_type = GemmType("int8", RowMajor)
    b_type = GemmType("int8", RowMajor)
    c_type = GemmType("int32", RowMajor)
    block_mmad = BlockMmad(dispatch_policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type)

    # 2. Epilogue: per-token dequant with fp32 scales (the float-scale specialisation), 32 x 256 tiles.
    epilogue_policy = EpilogueAtlasA2PerTokenDequant(ub_stages=ub_stages, arch=arch)
    scale_type = GemmType(scale_dtype, VectorLayout)
    per_token_scale_type = GemmType(scale_dtype, VectorLayout)
    d_type = GemmType(out_dtype, RowMajor)
    compute_type = GemmType("float32", RowMajor)
    epilogue_tile_shape = (32, 256)
    tile_row_broadcast_mul = TileRowBroadcastMul(arch, compute_type, epilogue_tile_shape)
    tile_broadcast_one_blk = TileBroadcastOneBlk(arch, compute_type, epilogue_tile_shape[0])
    tile_one_blk_column_broadcast_mul = TileOneBlkColumnBroadcastMul(arch, compute_type, epilogue_tile_shape)
    epilogue_tile_copy = EpilogueTileCopy(arch, c_type, scale_type, per_token_scale_type, d_type)
    block_epilogue = BlockEpilogue(
        epilogue_policy, c_type, scale_type, per_token_scale_type, d_type,
        tile_row_broadcast_mul, tile_broadcast_one_blk, tile_one_blk_column_broadcast_mul,
        epilogue_tile_copy, EpilogueHorizontalTileSwizzle,
    )

    # 3. Block scheduler and kernel (int32 group list, as GenerateGroupList's default element).
    block_scheduler = GemmIdentityBlockSwizzle(*swizzle)
    return GroupedMatmulSliceMPerTokenDequant(block_mmad, block_epilogue, block_scheduler, element_group_list)


__all__ = ["assemble"]
