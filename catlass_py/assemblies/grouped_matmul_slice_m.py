"""CATLASS example 02 grouped_matmul_slice_m (``examples/02_grouped_matmul_slice_m/grouped_matmul_slice_m.cpp``):
``GroupedMatmulSliceM`` with ``MmadAtlasA2PreloadAsync``, one of two tilings (:func:`tiling_for`), assembled step by
step like the C++.

Used by ``examples/02_grouped_matmul_slice_m.py`` and :mod:`catlass_py.ops.grouped_matmul_slice_m`.
"""

from __future__ import annotations

from typing import Annotated

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import Count, Element, Flag, Layout, Policy, Swizzle, TileShape, choice
from catlass_py.gemm import GemmShape, GemmType, MmadAtlasA2PreloadAsync
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel import GroupedMatmulSliceM
from catlass_py.layout import ColumnMajor, RowMajor


Tiling = Annotated[str, choice("k>n", "k<=n")]
"""The example's two kernels: ``'k>n'`` (256 x 128 blocks) or ``'k<=n'`` (128 x 256)."""


def tiling_for(n: int, k: int) -> str:
    """The example's runtime choice: ``'k>n'`` (L1 256x128x256, L0A 2 / L0B 4 stages, swizzle <3,0>) or
    ``'k<=n'`` (L1 128x256x256, L0A 4 / L0B 2 stages, swizzle <3,1>)."""
    return "k>n" if k > n else "k<=n"


def assemble(arch=ATLAS_A2, *, tiling: Tiling = "k<=n", element: Element = "float16", layout_b: Layout = ColumnMajor,
             out_element: Element | None = None, segmented: Flag = False, dispatch_policy: Policy | None = None,
             l1_tile: TileShape | None = None, l0_tile: TileShape | None = None, swizzle: Swizzle | None = None,
             preload_stages: Count = 1, l1_stages: Count = 2, l0a_stages: Count | None = None,
             l0b_stages: Count | None = None, l0c_stages: Count = 1, enable_unit_flag: Flag | None = None,
             enable_shuffle_k: Flag = True):
    """Build one of the example's two kernels (``tiling`` = ``'k>n'`` or ``'k<=n'``, see :func:`tiling_for`).
    Keywords swap template parameters: the element (the unit flag is turned off for int8), B's layout, C's
    element, ``segmented`` (the ``CATLASS_EXPERIMENTAL_GROUPLIST_SEGMENTED`` build: the group list holds group
    sizes), the tile shapes, swizzle and L0A/L0B stages (None: the ``tiling`` branch's), the other template
    constants of the default dispatch policy, and ``dispatch_policy`` (replaces that policy as a whole)."""
    if tiling not in ("k>n", "k<=n"):
        raise ValueError(f"tiling must be 'k>n' or 'k<=n', got {tiling!r}")
    wide_m = tiling == "k>n"
    # 1. Dispatch policy: preload 1 tile, 2 L1 stages, 4 stages on the L0 side that holds the smaller tile.
    if dispatch_policy is None:
        dispatch_policy = MmadAtlasA2PreloadAsync(
            preload_stages=preload_stages, l1_stages=l1_stages,
            l0a_stages=(2 if wide_m else 4) if l0a_stages is None else l0a_stages,
            l0b_stages=(4 if wide_m else 2) if l0b_stages is None else l0b_stages, l0c_stages=l0c_stages,
            enable_unit_flag=element != "int8" if enable_unit_flag is None else enable_unit_flag,
            enable_shuffle_k=enable_shuffle_k, arch=arch)
    # 2. Tile shapes.
    if l1_tile is None:
        l1_tile = (256, 128, 256) if wide_m else (128, 256, 256)
    if l0_tile is None:
        l0_tile = (256, 128, 64) if wide_m else (128, 256, 64)
    l1_tile_shape = GemmShape(*l1_tile)
    l0_tile_shape = GemmShape(*l0_tile)
    # 3. Operand types: A row-major [m, k], every B_g column-major [k, n], C row-major [m, n].
    if out_element is None:
        out_element = "int32" if element == "int8" else element
    a_type = GemmType(element, RowMajor)
    b_type = GemmType(element, layout_b)
    c_type = GemmType(out_element, RowMajor)
    block_mmad = BlockMmad(dispatch_policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type)
    # 4. Scheduler and kernel (no epilogue, int64 group list).
    if swizzle is None:
        swizzle = (3, 0) if wide_m else (3, 1)
    block_scheduler = GemmIdentityBlockSwizzle(*swizzle)
    return GroupedMatmulSliceM(block_mmad, None, block_scheduler, "int64", group_list_segmented=segmented)


__all__ = ["assemble", "tiling_for"]
