"""CATLASS example 52 quant_multi_core_splitk_matmul_tla (``examples/52_quant_multi_core_splitk_matmul_tla/
quant_multi_core_splitk_matmul_tla.cpp``): ``QuantMultiCoreSplitkMatmulTla`` with ``BlockMmadTla<MmadPingpong<AtlasA2,
true, false>>`` (int8, A RowMajor, B ColumnMajor, int32 partial sums), ``SplitkGemmIdentityBlockSwizzle<3, 0>``,
``SplitkReduceAdd<AtlasA2, int32, int32, 1, 192 KiB / 4>`` and the per-token-dequant TLA epilogue
(``EpilogueAtlasA2PerTokenDequantTla<2>``, float scales, bfloat16 D, 32 x 256 tiles), assembled step by step like
the C++.

Used by ``examples/52_quant_multi_core_splitk_matmul_tla.py`` and :mod:`catlass_py.ops.quant_multi_core_splitk_matmul_tla`.
"""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import Count, Element, Flag, Layout, MatrixTile, Policy, Swizzle, TileShape
from catlass_py.epilogue import EpilogueAtlasA2PerTokenDequantTla, EpilogueHorizontalTileSwizzle
from catlass_py.epilogue.block import BlockEpiloguePerTokenDequantTla
from catlass_py.gemm import GemmShape, MmadPingpong
from catlass_py.gemm.block import BlockMmadTla
from catlass_py.gemm.block.swizzle_splitk import SplitkGemmIdentityBlockSwizzle
from catlass_py.kernel.quant_multi_core_splitk_matmul_tla import QuantMultiCoreSplitkMatmulTla
from catlass_py.kernel.splitk_matmul import SplitkReduceAdd
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.tile.copy_tla import PackedTileCopyTla, TileCopyDequantTla, tag_name
from catlass_py.tile.vector import TileBroadcastOneBlk, TileOneBlkColumnBroadcastMul, TileRowBroadcastMul


def assemble(arch=ATLAS_A2, *, layout_a: Layout = RowMajor, layout_b: Layout = ColumnMajor,
             element_d: Element = "bfloat16", dispatch_policy: Policy | None = None,
             l1_tile: TileShape = GemmShape(128, 256, 512), l0_tile: TileShape = GemmShape(128, 256, 128),
             ub_stages: Count = 2, epilogue_tile: MatrixTile = (32, 256), swizzle: Swizzle = (3, 0),
             enable_unit_flag: Flag = True):
    """Build the kernel like the C++ example. The keywords swap template parameters: the layout tags of A and B
    (a name or a layout class), D's element (bfloat16, float16 or float32), the dispatch policy (default
    ``MmadPingpong`` with ``enable_unit_flag``), the ``L1TileShape`` / ``L0TileShape``, the epilogue's UB stages
    and tile shape and the split-K swizzle (offset, direction)."""
    layout_a, layout_b = tag_name(layout_a), tag_name(layout_b)
    # 1. Element types: int8 A and B, int32 C (the partial and reduced sums), float scales, bfloat16 D.
    element_a = element_b = "int8"
    element_c = "int32"
    element_scale = element_per_token_scale = "float32"
    # 2. Dispatch policy: MmadPingpong<ArchTag, enableUnitFlag = true, useHF32 = false>; L1 128 x 256 x 512,
    #    L0 128 x 256 x 128.
    if dispatch_policy is None:
        dispatch_policy = MmadPingpong(enable_unit_flag=enable_unit_flag, use_hf32_mode=False, arch=arch)
    tile_copy = PackedTileCopyTla(arch, element_a, layout_a, element_b, layout_b, element_c, "RowMajor")
    block_mmad = BlockMmadTla(dispatch_policy, GemmShape(*l1_tile), GemmShape(*l0_tile), element_a,
                              element_b, element_c, None, tile_copy)
    # 3. Epilogue: EpilogueAtlasA2PerTokenDequantTla<ubStages>, fp32 compute on 32 x 256 tiles.
    policy = EpilogueAtlasA2PerTokenDequantTla(ub_stages=ub_stages, arch=arch)
    epilogue = BlockEpiloguePerTokenDequantTla(
        policy, element_c, element_scale, element_per_token_scale, element_d,
        TileRowBroadcastMul(arch, "float32", epilogue_tile), TileBroadcastOneBlk(arch, "float32", epilogue_tile[0]),
        TileOneBlkColumnBroadcastMul(arch, "float32", epilogue_tile),
        TileCopyDequantTla(arch, element_c, element_scale, element_per_token_scale, element_d),
        EpilogueHorizontalTileSwizzle)
    # 4. The reduction: SplitkReduceAdd<ArchTag, int32, int32, 1, 192 * 1024 / sizeof(int32)>.
    reduce_add = SplitkReduceAdd(arch, element_c, element_c, 1, 192 * 1024 // 4)
    # 5. Scheduler and kernel.
    return QuantMultiCoreSplitkMatmulTla(block_mmad, epilogue, SplitkGemmIdentityBlockSwizzle(*swizzle), reduce_add)


__all__ = ["assemble"]
