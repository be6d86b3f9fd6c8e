"""CATLASS ``Gemm::Kernel::BasicMatmulPreload`` (``gemm/kernel/basic_matmul_preload.hpp``; example 21).

C = A @ B on the cube cores only, with a ``MmadAtlasA2Preload`` BlockMmad (shuffle-K, the next block's first K
tile prefetched during the current block's last one). Blocks are dealt round-robin over the cube cores; the
vector cores do nothing (no vector program launches). The AIC program is, line for line, that of
``OptimizedMatmul`` without padding prologues, so the class is that kernel with both prologues ``void``; the
operand layouts are the BlockMmad's (example 21 keeps B in GM as ``zN``, the "NZ" format).
"""

from __future__ import annotations

from catlass_py.kernel.optimized_matmul import OptimizedMatmul


class BasicMatmulPreload(OptimizedMatmul):
    """CATLASS ``BasicMatmulPreload<BlockMmad, BlockEpilogue = void, BlockScheduler>``:
    ``Arguments{problemShape, ptrA, ptrB, ptrC}``, no workspace, ``ToUnderlyingArguments`` makes every layout
    with ``MakeLayout`` of the BlockMmad's layout types."""

    def __init__(self, block_mmad, block_epilogue, block_scheduler):
        super().__init__(None, None, block_mmad, block_epilogue, block_scheduler)


__all__ = ["BasicMatmulPreload"]
