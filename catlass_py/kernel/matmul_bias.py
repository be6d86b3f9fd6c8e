"""CATLASS ``Gemm::Kernel::MatmulBias`` (``gemm/kernel/matmul_bias.hpp``; example 20): C = A @ B + bias.

AIC-only, shaped like :class:`~catlass_py.kernel.basic_matmul.BasicMatmul`; each block also gets the bias
pointer advanced to its first column (``blockCoord.n * L1.N``), and the BlockMmad
(``MmadAtlasA2PingpongBias``) starts the accumulator from the bias through the BT buffer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.gemm.block.capabilities import BIAS_CALL, BlockMmadRequirement
from catlass_py.gemm.coord import GemmCoord, MatrixCoord
from catlass_py.kernel.gemm_kernel import GemmKernel, block_count, offset_a, offset_b, offset_c, operand_layouts


@dataclass(frozen=True)
class MatmulBiasArguments:
    """Host-side ``Arguments{problemShape, ptrA, ptrB, ptrC, ptrBias}``."""

    problem_shape: GemmCoord
    ptr_a: GlobalTensor
    ptr_b: GlobalTensor
    ptr_c: GlobalTensor
    ptr_bias: GlobalTensor


@dataclass(frozen=True)
class MatmulBiasParams:
    """Device-side ``Params``: the pointers with the full-problem layouts (the bias is a dense n-vector)."""

    problem_shape: GemmCoord
    ptr_a: GlobalTensor
    layout_a: Any
    ptr_b: GlobalTensor
    layout_b: Any
    ptr_c: GlobalTensor
    layout_c: Any
    ptr_bias: GlobalTensor


class MatmulBias(GemmKernel):
    """CATLASS ``MatmulBias<BlockMmad, BlockEpilogue = void, BlockScheduler>``: C = A @ B + bias (the bias row
    broadcast down the rows), with a ``MmadAtlasA2PingpongBias`` BlockMmad. AIC only."""

    Arguments = MatmulBiasArguments
    Params = MatmulBiasParams
    block_mmad_needs = BlockMmadRequirement(BIAS_CALL, reason="each block also takes its bias columns")

    def to_underlying_arguments(self, args: MatmulBiasArguments, workspace=None) -> MatmulBiasParams:
        """``MakeLayout`` of A, B and C; the bias pointer as it is."""
        m, n, k = args.problem_shape
        layout_a, layout_b, layout_c = operand_layouts(self.block_mmad, m, n, k)
        return MatmulBiasParams(GemmCoord(m, n, k), args.ptr_a, layout_a, args.ptr_b, layout_b, args.ptr_c, layout_c,
                                args.ptr_bias)

    def total_blocks(self, problem_shape) -> int:
        """Blocks of the problem (progress reporting)."""
        m, n, _ = problem_shape
        return block_count(self.block_mmad.l1_tile_shape, m, n)

    def aic(self, ctx, params: MatmulBiasParams) -> None:
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
                off_bias = bc.n * l1.n
                ctx.mark("block", loop=loop, m_idx=bc.m, n_idx=bc.n, rows=actual.m, cols=actual.n,
                         row=bc.m * l1.m, col=bc.n * l1.n)
                block_mmad(params.ptr_a[off_a], la, params.ptr_b[off_b], lb, params.ptr_c[off_c], lc,
                           params.ptr_bias[off_bias], actual)
            ctx.pipe_barrier(Pipe.ALL)
