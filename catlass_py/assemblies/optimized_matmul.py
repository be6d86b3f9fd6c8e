"""CATLASS example 06 optimized_matmul (``examples/06_optimized_matmul/optimized_matmul.cpp``): ``OptimizedMatmul``
with ``MmadAtlasA2Preload<true, true>`` and, when :func:`padding_needed`, ``PADDING_NZ`` prologues
(``PaddingMatrixNZ``, 48 KiB of UB per operand), assembled step by step like the C++.

Used by ``examples/06_optimized_matmul.py`` and :mod:`catlass_py.ops.optimized_matmul`.
"""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import Element, Flag, Layout, Swizzle, TileShape
from catlass_py.gemm import GemmShape, GemmType, MmadAtlasA2Preload
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel import OptimizedMatmul, PaddingBuilder, PaddingTag
from catlass_py.kernel.padding_block_nd import is_need_padding
from catlass_py.layout import ColumnMajor, RowMajor, nZ, zN
from catlass_py.numerics.dtypes import get_dtype

ALIGN_BYTES = 512  # alignByByte: a leading dimension that is not a multiple of this many bytes is padded
COMPUTE_LENGTH_BYTES = 48 * 1024  # COMPUTE_LENGTH_A / _B: 48 KiB of UB per padding step


def padding_needed(m: int, n: int, k: int, element="float16", layout_a=RowMajor, layout_b=ColumnMajor):
    """The example's runtime test ``IsNeedPadding(layout, 512 / sizeof(Element))`` for A and B."""
    align = ALIGN_BYTES * 8 // get_dtype(element).bits
    return (is_need_padding(layout_a.make_layout(element, m, k), align),
            is_need_padding(layout_b.make_layout(element, k, n), align))


def assemble(arch=ATLAS_A2, *, padding_a: Flag = False, padding_b: Flag = False, swizzle: Swizzle = (3, 0),
             element: Element = "float16", layout_a: Layout = RowMajor, layout_b: Layout = ColumnMajor,
             l1_tile: TileShape | None = None, l0_tile: TileShape | None = None):
    """Build one of the example's kernels: ``padding_a``/``padding_b`` select the ``PADDING_NZ`` prologue of each
    operand (the C++ pads a row- or column-major operand, never a zN/nZ one), ``swizzle`` the scheduler (the C++:
    ``<3,0>`` when m > n, else ``<3,1>``; see :func:`padding_needed`). Keywords swap template parameters: the
    element (float16, bfloat16), the layouts, and ``l1_tile`` / ``l0_tile`` (default: 256 x 128 blocks when both
    operands are column-major, else 128 x 256; L1 K = 256, L0 K = 64)."""
    # 1. Dispatch policy: preload with the unit flag and shuffle-K.
    dispatch_policy = MmadAtlasA2Preload(enable_unit_flag=True, enable_shuffle_k=True, arch=arch)
    # 2. Tile shapes.
    both_cm = layout_a is ColumnMajor and layout_b is ColumnMajor
    if l1_tile is None:
        l1_tile = (256, 128, 256) if both_cm else (128, 256, 256)
    if l0_tile is None:
        l0_tile = (256, 128, 64) if both_cm else (128, 256, 64)
    l1_tile_shape, l0_tile_shape = GemmShape(*l1_tile), GemmShape(*l0_tile)
    # 3. Padding prologues: PADDING_NZ for a row- or column-major operand that needs it, none for zN / nZ.
    compute_length = COMPUTE_LENGTH_BYTES * 8 // get_dtype(element).bits
    builders = []
    for pad, layout in ((padding_a, layout_a), (padding_b, layout_b)):
        tag = PaddingTag.PADDING_NZ if pad and layout not in (zN, nZ) else PaddingTag.NO_PADDING
        builders.append(PaddingBuilder(tag, arch, element, layout, compute_length))
    builder_a, builder_b = builders
    # 4. Operand types of the BlockMmad (the layouts after padding) and C.
    a_type = GemmType(element, builder_a.layout_after_padding)
    b_type = GemmType(element, builder_b.layout_after_padding)
    c_type = GemmType(element, RowMajor)
    block_mmad = BlockMmad(dispatch_policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type)
    # 5. Scheduler and kernel.
    return OptimizedMatmul(builder_a.padding, builder_b.padding, block_mmad, None, GemmIdentityBlockSwizzle(*swizzle))


__all__ = ["ALIGN_BYTES", "COMPUTE_LENGTH_BYTES", "assemble", "padding_needed"]
