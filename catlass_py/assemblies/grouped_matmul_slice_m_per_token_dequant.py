"""CATLASS example 10 grouped_matmul_slice_m_per_token_dequant
(``examples/10_grouped_matmul_slice_m_per_token_dequant/grouped_matmul_slice_m_per_token_dequant.cpp``):
``GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace`` with ``MmadAtlasA2PreloadAsyncWithCallback`` and the
per-token-dequant epilogue, assembled step by step like the C++.

Used by ``examples/10_grouped_matmul_slice_m_per_token_dequant.py`` and
:mod:`catlass_py.ops.grouped_matmul_slice_m_per_token_dequant`.
"""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import Count, Element, Flag, Policy, Swizzle, TileShape
from catlass_py.epilogue import BlockEpilogue, EpilogueAtlasA2PerTokenDequant, EpilogueHorizontalTileSwizzle
from catlass_py.gemm import GemmShape, GemmType, MmadAtlasA2PreloadAsyncWithCallback
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel import GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace
from catlass_py.layout import RowMajor, VectorLayout
from catlass_py.tile import (
    CopyGmToL1GMMPTD,
    EpilogueTileCopy,
    TileBroadcastOneBlk,
    TileCopy,
    TileOneBlkColumnBroadcastMul,
    TileRowBroadcastMul,
)


def assemble(arch=ATLAS_A2, *, out_dtype: Element = "bfloat16", dispatch_policy: Policy | None = None,
             workspace_stages: Count = 2, ub_stages: Count = 2, l1_tile: TileShape = GemmShape(128, 256, 512),
             l0_tile: TileShape = GemmShape(128, 256, 128), swizzle: Swizzle = (3, 0), preload_stages: Count = 1,
             l1_stages: Count = 2, l0a_stages: Count = 2, l0b_stages: Count = 2, l0c_stages: Count = 1,
             enable_shuffle_k: Flag = True):
    """Build the kernel exactly like the C++ example (types and policies are plain Python values).

    The keywords swap template parameters: ``out_dtype`` ('bfloat16' or 'float16', the type of D and of
    both scales), ``workspace_stages``, the epilogue's ``ub_stages``, the tile shapes, the swizzle and the
    template constants of the default dispatch policy; ``dispatch_policy`` replaces that policy as a whole.
    """
    # 1. Architecture and block-level dispatch policy: preload 1 L1 tile ahead, 2 L1 / 2 L0A / 2 L0B stages,
    #    1 L0C stage, no unit flag, shuffle-K on.
    arch_tag = arch
    if dispatch_policy is None:
        dispatch_policy = MmadAtlasA2PreloadAsyncWithCallback(
            preload_stages=preload_stages, l1_stages=l1_stages, l0a_stages=l0a_stages, l0b_stages=l0b_stages,
            l0c_stages=l0c_stages, enable_unit_flag=False, enable_shuffle_k=enable_shuffle_k, arch=arch_tag,
        )
    # 2. Tile shapes: a block is 128 x 256 of C; L1 holds K = 512 of it, L0 K = 128.
    l1_tile_shape = GemmShape(*l1_tile)
    l0_tile_shape = GemmShape(*l0_tile)
    # 3. Operand types: int8 A [m, k] and B [k, n] row-major, int32 C blocks in the workspace.
    a_type = GemmType("int8", RowMajor)
    b_type = GemmType("int8", RowMajor)
    c_type = GemmType("int32", RowMajor)
    # 4. Tile copies: the default bundle, with A's GM->L1 copy replaced by the GMMPTD loader (fast 1-row
    #    groups); the C++ derives TileCopyGMMPTD from TileCopy and overrides CopyGmToL1A.
    tile_copy = TileCopy(arch_tag, a_type, b_type, c_type).replace(copy_gm_to_l1_a=CopyGmToL1GMMPTD(arch_tag, a_type))
    block_mmad = BlockMmad(dispatch_policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type, tile_copy=tile_copy)

    # 5. Epilogue: per-token dequant with 2 UB stages on 32 x 256 tiles, fp32 compute.
    epilogue_policy = EpilogueAtlasA2PerTokenDequant(ub_stages=ub_stages, arch=arch_tag)
    scale_type = GemmType(out_dtype, VectorLayout)
    per_token_scale_type = GemmType(out_dtype, VectorLayout)
    d_type = GemmType(out_dtype, RowMajor)
    compute_type = GemmType("float32", RowMajor)
    epilogue_tile_shape = (32, 256)
    tile_row_broadcast_mul = TileRowBroadcastMul(arch_tag, compute_type, epilogue_tile_shape)
    tile_broadcast_one_blk = TileBroadcastOneBlk(arch_tag, compute_type, epilogue_tile_shape[0])
    tile_one_blk_column_broadcast_mul = TileOneBlkColumnBroadcastMul(arch_tag, compute_type, epilogue_tile_shape)
    epilogue_tile_copy = EpilogueTileCopy(arch_tag, c_type, scale_type, per_token_scale_type, d_type)
    block_epilogue = BlockEpilogue(
        epilogue_policy, c_type, scale_type, per_token_scale_type, d_type,
        tile_row_broadcast_mul, tile_broadcast_one_blk, tile_one_blk_column_broadcast_mul,
        epilogue_tile_copy, EpilogueHorizontalTileSwizzle,
    )

    # 6. Block scheduler: strips of 3 block-rows, walking down first.
    block_scheduler = GemmIdentityBlockSwizzle(*swizzle)

    # 7. Kernel: 2 workspace stages per AI core, int64 group list.
    return GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace(
        block_mmad, block_epilogue, block_scheduler, workspace_stages=workspace_stages, element_group_list="int64"
    )


__all__ = ["assemble"]
