"""CATLASS example 11 grouped_matmul_slice_k_per_token_dequant
(``examples/11_grouped_matmul_slice_k_per_token_dequant/grouped_matmul_slice_k_per_token_dequant.cpp``):
``GroupedMatmulSliceKPerTokenDequant`` with ``MmadAtlasA2PreloadAsync`` and the per-token-dequant epilogue, assembled
step by step like the C++.

Used by ``examples/11_grouped_matmul_slice_k_per_token_dequant.py`` and
:mod:`catlass_py.ops.grouped_matmul_slice_k_per_token_dequant`.
"""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import Count, Element, Flag, Swizzle, TileShape
from catlass_py.epilogue import BlockEpilogue, EpilogueAtlasA2PerTokenDequant, EpilogueHorizontalTileSwizzle
from catlass_py.gemm import GemmShape, GemmType, MmadAtlasA2PreloadAsync
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel.grouped_matmul_slice_k_per_token_dequant import GroupedMatmulSliceKPerTokenDequant
from catlass_py.layout import ColumnMajor, RowMajor, VectorLayout
from catlass_py.tile import EpilogueTileCopy, TileBroadcastOneBlk, TileOneBlkColumnBroadcastMul, TileRowBroadcastMul


def assemble(arch=ATLAS_A2, *, out_dtype: Element = "bfloat16", element_group_list: Element = "int64",
             ub_stages: Count = 2, l1_tile: TileShape = GemmShape(128, 256, 256),
             l0_tile: TileShape = GemmShape(128, 256, 64), swizzle: Swizzle = (3, 0), preload_stages: Count = 1,
             l1_stages: Count = 2, l0a_stages: Count = 2, l0b_stages: Count = 4, l0c_stages: Count = 1,
             enable_shuffle_k: Flag = True):
    """Build the kernel like the C++ example (A column-major, B row-major, bf16 scales and D, int64 list). The
    keywords swap D's (and the scales') type, the group list's element, the epilogue's UB stages, the tile
    shapes, the swizzle and the template constants of the dispatch policy."""
    # 1. Block-level MMAD: PreloadAsync (one callback after each fixpipe), 2 L1 / 2 L0A / 4 L0B / 1 L0C stages.
    dispatch_policy = MmadAtlasA2PreloadAsync(
        preload_stages=preload_stages, l1_stages=l1_stages, l0a_stages=l0a_stages, l0b_stages=l0b_stages,
        l0c_stages=l0c_stages, enable_unit_flag=False, enable_shuffle_k=enable_shuffle_k, arch=arch,
    )
    l1_tile_shape = GemmShape(*l1_tile)
    l0_tile_shape = GemmShape(*l0_tile)
    a_type = GemmType("int8", ColumnMajor)
    b_type = GemmType("int8", RowMajor)
    c_type = GemmType("int32", RowMajor)
    block_mmad = BlockMmad(dispatch_policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type)

    # 2. Epilogue: per-token dequant, scales of D's type, 32 x 256 tiles, column-major tile order.
    epilogue_policy = EpilogueAtlasA2PerTokenDequant(ub_stages=ub_stages, arch=arch)
    scale_type = GemmType(out_dtype, VectorLayout)
    per_token_scale_type = GemmType(out_dtype, VectorLayout)
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

    # 3. Block scheduler and kernel (int64 group list over k).
    block_scheduler = GemmIdentityBlockSwizzle(*swizzle)
    return GroupedMatmulSliceKPerTokenDequant(block_mmad, block_epilogue, block_scheduler, element_group_list)


__all__ = ["assemble"]
