"""CATLASS example 03 matmul_add (``examples/03_matmul_add/matmul_add.cpp``): ``MatmulEpilogue`` with
``MmadAtlasA2Pingpong`` and the ``EpilogueAtlasA2ElemWiseOneSource`` add on the vector cores, assembled step by step
like the C++.

Used by ``examples/03_matmul_add.py`` and :mod:`catlass_py.ops.matmul_add`.
"""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import Count, Element, Flag, Layout, TileShape
from catlass_py.epilogue import BlockEpilogue, EpilogueAtlasA2ElemWiseOneSource
from catlass_py.gemm import GemmShape, GemmType, MmadAtlasA2Pingpong
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel.matmul_epilogue import MatmulEpilogue
from catlass_py.layout import RowMajor
from catlass_py.tile import EpilogueTileCopy
from catlass_py.tile.vector_elementwise import TileElemWiseAdd


def assemble(arch=ATLAS_A2, *, swizzle_direction: Count = 0, element: Element = "float16",
             layout_a: Layout = RowMajor, layout_b: Layout = RowMajor, compute_length: Count = 16384,
             l1_tile: TileShape = GemmShape(128, 256, 256), l0_tile: TileShape = GemmShape(128, 256, 64),
             swizzle_offset: Count = 3, enable_unit_flag: Flag = True):
    """Build the kernel like the C++ example. ``swizzle_direction`` is 0 when m > n, else 1 (the C++ picks
    one of two instantiations at runtime); ``element`` ('float16' or 'bfloat16') is the type of A, B, C,
    X and D; ``layout_a``/``layout_b`` swap operand layouts; ``compute_length`` is the epilogue's UB length;
    the tile shapes, the swizzle offset and the ping-pong policy's unit flag are the C++'s template constants."""
    # 1. Block-level MMAD: ping-pong with the unit flag, L1 128x256x256, L0 128x256x64.
    dispatch_policy = MmadAtlasA2Pingpong(enable_unit_flag=enable_unit_flag, arch=arch)
    l1_tile_shape = GemmShape(*l1_tile)
    l0_tile_shape = GemmShape(*l0_tile)
    a_type = GemmType(element, layout_a)
    b_type = GemmType(element, layout_b)
    c_type = GemmType(element, RowMajor)  # the fixpipe converts the fp32 accumulator to C's type
    block_mmad = BlockMmad(dispatch_policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type)

    # 2. Epilogue: D = C + X with one UB stage of 16384 elements (half a 128x256 block per vector core).
    epilogue_policy = EpilogueAtlasA2ElemWiseOneSource(arch=arch)
    x_type = c_type
    d_type = c_type
    compute_type = c_type
    tile_elem_wise_epilogue = TileElemWiseAdd(arch, compute_type, compute_length)
    epilogue_tile_copy = EpilogueTileCopy(arch, c_type, x_type, None, d_type)
    block_epilogue = BlockEpilogue(epilogue_policy, c_type, x_type, d_type, tile_elem_wise_epilogue, epilogue_tile_copy)

    # 3. Block scheduler: strips of 3 blocks, walking down (m > n) or right (m <= n) first.
    block_scheduler = GemmIdentityBlockSwizzle(swizzle_offset, swizzle_direction)

    # 4. Kernel.
    return MatmulEpilogue(block_mmad, block_epilogue, block_scheduler)


__all__ = ["assemble"]
