"""CATLASS ``Gemm::Kernel::BasicMatmul`` (``gemm/kernel/basic_matmul.hpp``; example 00): C = A @ B.

AIC-only. The scheduler cuts C into ``L1.M x L1.N`` blocks; block ``i`` goes to cube core ``i % blockNum``
(each core walks ``loop = blockIdx, blockIdx + blockNum, ...``) and is computed by one BlockMmad call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.gemm.coord import GemmCoord, MatrixCoord, ceil_div
from catlass_py.kernel._common import check_block_mmad, check_no_epilogue, check_scheduler


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


class BasicMatmul:
    """CATLASS ``BasicMatmul<BlockMmad, BlockEpilogue = void, BlockScheduler>``: C = A @ B with any BlockMmad
    that takes (A, B, C, actual shape) - Pingpong, or PreloadAsync (drained by its destructor). AIC only."""

    Arguments = BasicMatmulArguments
    Params = BasicMatmulParams
    aiv = None  # the C++ AIV operator() is empty: no vector cores launch

    def __init__(self, block_mmad, block_epilogue, block_scheduler):
        what = type(self).__name__
        check_block_mmad(what, block_mmad)
        check_no_epilogue(what, block_epilogue)
        check_scheduler(what, block_scheduler)
        self.block_mmad = block_mmad
        self.block_scheduler = block_scheduler
        self.arch = block_mmad.arch

    # -- host side -------------------------------------------------------------------------------
    @staticmethod
    def can_implement(args: BasicMatmulArguments) -> bool:
        """CATLASS ``CanImplement``: always true (the ops layer validates user input)."""
        return True

    @staticmethod
    def get_workspace_size(args: BasicMatmulArguments) -> int:
        """No workspace."""
        return 0

    def to_underlying_arguments(self, args: BasicMatmulArguments, workspace=None) -> BasicMatmulParams:
        """``MakeLayout`` of A (m x k), B (k x n) and C (m x n) in the BlockMmad's layouts."""
        m, n, k = args.problem_shape
        mm = self.block_mmad
        return BasicMatmulParams(
            GemmCoord(m, n, k),
            args.ptr_a, mm.a_type.layout.make_layout(mm.element_a, m, k),
            args.ptr_b, mm.b_type.layout.make_layout(mm.element_b, k, n),
            args.ptr_c, mm.c_type.layout.make_layout(mm.element_c, m, n),
        )

    def total_blocks(self, problem_shape) -> int:
        """Blocks of the problem (progress reporting)."""
        l1 = self.block_mmad.l1_tile_shape
        m, n, _ = problem_shape
        return ceil_div(m, l1.m) * ceil_div(n, l1.n)

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
                off_a = la.offset(bc.m * l1.m, bc.k * l1.k)
                off_b = lb.offset(bc.k * l1.k, bc.n * l1.n)
                off_c = lc.offset(bc.m * l1.m, bc.n * l1.n)
                ctx.mark("block", loop=loop, m_idx=bc.m, n_idx=bc.n, rows=actual.m, cols=actual.n,
                         row=bc.m * l1.m, col=bc.n * l1.n)
                block_mmad(params.ptr_a[off_a], la, params.ptr_b[off_b], lb, params.ptr_c[off_c], lc, actual)
            ctx.pipe_barrier(Pipe.ALL)
        # Leaving the block is the C++ destructor (an async block drains its pending tiles there).
