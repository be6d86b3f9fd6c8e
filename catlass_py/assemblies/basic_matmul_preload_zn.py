"""CATLASS example 21 basic_matmul_preload_zN (``examples/21_basic_matmul_preload_zN/basic_matmul_preload_zN.cpp``):
``BasicMatmulPreload`` with ``MmadAtlasA2Preload<true, true>``, A row-major, B in the zN ("NZ") format and swizzle
``<3,0>``, assembled step by step like the C++.

Used by ``examples/21_basic_matmul_preload_zN.py`` and :mod:`catlass_py.ops.basic_matmul_preload_zn`.
"""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import Element, Layout, Swizzle, TileShape
from catlass_py.gemm import GemmShape, GemmType, MmadAtlasA2Preload
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel import BasicMatmulPreload
from catlass_py.layout import RowMajor, zN


def assemble(arch=ATLAS_A2, *, layout_b: Layout = zN, element: Element = "float16", swizzle: Swizzle = (3, 0),
             l1_tile: TileShape = (128, 256, 256), l0_tile: TileShape = (128, 256, 64)):
    """Build the kernel like the C++ example. ``layout_b``: zN (the example; the C++ comment: "B not transposed
    uses zN, transposed nZ"), nZ, or RowMajor / ColumnMajor (CATLASS's optimisation guide times the example
    with a row-major B, ``docs/zh/1_Practice/11_matmul_optimization.md``); ``element`` float16 or bfloat16;
    ``swizzle`` (offset, direction); ``l1_tile`` / ``l0_tile`` the ``L1TileShape`` / ``L0TileShape`` (m, n, k)."""
    # 1. Block-level dispatch policy: preload with the unit flag and shuffle-K.
    dispatch_policy = MmadAtlasA2Preload(enable_unit_flag=True, enable_shuffle_k=True, arch=arch)
    # 2. Tile shapes: 128 x 256 blocks of C; L1 holds K = 256 of a block, L0 K = 64.
    l1_tile_shape = GemmShape(*l1_tile)
    l0_tile_shape = GemmShape(*l0_tile)
    # 3. Operand types: A [m, k] row-major, B [k, n] zN, C [m, n] row-major, all of the input element.
    a_type = GemmType(element, RowMajor)
    b_type = GemmType(element, layout_b)
    c_type = GemmType(element, RowMajor)
    # 4. BlockMmad (default TileCopy / TileMmad); no epilogue.
    block_mmad = BlockMmad(dispatch_policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type)
    # 5. Block scheduler: strips of 3 block-rows, walking down first.
    block_scheduler = GemmIdentityBlockSwizzle(*swizzle)
    # 6. Kernel.
    return BasicMatmulPreload(block_mmad, None, block_scheduler)


__all__ = ["assemble"]
