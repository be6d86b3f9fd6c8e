"""CATLASS example 14 optimized_matmul_tla (``examples/14_optimized_matmul_tla/optimized_matmul_tla.cpp``):
``OptimizedMatmulTla`` with ``BlockMmadTla<MmadAtlasA2Preload<true, true>>`` and ``PaddingPackedTileCopyTla``;
an operand whose leading dimension is not a multiple of 256 elements (or is >= 65536) is first copied into a
padded workspace (``PaddingMatrixBlockND``, one L1 tile per block); swizzle ``<3,0>`` when m > n, else
``<3,1>``; L1 ``256 x 128 x 256`` when A and B are both column-major, else ``128 x 256 x 256`` (L0 K 64).
Assembled step by step like the C++.

Used by ``examples/14_optimized_matmul_tla.py`` and :mod:`catlass_py.ops.optimized_matmul_tla`.
"""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import Element, Flag, Layout, Policy, Swizzle, TileShape
from catlass_py.gemm import GemmShape, MmadAtlasA2Preload
from catlass_py.gemm.block import BlockMmadTla, GemmIdentityBlockSwizzle
from catlass_py.kernel.optimized_matmul_tla import OptimizedMatmulTla, PaddingMatrixBlockNDTla
from catlass_py.kernel.padding_block_nd import is_need_padding
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.tile.copy_tla import PaddingPackedTileCopyTla, tag_name

ALIGN = 256  # elements: the example's ``align`` for IsNeedPadding


def tiles_for(layout_a: str, layout_b: str) -> tuple[tuple, tuple]:
    """(L1TileShape, L0TileShape): ``256 x 128 x 256`` / ``256 x 128 x 64`` when A and B are both ColumnMajor,
    else ``128 x 256 x 256`` / ``128 x 256 x 64``."""
    if layout_a == "ColumnMajor" and layout_b == "ColumnMajor":
        return (256, 128, 256), (256, 128, 64)
    return (128, 256, 256), (128, 256, 64)


def padding_for(m: int, n: int, k: int, layout_a: str = "RowMajor", layout_b: str = "ColumnMajor",
                element="float16") -> tuple[bool, bool]:
    """The example's ``IsNeedPadding(tagA, 256)``, ``IsNeedPadding(tagB, 256)``: the leading dimension is not a
    multiple of 256 elements, or is >= 65536."""
    del element  # the example's align counts elements whatever their type
    cls = {"RowMajor": RowMajor, "ColumnMajor": ColumnMajor}
    return (is_need_padding(cls[layout_a](m, k), ALIGN), is_need_padding(cls[layout_b](k, n), ALIGN))


def swizzle_for(m: int, n: int) -> tuple[int, int]:
    """``GemmIdentityBlockSwizzle<3, 0>`` when m > n, else ``<3, 1>``."""
    return (3, 0) if m > n else (3, 1)


def assemble(arch=ATLAS_A2, *, element: Element = "float16", layout_a: Layout = RowMajor,
             layout_b: Layout = ColumnMajor, padding_a: Flag = False, padding_b: Flag = False,
             swizzle: Swizzle = (3, 0), dispatch_policy: Policy | None = None, l1_tile: TileShape | None = None,
             l0_tile: TileShape | None = None, enable_unit_flag: Flag = True, enable_shuffle_k: Flag = True):
    """Build the kernel like the C++ example for one of its four padding cases. The keywords swap template
    parameters: the element (float16, bfloat16), the layout tags of A and B (a name or a layout class), whether
    each operand is padded, the swizzle, the dispatch policy (default ``MmadAtlasA2Preload`` with
    ``enable_unit_flag`` and ``enable_shuffle_k``) and the ``L1TileShape`` / ``L0TileShape`` (default: the
    example's choice by the layouts, :func:`tiles_for`)."""
    layout_a, layout_b = tag_name(layout_a), tag_name(layout_b)
    # 1. Dispatch policy: MmadAtlasA2Preload<enableUnitFlag = true, enableShuffleK = true>.
    if dispatch_policy is None:
        dispatch_policy = MmadAtlasA2Preload(enable_unit_flag=enable_unit_flag, enable_shuffle_k=enable_shuffle_k,
                                             arch=arch)
    # 2. Tile shapes by the operand layouts.
    default_l1, default_l0 = tiles_for(layout_a, layout_b)
    l1_tile = default_l1 if l1_tile is None else l1_tile
    l0_tile = default_l0 if l0_tile is None else l0_tile
    # 3. The tile copies: ND2NZ of actual shapes, from the padded workspaces where padded.
    tile_copy = PaddingPackedTileCopyTla(arch, element, layout_a, element, layout_b, element, "RowMajor",
                                         is_padding_a=padding_a, is_padding_b=padding_b)
    block_mmad = BlockMmadTla(dispatch_policy, GemmShape(*l1_tile), GemmShape(*l0_tile), element, element, element,
                              None, tile_copy)
    # 4. The padding prologues: PaddingMatrixBlockND<ArchTag, Tensor, TensorW, 96 KiB / sizeof(Element)>.
    compute_length = 96 * 1024 // get_dtype(element).nbytes(1)
    pad_a = PaddingMatrixBlockNDTla(arch, element, layout_a, compute_length) if padding_a else None
    pad_b = PaddingMatrixBlockNDTla(arch, element, layout_b, compute_length) if padding_b else None
    # 5. Scheduler and kernel (BlockEpilogue = void).
    return OptimizedMatmulTla(block_mmad, None, GemmIdentityBlockSwizzle(*swizzle), pad_a, pad_b)


__all__ = ["ALIGN", "assemble", "padding_for", "swizzle_for", "tiles_for"]
