"""CATLASS example 26 matmul_relu (``examples/26_matmul_relu/matmul_relu.cpp``): ``OptimizedMatmul`` with
``MmadAtlasA2Preload``, ``ReluTileCopy`` and, when :func:`padding_needed`, ``PaddingMatrixBlockND`` prologues, assembled
step by step like the C++.

Used by ``examples/26_matmul_relu.py`` and :mod:`catlass_py.ops.matmul_relu`.
"""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import Element, Flag, Layout, Policy, Swizzle, TileShape
from catlass_py.gemm import GemmShape, GemmType, MmadAtlasA2Preload
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel import OptimizedMatmul, PaddingMatrixBlockND
from catlass_py.kernel.padding_block_nd import is_need_padding
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.tile import ReluTileCopy

ALIGN_BYTES = 512  # the leading dimension is padded unless it is a multiple of this many bytes


def padding_needed(m: int, n: int, k: int, element="float16", layout_a=RowMajor, layout_b=ColumnMajor):
    """The example's runtime test ``IsNeedPadding(layout, 512 / sizeof(Element))`` for A and B."""
    align = ALIGN_BYTES * 8 // get_dtype(element).bits
    return (is_need_padding(layout_a.make_layout(element, m, k), align),
            is_need_padding(layout_b.make_layout(element, k, n), align))


def assemble(arch=ATLAS_A2, *, padding_a: Flag = False, padding_b: Flag = False, swizzle: Swizzle = (3, 0),
             element: Element = "float16", layout_a: Layout = RowMajor, layout_b: Layout = ColumnMajor,
             out_element: Element | None = None, dispatch_policy: Policy | None = None, relu: Flag = True,
             l1_tile: TileShape | None = None, l0_tile: TileShape | None = None, enable_unit_flag: Flag | None = None,
             enable_shuffle_k: Flag = True):
    """Build one of the example's kernels: ``padding_a``/``padding_b`` select the PADDING_BLOCK_ND prologue
    of each operand, ``swizzle`` the scheduler (see :func:`padding_needed`). Keywords
    swap template parameters: element (unit flag off for int8), layouts, C's element, the dispatch policy
    (default ``MmadAtlasA2Preload`` with ``enable_unit_flag`` and ``enable_shuffle_k``), the tile shapes (None:
    the C++'s, by the layouts), and ``relu=False`` for the plain TileCopy (CATLASS example 06's assembly)."""
    # 1. Dispatch policy: Preload with unit flag and shuffle-K.
    if dispatch_policy is None:
        unit_flag = element != "int8" if enable_unit_flag is None else enable_unit_flag
        dispatch_policy = MmadAtlasA2Preload(enable_unit_flag=unit_flag, enable_shuffle_k=enable_shuffle_k,
                                             arch=arch)
    # 2. Tile shapes: 256 x 128 blocks when both operands are column-major, else 128 x 256.
    both_cm = layout_a is ColumnMajor and layout_b is ColumnMajor
    if l1_tile is None:
        l1_tile = (256, 128, 256) if both_cm else (128, 256, 256)
    if l0_tile is None:
        l0_tile = (256, 128, 64) if both_cm else (128, 256, 64)
    l1_tile_shape = GemmShape(*l1_tile)
    l0_tile_shape = GemmShape(*l0_tile)
    # 3. Padding prologues (PaddingBuilder<PADDING_BLOCK_ND, ...>: PaddingMatrixBlockND with 96 KiB UB buffers)
    #    and the layouts the cube then reads (PaddingRowMajor / PaddingColumnMajor; unchanged without padding).
    compute_length = 96 * 1024 * 8 // GemmType(element, RowMajor).element.bits
    prologue_a = PaddingMatrixBlockND(arch, element, layout_a, compute_length) if padding_a else None
    prologue_b = PaddingMatrixBlockND(arch, element, layout_b, compute_length) if padding_b else None
    # 4. Operand types of the BlockMmad and the ReLU tile copy (fixpipe ReLU on the L0C -> GM store).
    if out_element is None:
        out_element = "int32" if element == "int8" else element
    a_type = GemmType(element, prologue_a.layout_out if prologue_a else layout_a)
    b_type = GemmType(element, prologue_b.layout_out if prologue_b else layout_b)
    c_type = GemmType(out_element, RowMajor)
    tile_copy = ReluTileCopy(arch, a_type, b_type, c_type) if relu else None
    block_mmad = BlockMmad(dispatch_policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type, tile_copy=tile_copy)
    # 5. Scheduler and kernel.
    return OptimizedMatmul(prologue_a, prologue_b, block_mmad, None, GemmIdentityBlockSwizzle(*swizzle))


__all__ = ["ALIGN_BYTES", "assemble", "padding_needed"]
