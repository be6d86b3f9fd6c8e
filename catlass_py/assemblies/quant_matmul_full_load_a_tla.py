"""CATLASS example 44 quant_matmul_full_loadA_tla (``examples/44_quant_matmul_full_loadA_tla/
quant_matmul_full_loadA_tla.cpp``): ``QuantMatmulFullLoadATla`` with ``BlockMmadTla<MmadFullLoadA<AtlasA2, false,
true, false, 1, false, 1, 2, 2, 2>>`` (int8, A and B RowMajor, L1 128 x 256 x 512, L0 128 x 256 x 128), the
per-token-dequant TLA epilogue (float scales, bfloat16 D, 32 x 256 tiles, 2 UB stages) and 2 workspace stages;
scheduler ``GemmIdentityBlockSwizzleL1FullLoad<1, 0>`` when m > L1.M, else ``GemmIdentityBlockSwizzle<3, 0>``.
Assembled step by step like the C++.

Used by ``examples/44_quant_matmul_full_loadA_tla.py`` and :mod:`catlass_py.ops.quant_matmul_full_load_a_tla`.
"""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import Count, Element, Flag, Layout, MatrixTile, Policy, Scheduler, TileShape
from catlass_py.epilogue import EpilogueAtlasA2PerTokenDequantTla, EpilogueHorizontalTileSwizzle
from catlass_py.epilogue.block import BlockEpiloguePerTokenDequantTla
from catlass_py.gemm import GemmShape, MmadFullLoadA
from catlass_py.gemm.block import BlockMmadTla, GemmIdentityBlockSwizzle, GemmIdentityBlockSwizzleL1FullLoad
from catlass_py.kernel.quant_matmul_full_load_a_tla import QuantMatmulFullLoadATla
from catlass_py.layout import RowMajor
from catlass_py.tile.copy_tla import PackedTileCopyTla, TileCopyDequantTla, tag_name
from catlass_py.tile.vector import TileBroadcastOneBlk, TileOneBlkColumnBroadcastMul, TileRowBroadcastMul

L1_TILE = (128, 256, 512)
L0_TILE = (128, 256, 128)


def scheduler_for(m: int, l1_m: int = L1_TILE[0]):
    """The example's runtime choice: ``GemmIdentityBlockSwizzleL1FullLoad<1, 0>`` when m > L1.M (several blocks
    per row of A), else ``GemmIdentityBlockSwizzle<3, 0>``."""
    return GemmIdentityBlockSwizzleL1FullLoad(1, 0) if m > l1_m else GemmIdentityBlockSwizzle(3, 0)


def assemble(arch=ATLAS_A2, *, layout_a: Layout = RowMajor, layout_b: Layout = RowMajor,
             element_d: Element = "bfloat16", dispatch_policy: Policy | None = None,
             block_scheduler: Scheduler | None = None, workspace_stages: Count = 2, ub_stages: Count = 2,
             epilogue_tile: MatrixTile = (32, 256), l1_tile: TileShape = GemmShape(*L1_TILE),
             l0_tile: TileShape = GemmShape(*L0_TILE), enable_shuffle_k: Flag = True, l1b_stages: Count = 2,
             l0a_stages: Count = 2, l0b_stages: Count = 2):
    """Build the kernel like the C++ example. The keywords swap template parameters: the layout tags of A and B
    (a name or a layout class), D's element, the dispatch policy (default ``MmadFullLoadA`` with
    ``enable_shuffle_k`` and the L1B/L0A/L0B stages), the scheduler (default: the L1-full-load one), the
    workspace and UB stages, the epilogue tile and the ``L1TileShape`` / ``L0TileShape``."""
    layout_a, layout_b = tag_name(layout_a), tag_name(layout_b)
    # 1. Dispatch policy: MmadFullLoadA<ArchTag, enableUnitFlag = false, enableShuffleK = true, useHF32 = false,
    #    l0CStages = 1, enableL1Resident = false, l1AStages = 1, l1BStages = 2, l0AStages = 2, l0BStages = 2>.
    if dispatch_policy is None:
        dispatch_policy = MmadFullLoadA(enable_unit_flag=False, enable_shuffle_k=enable_shuffle_k,
                                        use_hf32_mode=False, l0c_stages=1, enable_l1_resident=False, l1a_stages=1,
                                        l1b_stages=l1b_stages, l0a_stages=l0a_stages, l0b_stages=l0b_stages,
                                        arch=arch)
    # 2. BlockMmadTla: int8 A and B, int32 C, no bias.
    tile_copy = PackedTileCopyTla(arch, "int8", layout_a, "int8", layout_b, "int32", "RowMajor")
    block_mmad = BlockMmadTla(dispatch_policy, GemmShape(*l1_tile), GemmShape(*l0_tile), "int8", "int8", "int32",
                              None, tile_copy)
    # 3. Epilogue: EpilogueAtlasA2PerTokenDequantTla<2>, fp32 compute on 32 x 256 tiles, horizontal tile order.
    epilogue = BlockEpiloguePerTokenDequantTla(
        EpilogueAtlasA2PerTokenDequantTla(ub_stages=ub_stages, arch=arch), "int32", "float32", "float32", element_d,
        TileRowBroadcastMul(arch, "float32", epilogue_tile), TileBroadcastOneBlk(arch, "float32", epilogue_tile[0]),
        TileOneBlkColumnBroadcastMul(arch, "float32", epilogue_tile),
        TileCopyDequantTla(arch, "int32", "float32", "float32", element_d), EpilogueHorizontalTileSwizzle)
    # 4. Scheduler and kernel (WORKSPACE_STAGES = 2).
    if block_scheduler is None:
        block_scheduler = GemmIdentityBlockSwizzleL1FullLoad(1, 0)
    return QuantMatmulFullLoadATla(block_mmad, epilogue, block_scheduler, workspace_stages)


__all__ = ["L0_TILE", "L1_TILE", "assemble", "scheduler_for"]
