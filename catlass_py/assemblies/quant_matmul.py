"""CATLASS example 12 quant_matmul (``examples/12_quant_matmul/quant_matmul.cpp``): ``QuantMatmulMultiStageWorkspace``
with ``MmadAtlasA2PreloadAsyncWithCallback`` and the per-token-dequant epilogue, assembled step by step like the C++.

Used by ``examples/12_quant_matmul.py`` and :mod:`catlass_py.ops.quant_matmul`.
"""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import Count, Element, Flag, Layout, TileShape
from catlass_py.epilogue import BlockEpilogue, EpilogueAtlasA2PerTokenDequant, EpilogueHorizontalTileSwizzle
from catlass_py.gemm import GemmShape, GemmType, MmadAtlasA2PreloadAsyncWithCallback
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel.quant_matmul_multistage_workspace import QuantMatmulMultiStageWorkspace
from catlass_py.layout import ColumnMajor, RowMajor, VectorLayout
from catlass_py.tile import EpilogueTileCopy, TileBroadcastOneBlk, TileOneBlkColumnBroadcastMul, TileRowBroadcastMul


def assemble(arch=ATLAS_A2, *, swizzle_direction: Count = 0, out_dtype: Element = "float16",
             layout_a: Layout = RowMajor, layout_b: Layout = ColumnMajor, workspace_stages: Count = 2,
             ub_stages: Count = 2, l1_tile: TileShape = GemmShape(128, 256, 512),
             l0_tile: TileShape = GemmShape(128, 256, 128), swizzle_offset: Count = 3, preload_stages: Count = 1,
             l1_stages: Count = 2, l0a_stages: Count = 2, l0b_stages: Count = 2, l0c_stages: Count = 1,
             enable_shuffle_k: Flag = True):
    """Build the kernel like the C++ example. ``swizzle_direction`` is 0 when m > n, else 1 (the C++ picks
    one of two instantiations at runtime); ``out_dtype`` ('float16' or 'bfloat16') is the type of D and both
    scales; ``layout_a``/``layout_b`` swap operand layouts (the example: A RowMajor, B ColumnMajor); the tile
    shapes, the swizzle offset and the dispatch policy's stages and shuffle-K are the C++'s template constants."""
    # 1. Block-level MMAD: preload 1 tile ahead, 2 L1 / 2 L0A / 2 L0B / 1 L0C stages, shuffle-K.
    dispatch_policy = MmadAtlasA2PreloadAsyncWithCallback(
        preload_stages=preload_stages, l1_stages=l1_stages, l0a_stages=l0a_stages, l0b_stages=l0b_stages,
        l0c_stages=l0c_stages, enable_unit_flag=False, enable_shuffle_k=enable_shuffle_k, arch=arch,
    )
    l1_tile_shape = GemmShape(*l1_tile)
    l0_tile_shape = GemmShape(*l0_tile)
    a_type = GemmType("int8", layout_a)
    b_type = GemmType("int8", layout_b)
    c_type = GemmType("int32", RowMajor)
    block_mmad = BlockMmad(dispatch_policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type)

    # 2. Epilogue: per-token dequant, 2 UB stages, 32 x 256 fp32 tiles, column-major tile order.
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

    # 3. Block scheduler and kernel (2 workspace stages).
    block_scheduler = GemmIdentityBlockSwizzle(swizzle_offset, swizzle_direction)
    return QuantMatmulMultiStageWorkspace(block_mmad, block_epilogue, block_scheduler,
                                          workspace_stages=workspace_stages)


__all__ = ["assemble"]
