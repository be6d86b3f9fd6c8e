"""CATLASS ``Gemm::Kernel::GroupedMatmul`` (``gemm/kernel/grouped_matmul.hpp``; example 08).

A list of independent problems ``C_g = A_g @ B_g`` with arbitrary shapes ``(m_g, n_g, k_g)`` and layouts; the
operands of consecutive groups lie back to back in one buffer each (group g starts ``sum m_i*k_i``,
``sum k_i*n_i``, ``sum m_i*n_i`` elements in). At most 256 groups (``MAX_TENSOR_COUNT``). AIC-only; blocks of
all groups dealt round-robin over the cube cores as in slice-M.

Difference from CATLASS: the C++ copies the shape and layout lists from GM into the kernel at start
(``UnpackListParam``); here they travel in ``Params`` as Python tuples.

A group with ``k_g == 0`` still gets its blocks issued; with an async BlockMmad (example 08's PreloadAsync)
such a block issues no work at all, so that group's C keeps whatever it held (CATLASS's compare skips it).
"""

from __future__ import annotations

from dataclasses import dataclass

from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.gemm.coord import GemmCoord, MatrixCoord
from catlass_py.kernel.gemm_kernel import GemmKernel, block_count, offset_a, offset_b, offset_c
from catlass_py.kernel.grouped import RoundRobinGroups

MAX_TENSOR_COUNT = 256


@dataclass(frozen=True)
class GroupedMatmulArguments:
    """Host-side ``Arguments{problemCount, ptrProblemShape, ptrA, ptrLayoutA, ptrB, ptrLayoutB, ptrC,
    ptrLayoutC}``: the shape and layout lists are sequences of ``problem_count`` entries."""

    problem_count: int
    problem_shapes: tuple
    ptr_a: GlobalTensor
    layouts_a: tuple
    ptr_b: GlobalTensor
    layouts_b: tuple
    ptr_c: GlobalTensor
    layouts_c: tuple


@dataclass(frozen=True)
class GroupedMatmulParams:
    """Device-side ``Params`` (the same lists, as tuples)."""

    problem_count: int
    problem_shapes: tuple
    ptr_a: GlobalTensor
    layouts_a: tuple
    ptr_b: GlobalTensor
    layouts_b: tuple
    ptr_c: GlobalTensor
    layouts_c: tuple


class GroupedMatmul(GemmKernel):
    """CATLASS ``GroupedMatmul<BlockMmad, BlockEpilogue = void, BlockScheduler>``: up to 256 matmuls of any
    shapes in one launch. AIC only."""

    Arguments = GroupedMatmulArguments
    Params = GroupedMatmulParams
    MAX_TENSOR_COUNT = MAX_TENSOR_COUNT

    @staticmethod
    def can_implement(args: GroupedMatmulArguments) -> bool:
        """CATLASS ``CanImplement``: false for more than ``MAX_TENSOR_COUNT`` (256) groups."""
        return int(args.problem_count) <= MAX_TENSOR_COUNT

    @staticmethod
    def to_underlying_arguments(args: GroupedMatmulArguments, workspace=None) -> GroupedMatmulParams:
        """The arguments as they are (the lists become tuples of ``GemmCoord`` and layouts)."""
        g = int(args.problem_count)
        return GroupedMatmulParams(
            g, tuple(GemmCoord(*s) for s in args.problem_shapes[:g]),
            args.ptr_a, tuple(args.layouts_a[:g]), args.ptr_b, tuple(args.layouts_b[:g]),
            args.ptr_c, tuple(args.layouts_c[:g]),
        )

    def total_blocks(self, problem_shapes) -> int:
        """Blocks of all groups (progress reporting)."""
        l1 = self.block_mmad.l1_tile_shape
        return sum(block_count(l1, m, n) for m, n, _ in problem_shapes)

    def aic(self, ctx, params: GroupedMatmulParams) -> None:
        """The cube-core program (``operator()<AIC>``)."""
        l1 = self.block_mmad.l1_tile_shape
        deal = RoundRobinGroups(ctx.block_idx, ctx.block_num)
        off_a = off_b = off_c = 0
        with self.block_mmad(ctx.resource) as block_mmad:
            for g in range(params.problem_count):
                shape = params.problem_shapes[g]
                layout_a, layout_b, layout_c = params.layouts_a[g], params.layouts_b[g], params.layouts_c[g]
                scheduler = self.block_scheduler.update(shape, MatrixCoord(l1.m, l1.n))
                for loop in deal.loops(scheduler.get_core_loops()):
                    bc = scheduler.get_block_coord(loop)
                    actual = scheduler.get_actual_block_shape(bc)
                    oa, ob, oc = offset_a(layout_a, bc, l1), offset_b(layout_b, bc, l1), offset_c(layout_c, bc, l1)
                    ctx.mark("block", group=g, loop=loop, m_idx=bc.m, n_idx=bc.n, rows=actual.m, cols=actual.n,
                             row=bc.m * l1.m, col=bc.n * l1.n)
                    block_mmad(params.ptr_a[off_a + oa], layout_a, params.ptr_b[off_b + ob], layout_b,
                               params.ptr_c[off_c + oc], layout_c, actual)
                off_a += shape.m * shape.k
                off_b += shape.k * shape.n
                off_c += shape.m * shape.n
            block_mmad.synchronize_block()
            ctx.pipe_barrier(Pipe.ALL)
