"""CATLASS example 09 splitk_matmul (``examples/09_splitk_matmul/splitk_matmul.cpp``): ``SplitkMatmul`` with
``MmadAtlasA2Pingpong``, ``SplitkGemmIdentityBlockSwizzle`` and ``SplitkReduceAdd``, assembled step by step like the
C++.

Used by ``examples/09_splitk_matmul.py`` and :mod:`catlass_py.ops.splitk_matmul`.
"""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import Count, Element, Flag, Layout, Swizzle, TileShape
from catlass_py.gemm import GemmShape, GemmType, MmadAtlasA2Pingpong
from catlass_py.gemm.block import BlockMmad
from catlass_py.gemm.block.swizzle_splitk import SplitkGemmIdentityBlockSwizzle
from catlass_py.kernel.splitk_matmul import SplitkMatmul, SplitkReduceAdd
from catlass_py.layout import ColumnMajor, RowMajor


def assemble(arch=ATLAS_A2, *, element: Element = "float16", out_dtype: Element = "float16",
             layout_a: Layout = RowMajor, layout_b: Layout = ColumnMajor, reduce_stages: Count = 1,
             compute_length: Count | None = None, l1_tile: TileShape = GemmShape(128, 256, 256),
             l0_tile: TileShape = GemmShape(128, 256, 64), swizzle: Swizzle = (3, 0), enable_unit_flag: Flag = True):
    """Build the kernel like the C++ example (A RowMajor, B ColumnMajor, fp16 in and out, fp32 workspace).
    ``compute_length`` defaults to the whole UB (192 KiB / sizeof(float)); the tile shapes, the split-K
    swizzle and the ping-pong policy's unit flag are the C++'s template constants."""
    # 1. Block-level MMAD: ping-pong with the unit flag, L1 128x256x256, L0 128x256x64, fp32 C slices.
    dispatch_policy = MmadAtlasA2Pingpong(enable_unit_flag=enable_unit_flag, arch=arch)
    l1_tile_shape = GemmShape(*l1_tile)
    l0_tile_shape = GemmShape(*l0_tile)
    a_type = GemmType(element, layout_a)
    b_type = GemmType(element, layout_b)
    c_type = GemmType("float32", RowMajor)
    block_mmad = BlockMmad(dispatch_policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type)
    block_epilogue = None  # void: the reduction runs after the matmul

    # 2. ReduceAdd: 1 stage over the whole UB, fp32 -> fp16.
    if compute_length is None:
        compute_length = arch.ub_size // 4
    reduce_add = SplitkReduceAdd(arch, "float32", out_dtype, reduce_stages, compute_length)

    # 3. Scheduler (strips of 3 block-rows, walking down) and kernel.
    block_scheduler = SplitkGemmIdentityBlockSwizzle(*swizzle)
    return SplitkMatmul(block_mmad, block_epilogue, block_scheduler, reduce_add)


__all__ = ["assemble"]
