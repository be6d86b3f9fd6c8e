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
from catlass_py.gemm.coord import GemmCoord, MatrixCoord
from catlass_py.kernel.gemm_kernel import GemmKernel, block_count, offset_a, offset_b, offset_c, operand_layouts


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


class BatchedMatmul(GemmKernel):
    """CATLASS ``BatchedMatmul<BlockMmad, BlockEpilogue = void, BlockScheduler>``: a batch of equal-shape
    matmuls with contiguous (``m*k``, ``k*n``, ``m*n``) batch strides. AIC only."""

    Arguments = BatchedMatmulArguments
    Params = BatchedMatmulParams

    def to_underlying_arguments(self, args: BatchedMatmulArguments, workspace=None) -> BatchedMatmulParams:
        """One batch's layouts and the strides ``m*k``, ``k*n``, ``m*n``."""
        m, n, k = args.problem_shape
        layout_a, layout_b, layout_c = operand_layouts(self.block_mmad, m, n, k)
        return BatchedMatmulParams(int(args.batch_count), GemmCoord(m, n, k), args.ptr_a, layout_a, m * k,
                                   args.ptr_b, layout_b, k * n, args.ptr_c, layout_c, m * n)

    def total_blocks(self, batch_count: int, problem_shape) -> int:
        """Blocks of all batches (progress reporting)."""
        m, n, _ = problem_shape
        return batch_count * block_count(self.block_mmad.l1_tile_shape, m, n)

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
                off_a = batch * params.stride_a + offset_a(la, bc, l1)
                off_b = batch * params.stride_b + offset_b(lb, bc, l1)
                off_c = batch * params.stride_c + offset_c(lc, bc, l1)
                ctx.mark("block", batch=batch, loop=loop, m_idx=bc.m, n_idx=bc.n, rows=actual.m, cols=actual.n,
                         row=bc.m * l1.m, col=bc.n * l1.n)
                block_mmad(params.ptr_a[off_a], la, params.ptr_b[off_b], lb, params.ptr_c[off_c], lc, actual)
            ctx.pipe_barrier(Pipe.ALL)
