"""CATLASS example 34 single_core_splitk_matmul (``examples/34_single_core_splitk_matmul/single_core_splitk.cpp``):
``SingleCoreSplitkMatmul`` with ``MmadAtlasA2SingleCoreSplitk``, ``PaddingMatrixNZ`` prologues and the
``RemovePaddingNDAndCast`` epilogue, assembled step by step like the C++.

Used by ``examples/34_single_core_splitk_matmul.py`` and :mod:`catlass_py.ops.single_core_splitk_matmul`.
"""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import Count, Element, Flag, Layout, Swizzle, TileShape
from catlass_py.gemm import GemmShape, GemmType, MmadAtlasA2SingleCoreSplitk
from catlass_py.gemm.block import BlockMmad, SingleCoreSplitkGemmIdentityBlockSwizzle
from catlass_py.gemm.helper import element_accumulator
from catlass_py.kernel.padding import PaddingBuilder
from catlass_py.kernel.padding_nz import RemovePaddingNDAndCast
from catlass_py.kernel.padding_tag import PaddingTag
from catlass_py.kernel.single_core_slicek_matmul import SingleCoreSplitkMatmul
from catlass_py.layout import ColumnMajor, RowMajor, nZ, zN
from catlass_py.tile import TileCopy


def assemble(arch=ATLAS_A2, *, m_gt_n: Flag = True, element: Element = "float16", out_dtype: Element = "float16",
             layout_a: Layout = RowMajor, layout_b: Layout = ColumnMajor, l1_tile: TileShape | None = None,
             l0_tile: TileShape = GemmShape(128, 128, 128), swizzle: Swizzle | None = None,
             l1a_stages: Count | None = None, l1b_stages: Count | None = None, l0c_stages: Count = 2):
    """Build the kernel like the C++ example. ``m_gt_n`` selects the C++'s runtime branch: L1 128x256x512
    with 2 A / 1 B L1 stages and ``SingleCoreSplitkGemmIdentityBlockSwizzle<20, 0>`` when m > n, else
    L1 256x128x512, 1 A / 2 B stages and ``<20, 1>``; L0 128x128x128 and 2 L0C stages either way. ``l1_tile``,
    ``swizzle``, ``l1a_stages`` and ``l1b_stages`` override the branch's choice (None keeps it)."""
    # 1. Padding: RowMajor/ColumnMajor operands are repacked to zN/nZ (PADDING_NZ); zN/nZ ones need none.
    tag_a = PaddingTag.NO_PADDING if layout_a in (zN, nZ) else PaddingTag.PADDING_NZ
    tag_b = PaddingTag.NO_PADDING if layout_b in (zN, nZ) else PaddingTag.PADDING_NZ
    builder_a = PaddingBuilder(tag_a, arch, element, layout_a)
    builder_b = PaddingBuilder(tag_b, arch, element, layout_b)
    acc = element_accumulator(element, element, arch)
    # C: cast the fp32 accumulator workspace to the output type (NO_PADDING) unless it already is fp32.
    remove_padding = None if acc.name == out_dtype else RemovePaddingNDAndCast(
        PaddingTag.NO_PADDING, arch, acc, out_dtype, RowMajor)

    # 2. Operand types after padding; C holds the accumulator type (atomic adds).
    a_type = GemmType(element, builder_a.layout_after_padding)
    b_type = GemmType(element, builder_b.layout_after_padding)
    c_type = GemmType(acc, RowMajor)
    # TileCopyDynamicOptimized: its GM->L1 copies of zN/nZ operands are the plain CopyGmToL1.
    tile_copy = TileCopy(arch, a_type, b_type, c_type)

    # 3. Block-level MMAD and scheduler (the C++'s two branches).
    if m_gt_n:
        branch = ((128, 256, 512), (20, 0), 2, 1)
    else:
        branch = ((256, 128, 512), (20, 1), 1, 2)
    l1_default, swizzle_default, l1a_default, l1b_default = branch
    policy = MmadAtlasA2SingleCoreSplitk(
        l1a_stages=l1a_default if l1a_stages is None else l1a_stages,
        l1b_stages=l1b_default if l1b_stages is None else l1b_stages, l0c_stages=l0c_stages,
        enable_unit_flag=False, arch=arch)
    l1_tile_shape = GemmShape(*(l1_default if l1_tile is None else l1_tile))
    scheduler = SingleCoreSplitkGemmIdentityBlockSwizzle(*(swizzle_default if swizzle is None else swizzle))
    l0_tile_shape = GemmShape(*l0_tile)
    block_mmad = BlockMmad(policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type, tile_copy=tile_copy)

    # 4. Kernel (BlockEpilogue void).
    return SingleCoreSplitkMatmul(builder_a.padding, builder_b.padding, block_mmad, None, scheduler, remove_padding)


__all__ = ["assemble"]
