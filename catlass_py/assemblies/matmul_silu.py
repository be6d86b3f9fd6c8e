"""CATLASS example 28 matmul_silu (``examples/28_matmul_silu/matmul_silu.cpp``): example 27's assembly
(:mod:`catlass_py.assemblies.matmul_gelu`) with ``TileElemWiseSilu`` as the epilogue's tile op, as in the C++.

Used by ``examples/28_matmul_silu.py`` and :mod:`catlass_py.ops.matmul_activation`.
"""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies import matmul_gelu
from catlass_py.assemblies.settings import Count, Element, Flag, Layout, TileShape
from catlass_py.gemm import GemmShape
from catlass_py.layout import RowMajor
from catlass_py.tile.vector_elementwise import TileElemWiseSilu


def assemble(arch=ATLAS_A2, *, swizzle_direction: Count = 0, element: Element = "float16",
             out_dtype: Element = "float16", layout_a: Layout = RowMajor, layout_b: Layout = RowMajor,
             compute_length: Count = 16384, l1_tile: TileShape = GemmShape(128, 256, 256),
             l0_tile: TileShape = GemmShape(128, 256, 64), swizzle_offset: Count = 3, enable_unit_flag: Flag = True):
    """Example 27's kernel (MatmulActivation; Pingpong<unit flag> 128x256x256 / 128x256x64 with fp32 C;
    ElemWiseNoSource epilogue; GemmIdentityBlockSwizzle<3, direction>) with ``TileElemWiseSilu``. Keywords as
    :func:`catlass_py.assemblies.matmul_gelu.assemble`."""
    return matmul_gelu.assemble(arch, swizzle_direction=swizzle_direction, element=element, out_dtype=out_dtype,
                                layout_a=layout_a, layout_b=layout_b, compute_length=compute_length,
                                activation=TileElemWiseSilu, l1_tile=l1_tile, l0_tile=l0_tile,
                                swizzle_offset=swizzle_offset, enable_unit_flag=enable_unit_flag)


__all__ = ["assemble"]
