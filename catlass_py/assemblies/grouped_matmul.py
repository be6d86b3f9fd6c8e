"""CATLASS example 08 grouped_matmul (``examples/08_grouped_matmul/grouped_matmul.cpp``): ``GroupedMatmul`` with
``MmadAtlasA2PreloadAsync``, assembled step by step like the C++.

Used by ``examples/08_grouped_matmul.py`` and :mod:`catlass_py.ops.grouped_matmul`.
"""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import Count, Element, Flag, Layout, Policy, Swizzle, TileShape
from catlass_py.gemm import GemmShape, GemmType, MmadAtlasA2PreloadAsync
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel import GroupedMatmul
from catlass_py.layout import ColumnMajor, RowMajor


def assemble(arch=ATLAS_A2, *, element: Element = "float16", layout_a: Layout = ColumnMajor,
             layout_b: Layout = RowMajor, out_element: Element | None = None, dispatch_policy: Policy | None = None,
             swizzle: Swizzle = (3, 1), l1_tile: TileShape = GemmShape(128, 256, 256),
             l0_tile: TileShape = GemmShape(128, 256, 64), preload_stages: Count = 1, l1_stages: Count = 2,
             l0a_stages: Count = 4, l0b_stages: Count = 2, l0c_stages: Count = 1, enable_unit_flag: Flag | None = None,
             enable_shuffle_k: Flag = True):
    """Build the kernel like the C++ example; keywords swap the element (unit flag off for int8), the operand
    layouts, C's element, the swizzle, the tile shapes and the template constants of the default dispatch
    policy (stages, flags); ``dispatch_policy`` replaces that policy as a whole."""
    # 1. Dispatch policy: preload 1, 2 L1 stages, 4 L0A / 2 L0B stages, 1 L0C stage, unit flag, shuffle-K.
    if dispatch_policy is None:
        dispatch_policy = MmadAtlasA2PreloadAsync(
            preload_stages=preload_stages, l1_stages=l1_stages, l0a_stages=l0a_stages, l0b_stages=l0b_stages,
            l0c_stages=l0c_stages, enable_unit_flag=element != "int8" if enable_unit_flag is None else enable_unit_flag,
            enable_shuffle_k=enable_shuffle_k, arch=arch)
    # 2. Tile shapes.
    l1_tile_shape = GemmShape(*l1_tile)
    l0_tile_shape = GemmShape(*l0_tile)
    # 3. Operand types: A column-major, B row-major, C row-major.
    if out_element is None:
        out_element = "int32" if element == "int8" else element
    a_type = GemmType(element, layout_a)
    b_type = GemmType(element, layout_b)
    c_type = GemmType(out_element, RowMajor)
    block_mmad = BlockMmad(dispatch_policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type)
    # 4. Scheduler (right first) and kernel.
    return GroupedMatmul(block_mmad, None, GemmIdentityBlockSwizzle(*swizzle))


__all__ = ["assemble"]
