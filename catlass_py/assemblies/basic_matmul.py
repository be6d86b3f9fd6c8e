"""CATLASS example 00 basic_matmul (``examples/00_basic_matmul/basic_matmul.cpp``): ``BasicMatmul`` with
``MmadAtlasA2Pingpong`` and swizzle ``<3,0>``, assembled step by step like the C++.

Used by ``examples/00_basic_matmul.py`` and :mod:`catlass_py.ops.basic_matmul`.
"""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import Element, Flag, Layout, Policy, Swizzle, TileShape
from catlass_py.gemm import GemmShape, GemmType, MmadAtlasA2Pingpong
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel import BasicMatmul
from catlass_py.layout import RowMajor


def assemble(arch=ATLAS_A2, *, element: Element = "float16", layout_a: Layout = RowMajor,
             layout_b: Layout = RowMajor, out_element: Element | None = None, dispatch_policy: Policy | None = None,
             swizzle: Swizzle = (3, 0), l1_tile: TileShape = GemmShape(128, 256, 256),
             l0_tile: TileShape = GemmShape(128, 256, 64), enable_unit_flag: Flag | None = None):
    """Build the kernel like the C++ example. The keywords swap template parameters: the input ``element``
    (float16, bfloat16, int8), the operand layouts (RowMajor / ColumnMajor), the element of C (default: the
    input's, int32 for int8), the BlockMmad ``dispatch_policy`` (default ``MmadAtlasA2Pingpong`` with
    ``enable_unit_flag``, which defaults to on except for int8), the swizzle (offset, direction) and the
    ``L1TileShape`` / ``L0TileShape``."""
    # 1. Block-level dispatch policy: 2-stage ping-pong; the unit flag on (CATLASS forbids it for int8).
    if dispatch_policy is None:
        unit_flag = element != "int8" if enable_unit_flag is None else enable_unit_flag
        dispatch_policy = MmadAtlasA2Pingpong(enable_unit_flag=unit_flag, arch=arch)
    # 2. Tile shapes: 128 x 256 blocks of C; L1 holds K = 256 of a block, L0 K = 64.
    l1_tile_shape = GemmShape(*l1_tile)
    l0_tile_shape = GemmShape(*l0_tile)
    # 3. Operand types: A [m, k], B [k, n] in the chosen layouts; C [m, n] row-major.
    if out_element is None:
        out_element = "int32" if element == "int8" else element
    a_type = GemmType(element, layout_a)
    b_type = GemmType(element, layout_b)
    c_type = GemmType(out_element, RowMajor)
    # 4. BlockMmad (default TileCopy / TileMmad for these types); no epilogue.
    block_mmad = BlockMmad(dispatch_policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type)
    block_epilogue = None
    # 5. Block scheduler: strips of 3 block-rows, walking down first.
    block_scheduler = GemmIdentityBlockSwizzle(*swizzle)
    # 6. Kernel.
    return BasicMatmul(block_mmad, block_epilogue, block_scheduler)


__all__ = ["assemble"]
