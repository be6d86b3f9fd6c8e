"""CATLASS example 37 streamk_matmul (``examples/37_streamk_matmul/streamk_matmul.cpp``): ``StreamkMatmul`` with
``MmadAtlasA2Streamk``, ``StreamkGemmIdentityBlockSwizzle`` and ``StreamkReduceAdd``, assembled step by step like the
C++.

Used by ``examples/37_streamk_matmul.py`` and :mod:`catlass_py.ops.streamk_matmul`.
"""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import Count, Element, Flag, Layout, Swizzle, TileShape
from catlass_py.gemm import GemmShape, GemmType, MmadAtlasA2Streamk
from catlass_py.gemm.block import BlockMmad, StreamkGemmIdentityBlockSwizzle
from catlass_py.gemm.helper import element_accumulator
from catlass_py.kernel.streamk_matmul import StreamkMatmul, StreamkReduceAdd
from catlass_py.layout import RowMajor


def assemble(arch=ATLAS_A2, *, element: Element = "float16", layout_a: Layout = RowMajor, layout_b: Layout = RowMajor,
             compute_length: Count | None = None, l1_tile: TileShape = GemmShape(128, 256, 256),
             l0_tile: TileShape = GemmShape(128, 256, 64), swizzle: Swizzle = (3, 0), enable_unit_flag: Flag = True,
             enable_shuffle_k: Flag = True):
    """Build the kernel like the C++ example (fp16 RowMajor A, B and C). ``compute_length`` of the
    reduction defaults to the whole UB (192 KiB / sizeof(float)); the tile shapes, the stream-K swizzle and the
    policy's flags are the C++'s template constants."""
    # 1. Block-level MMAD: stream-K ping-pong with unit flag and shuffle-K, L1 128x256x256, L0 128x256x64.
    dispatch_policy = MmadAtlasA2Streamk(enable_unit_flag=enable_unit_flag, enable_shuffle_k=enable_shuffle_k,
                                         arch=arch)
    l1_tile_shape = GemmShape(*l1_tile)
    l0_tile_shape = GemmShape(*l0_tile)
    a_type = GemmType(element, layout_a)
    b_type = GemmType(element, layout_b)
    c_type = GemmType(element, RowMajor)
    acc = element_accumulator(a_type.element, b_type.element, arch)
    block_mmad = BlockMmad(dispatch_policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type)
    block_epilogue = None  # void

    # 2. Scheduler (strips of 3 block-rows, walking down) and the reduction of the stream-K partial sums.
    block_scheduler = StreamkGemmIdentityBlockSwizzle(*swizzle)
    if compute_length is None:
        compute_length = arch.ub_size // acc.nbytes(1)
    reduce_add = StreamkReduceAdd(arch, block_scheduler, acc, c_type.element, compute_length)

    # 3. Kernel.
    return StreamkMatmul(block_mmad, block_epilogue, block_scheduler, reduce_add)


__all__ = ["assemble"]
