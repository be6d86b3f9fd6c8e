"""CATLASS example 45 strided_batched_matmul_tla (``examples/45_strided_batched_matmul_tla/
strided_batched_matmul_tla.cpp``): ``StridedBatchedMatmulTla`` with ``BlockMmadTla<MmadPingpongTlaV2<AtlasA2,
true>>`` and ``PackedTileCopyTla``, swizzle ``<3,0>`` when m > n and ``<3,1>`` otherwise, assembled step by step
like the C++.

Used by ``examples/45_strided_batched_matmul_tla.py`` and :mod:`catlass_py.ops.strided_batched_matmul_tla`.
"""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import Element, Flag, Layout, Policy, Swizzle, TileShape
from catlass_py.gemm import GemmShape, MmadPingpongTlaV2
from catlass_py.gemm.block import BlockMmadTla, GemmIdentityBlockSwizzle
from catlass_py.kernel.strided_batched_matmul_tla import StridedBatchedMatmulTla
from catlass_py.layout import RowMajor
from catlass_py.tile.copy_tla import PackedTileCopyTla, tag_name


def swizzle_for(m: int, n: int) -> tuple[int, int]:
    """The example's runtime choice: ``GemmIdentityBlockSwizzle<3, 0>`` when m > n, else ``<3, 1>``."""
    return (3, 0) if m > n else (3, 1)


def assemble(arch=ATLAS_A2, *, element: Element = "float16", layout_a: Layout = RowMajor,
             layout_b: Layout = RowMajor, out_element: Element | None = None, dispatch_policy: Policy | None = None,
             swizzle: Swizzle = (3, 0), l1_tile: TileShape = GemmShape(128, 256, 256),
             l0_tile: TileShape = GemmShape(128, 256, 64), enable_unit_flag: Flag | None = None):
    """Build the kernel like the C++ example (``RunWithLayouts<LayoutTagA, LayoutTagB>``). The keywords swap
    template parameters: the input ``element`` (float16, bfloat16, int8), the layout tags of A and B (RowMajor /
    ColumnMajor; C is RowMajor), the element of C (default: the input's, int32 for int8), the dispatch policy and
    the swizzle (offset, direction), the ``L1TileShape`` / ``L0TileShape`` and the policy's ``enable_unit_flag``
    (default on except for int8)."""
    layout_a, layout_b = tag_name(layout_a), tag_name(layout_b)
    # 1. Dispatch policy: MmadPingpongTlaV2<ArchTag, true> (kept off for int8 as the 1.x
    #    policies require; the TLA block itself allows it).
    if dispatch_policy is None:
        if enable_unit_flag is None:
            enable_unit_flag = element != "int8"
        dispatch_policy = MmadPingpongTlaV2(enable_unit_flag=enable_unit_flag, arch=arch)
    # 2. Tile shapes: Shape<_128, _256, _256> in L1, Shape<_128, _256, _64> in L0.
    l1_tile_shape = GemmShape(*l1_tile)
    l0_tile_shape = GemmShape(*l0_tile)
    # 3. The TLA tile copies for the operands' layout tags; C row-major.
    if out_element is None:
        out_element = "int32" if element == "int8" else element
    tile_copy = PackedTileCopyTla(arch, element, layout_a, element, layout_b, out_element, "RowMajor")
    # 4. BlockMmadTla; no epilogue.
    block_mmad = BlockMmadTla(dispatch_policy, l1_tile_shape, l0_tile_shape, element, element, out_element, None,
                              tile_copy)
    # 5. Block scheduler, 6. kernel.
    return StridedBatchedMatmulTla(block_mmad, None, GemmIdentityBlockSwizzle(*swizzle))


__all__ = ["assemble", "swizzle_for"]
