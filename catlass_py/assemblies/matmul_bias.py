"""CATLASS example 20 matmul_bias (``examples/20_matmul_bias/matmul_bias.cpp``): ``MatmulBias`` with
``MmadAtlasA2PingpongBias``, assembled step by step like the C++.

Used by ``examples/20_matmul_bias.py`` and :mod:`catlass_py.ops.matmul_bias`.
"""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import Element, Flag, Layout, Policy, Swizzle, TileShape
from catlass_py.gemm import GemmShape, GemmType, MmadAtlasA2PingpongBias
from catlass_py.gemm.block import BlockMmad, GemmIdentityBlockSwizzle
from catlass_py.kernel import MatmulBias
from catlass_py.layout import RowMajor, VectorLayout


def assemble(arch=ATLAS_A2, *, element: Element = "float16", bias_element: Element | None = None,
             layout_a: Layout = RowMajor, layout_b: Layout = RowMajor, out_element: Element | None = None,
             dispatch_policy: Policy | None = None, swizzle: Swizzle = (3, 0),
             l1_tile: TileShape = GemmShape(128, 256, 256), l0_tile: TileShape = GemmShape(128, 256, 64),
             enable_unit_flag: Flag | None = None):
    """Build the kernel like the C++ example. Keywords swap template parameters: the input element (bias
    defaults to the same element, int32 for int8; unit flag off for int8), operand layouts, C's element,
    the dispatch policy (default ``MmadAtlasA2PingpongBias`` with ``enable_unit_flag``), the swizzle and the
    tile shapes."""
    # 1. Dispatch policy: ping-pong with bias, unit flag on.
    if dispatch_policy is None:
        unit_flag = element != "int8" if enable_unit_flag is None else enable_unit_flag
        dispatch_policy = MmadAtlasA2PingpongBias(enable_unit_flag=unit_flag, arch=arch)
    # 2. Tile shapes (L0.N * 4 bytes of fp32 bias must fit the 1 KiB BT buffer).
    l1_tile_shape = GemmShape(*l1_tile)
    l0_tile_shape = GemmShape(*l0_tile)
    # 3. Operand types: A, B, C row-major; the bias a dense vector.
    if out_element is None:
        out_element = "int32" if element == "int8" else element
    if bias_element is None:
        bias_element = "int32" if element == "int8" else element
    a_type = GemmType(element, layout_a)
    b_type = GemmType(element, layout_b)
    c_type = GemmType(out_element, RowMajor)
    bias_type = GemmType(bias_element, VectorLayout)
    # 4. BlockMmad with the BiasType (the default TileCopy then carries CopyGmToL1Bias and CopyL1ToBT).
    block_mmad = BlockMmad(dispatch_policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type, bias_type)
    # 5. Scheduler and kernel.
    return MatmulBias(block_mmad, None, GemmIdentityBlockSwizzle(*swizzle))


__all__ = ["assemble"]
