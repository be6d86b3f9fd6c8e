"""CATLASS ``Gemm::Kernel::BatchedMatmul`` (``gemm/kernel/batched_matmul.hpp``; example 01): C_b = A_b @ B_b.

AIC-only. All batches share one problem shape; batch ``b`` of A, B, C starts ``b * m*k``, ``b * k*n``,
``b * m*n`` elements into its buffer. The blocks of all batches form one sequence of
``batchCount * blocksPerBatch`` tasks dealt round-robin over the cube cores; the scheduler's ``GetBatchIdx``
and ``GetBlockCoord`` split a task index into (batch, block).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.gemm.coord import GemmCoord, MatrixCoord, ceil_div
from catlass_py.kernel._common import check_block_mmad, check_no_epilogue, check_scheduler


@dataclass(frozen=True)
class BatchedMatmulArguments:
    """Host-side ``Arguments{batchCount, problemShape, ptrA, ptrB, ptrC}``."""

    batch_count: int
    problem_shape: GemmCoord
    ptr_a: GlobalTensor
    ptr_b: GlobalTensor
    ptr_c: GlobalTensor


@dataclass(frozen=True)
class BatchedMatmulParams:
    """Device-side ``Params``: per-batch layouts and the batch strides (in elements)."""

    batch_count: int
    problem_shape: GemmCoord
    ptr_a: GlobalTensor
    layout_a: Any
    stride_a: int
    ptr_b: GlobalTensor
    layout_b: Any
    stride_b: int
    ptr_c: GlobalTensor
    layout_c: Any
    stride_c: int


class BatchedMatmul:
    """CATLASS ``BatchedMatmul<BlockMmad, BlockEpilogue = void, BlockScheduler>``: a batch of equal-shape
    matmuls with contiguous (``m*k``, ``k*n``, ``m*n``) batch strides. AIC only."""

    Arguments = BatchedMatmulArguments
    Params = BatchedMatmulParams
    aiv = None

    def __init__(self, block_mmad, block_epilogue, block_scheduler):
        what = type(self).__name__
        check_block_mmad(what, block_mmad)
        check_no_epilogue(what, block_epilogue)
        check_scheduler(what, block_scheduler)
        self.block_mmad = block_mmad
        self.block_scheduler = block_scheduler
        self.arch = block_mmad.arch

    @staticmethod
    def can_implement(args: BatchedMatmulArguments) -> bool:
        """CATLASS ``CanImplement``: always true."""
        return True

    @staticmethod
    def get_workspace_size(args: BatchedMatmulArguments) -> int:
        """No workspace."""
        return 0

    def to_underlying_arguments(self, args: BatchedMatmulArguments, workspace=None) -> BatchedMatmulParams:
        """One batch's layouts and the strides ``m*k``, ``k*n``, ``m*n``."""
        m, n, k = args.problem_shape
        mm = self.block_mmad
        return BatchedMatmulParams(
            int(args.batch_count), GemmCoord(m, n, k),
            args.ptr_a, mm.a_type.layout.make_layout(mm.element_a, m, k), m * k,
            args.ptr_b, mm.b_type.layout.make_layout(mm.element_b, k, n), k * n,
            args.ptr_c, mm.c_type.layout.make_layout(mm.element_c, m, n), m * n,
        )

    def total_blocks(self, batch_count: int, problem_shape) -> int:
        """Blocks of all batches (progress reporting)."""
        l1 = self.block_mmad.l1_tile_shape
        m, n, _ = problem_shape
        return batch_count * ceil_div(m, l1.m) * ceil_div(n, l1.n)

    def aic(self, ctx, params: BatchedMatmulParams) -> None:
        """The cube-core program (``operator()<AIC>``)."""
        l1 = self.block_mmad.l1_tile_shape
        scheduler = self.block_scheduler.update(params.problem_shape, MatrixCoord(l1.m, l1.n))
        core_loops = params.batch_count * scheduler.get_core_loops()
        la, lb, lc = params.layout_a, params.layout_b, params.layout_c
        with self.block_mmad(ctx.resource) as block_mmad:
            for loop in range(ctx.block_idx, core_loops, ctx.block_num):
                batch = scheduler.get_batch_idx(loop)
                bc = scheduler.get_block_coord(loop)
                actual = scheduler.get_actual_block_shape(bc)
                off_a = batch * params.stride_a + la.offset(bc.m * l1.m, bc.k * l1.k)
                off_b = batch * params.stride_b + lb.offset(bc.k * l1.k, bc.n * l1.n)
                off_c = batch * params.stride_c + lc.offset(bc.m * l1.m, bc.n * l1.n)
                ctx.mark("block", batch=batch, loop=loop, m_idx=bc.m, n_idx=bc.n, rows=actual.m, cols=actual.n,
                         row=bc.m * l1.m, col=bc.n * l1.n)
                block_mmad(params.ptr_a[off_a], la, params.ptr_b[off_b], lb, params.ptr_c[off_c], lc, actual)
            ctx.pipe_barrier(Pipe.ALL)
