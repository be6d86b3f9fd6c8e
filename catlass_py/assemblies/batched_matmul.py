"""CATLASS example 01 batched_matmul (``examples/01_batched_matmul/batched_matmul.cpp``): ``BatchedMatmul`` with
``MmadAtlasA2Pingpong``, swizzle ``<3,0>`` or ``<3,1>`` (:func:`swizzle_for`), assembled step by step like the C++.

Used by ``examples/01_batched_matmul.py`` and :mod:`catlass_py.ops.batched_matmul`.
"""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import Element, Flag, Layout, Policy, Swizzle, TileShape
from catlass_py.gemm import GemmShape, GemmType, MmadAtlasA2Pingpong
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel import BatchedMatmul
from catlass_py.layout import RowMajor


def swizzle_for(m: int, n: int) -> tuple[int, int]:
    """The example's runtime choice: ``GemmIdentityBlockSwizzle<3, 0>`` when m > n, else ``<3, 1>``."""
    return (3, 0) if m > n else (3, 1)


def assemble(arch=ATLAS_A2, *, swizzle: Swizzle = (3, 0), element: Element = "float16", layout_a: Layout = RowMajor,
             layout_b: Layout = RowMajor, out_element: Element | None = None, dispatch_policy: Policy | None = None,
             l1_tile: TileShape = GemmShape(128, 256, 256), l0_tile: TileShape = GemmShape(128, 256, 64),
             enable_unit_flag: Flag | None = None):
    """Build the kernel like the C++ example for one swizzle (the C++ instantiates both and picks one at
    runtime, see :func:`swizzle_for`). The keywords swap template parameters: element, operand layouts (the
    C++ comments allow RowMajor or ColumnMajor for A and B), C's element, the dispatch policy (default
    ``MmadAtlasA2Pingpong`` with ``enable_unit_flag``, on except for int8) and the L1 / L0 tile shapes."""
    # 1. Dispatch policy: 2-stage ping-pong with the unit flag (off for int8, as CATLASS requires).
    if dispatch_policy is None:
        unit_flag = element != "int8" if enable_unit_flag is None else enable_unit_flag
        dispatch_policy = MmadAtlasA2Pingpong(enable_unit_flag=unit_flag, arch=arch)
    # 2. Tile shapes: 128 x 256 blocks; L1 K = 256, L0 K = 64.
    l1_tile_shape = GemmShape(*l1_tile)
    l0_tile_shape = GemmShape(*l0_tile)
    # 3. Operand types; C must be RowMajor.
    if out_element is None:
        out_element = "int32" if element == "int8" else element
    a_type = GemmType(element, layout_a)
    b_type = GemmType(element, layout_b)
    c_type = GemmType(out_element, RowMajor)
    block_mmad = BlockMmad(dispatch_policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type)
    # 4. Scheduler and kernel (no epilogue).
    block_scheduler = GemmIdentityBlockSwizzle(*swizzle)
    return BatchedMatmul(block_mmad, None, block_scheduler)


__all__ = ["assemble", "swizzle_for"]
