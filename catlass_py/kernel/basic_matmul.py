"""CATLASS ``Gemm::Kernel::BasicMatmul`` (``gemm/kernel/basic_matmul.hpp``; example 00): C = A @ B.

AIC-only. The scheduler cuts C into ``L1.M x L1.N`` blocks; block ``i`` goes to cube core ``i % blockNum``
(each core walks ``loop = blockIdx, blockIdx + blockNum, ...``) and is computed by one BlockMmad call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.gemm.coord import GemmCoord, MatrixCoord
from catlass_py.kernel.gemm_kernel import GemmKernel, block_count, offset_a, offset_b, offset_c, operand_layouts


@dataclass(frozen=True)
class BasicMatmulArguments:
    """Host-side ``Arguments{problemShape, ptrA, ptrB, ptrC}``."""

    problem_shape: GemmCoord
    ptr_a: GlobalTensor
    ptr_b: GlobalTensor
    ptr_c: GlobalTensor


@dataclass(frozen=True)
class BasicMatmulParams:
    """Device-side ``Params``: the pointers with the full-problem layouts."""

    problem_shape: GemmCoord
    ptr_a: GlobalTensor
    layout_a: Any
    ptr_b: GlobalTensor
    layout_b: Any
    ptr_c: GlobalTensor
    layout_c: Any


class BasicMatmul(GemmKernel):
    """CATLASS ``BasicMatmul<BlockMmad, BlockEpilogue = void, BlockScheduler>``: C = A @ B with any BlockMmad
    that takes (A, B, C, actual shape) - Pingpong, or PreloadAsync (drained by its destructor). AIC only."""

    Arguments = BasicMatmulArguments
    Params = BasicMatmulParams

    # -- host side -------------------------------------------------------------------------------
    def to_underlying_arguments(self, args: BasicMatmulArguments, workspace=None) -> BasicMatmulParams:
        """``MakeLayout`` of A (m x k), B (k x n) and C (m x n) in the BlockMmad's layouts."""
        m, n, k = args.problem_shape
        layout_a, layout_b, layout_c = operand_layouts(self.block_mmad, m, n, k)
        return BasicMatmulParams(GemmCoord(m, n, k), args.ptr_a, layout_a, args.ptr_b, layout_b, args.ptr_c, layout_c)

    def total_blocks(self, problem_shape) -> int:
        """Blocks of the problem (progress reporting)."""
        m, n, _ = problem_shape
        return block_count(self.block_mmad.l1_tile_shape, m, n)

    # -- device side -----------------------------------------------------------------------------
    def aic(self, ctx, params: BasicMatmulParams) -> None:
        """The cube-core program (``operator()<AIC>``)."""
        l1 = self.block_mmad.l1_tile_shape
        scheduler = self.block_scheduler.update(params.problem_shape, MatrixCoord(l1.m, l1.n))
        core_loops = scheduler.get_core_loops()
        la, lb, lc = params.layout_a, params.layout_b, params.layout_c
        with self.block_mmad(ctx.resource) as block_mmad:
            for loop in range(ctx.block_idx, core_loops, ctx.block_num):
                bc = scheduler.get_block_coord(loop)
                actual = scheduler.get_actual_block_shape(bc)
                off_a, off_b, off_c = offset_a(la, bc, l1), offset_b(lb, bc, l1), offset_c(lc, bc, l1)
                ctx.mark("block", loop=loop, m_idx=bc.m, n_idx=bc.n, rows=actual.m, cols=actual.n,
                         row=bc.m * l1.m, col=bc.n * l1.n)
                block_mmad(params.ptr_a[off_a], la, params.ptr_b[off_b], lb, params.ptr_c[off_c], lc, actual)
            ctx.pipe_barrier(Pipe.ALL)
        # Leaving the block is the C++ destructor (an async block drains its pending tiles there).
