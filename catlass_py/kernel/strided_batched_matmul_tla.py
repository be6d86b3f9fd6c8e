"""CATLASS ``Gemm::Kernel::StridedBatchedMatmulTla`` (``gemm/kernel/strided_batched_matmul_tla.hpp``; example 45):
``C[b] = A[b] @ B[b]`` for every batch ``b``, each operand a rank-3 TLA layout ``(batch, rows, cols)`` with any
batch stride and leading dimension.

AIC-only. All blocks of all batches form one sequence dealt round-robin over the cube cores (``batchIdx =
loop / blocksPerBatch``); a cube core slices the batch out of each rank-3 tensor (``tensor(batchIdx, _, _)``),
takes the block's ``TileView``s (``L1_TILE_M x K`` of A, ``K x L1_TILE_N`` of B, ``L1_TILE_M x L1_TILE_N`` of C,
clipped to the matrix) and calls a BlockMmadTla with the tensors alone (``MmadPingpongTlaV2``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ConfigError
from catlass_py.gemm.block.capabilities import TLA_V2_CALL, BlockMmadRequirement
from catlass_py.gemm.coord import GemmCoord, MatrixCoord
from catlass_py.integers import is_int
from catlass_py.kernel.gemm_kernel import GemmKernel, block_count
from catlass_py.tile.copy_tla import is_layout_kind, make_tensor
from catlass_py.tla import Layout, tile_view


@dataclass(frozen=True)
class StridedBatchedMatmulTlaArguments:
    """Host-side ``Arguments{batchCount, problemShape, ptrA, layoutA, ptrB, layoutB, ptrC, layoutC}`` (rank-3 TLA
    layouts)."""

    batch_count: int
    problem_shape: GemmCoord
    ptr_a: GlobalTensor
    layout_a: Layout
    ptr_b: GlobalTensor
    layout_b: Layout
    ptr_c: GlobalTensor
    layout_c: Layout


@dataclass(frozen=True)
class StridedBatchedMatmulTlaParams:
    """Device-side ``Params`` (the arguments as they are)."""

    batch_count: int
    problem_shape: GemmCoord
    ptr_a: GlobalTensor
    layout_a: Any
    ptr_b: GlobalTensor
    layout_b: Any
    ptr_c: GlobalTensor
    layout_c: Any


def batched_layout(batch: int, rows: int, cols: int, batch_stride: int, ld: int, tag: str) -> Layout:
    """``tla::MakeLayout(MakeShape(batch, rows, cols), MakeStride(batchStride, ld, _1))`` for a RowMajor tag, or
    ``MakeStride(batchStride, _1, ld)`` for ColumnMajor (example 45's ``MakeTlaLayoutA``/``B``; CATLASS
    ``tla::MakeBatchedLayout_t``)."""
    strides = (batch_stride, ld, 1) if tag == "RowMajor" else (batch_stride, 1, ld)
    return Layout((batch, rows, cols), strides)


class StridedBatchedMatmulTla(GemmKernel):
    """CATLASS ``StridedBatchedMatmulTla<BlockMmad, BlockEpilogue = void, BlockScheduler>`` (see the module)."""

    Arguments = StridedBatchedMatmulTlaArguments
    Params = StridedBatchedMatmulTlaParams
    block_mmad_needs = BlockMmadRequirement(TLA_V2_CALL, reason="StridedBatchedMatmulTla passes the block's tensors "
                                                                "alone (their origin shapes are the extents)")

    # -- host side -------------------------------------------------------------------------------
    def can_implement(self, args: StridedBatchedMatmulTlaArguments) -> bool:
        """``CanImplement`` (always true in CATLASS, whose types enforce it); here: a positive batch count and
        rank-3 layouts ``(batch, rows, cols)`` of the problem in the bundle's formats, strides positive."""
        what, mm = self.kernel_name(), self.block_mmad
        if not is_int(args.batch_count) or args.batch_count < 1:
            raise ConfigError(f"{what}: batchCount must be an integer >= 1, got {args.batch_count!r}")
        m, n, k = GemmCoord(*args.problem_shape)
        for label, layout, element, tag, extent in (
            ("layoutA", args.layout_a, mm.element_a, mm.layout_tag_a, (m, k)),
            ("layoutB", args.layout_b, mm.element_b, mm.layout_tag_b, (k, n)),
            ("layoutC", args.layout_c, mm.element_c, mm.layout_tag_c, (m, n)),
        ):
            shape = (int(args.batch_count),) + extent
            if not isinstance(layout, Layout) or layout.rank != 3 or layout.depth != 1 or tuple(layout.shape) != shape:
                raise ConfigError(f"{what}: {label} must be a rank-3 TLA layout of shape {shape} (batch, rows, cols), "
                                  f"got {layout!r}")
            if any(s < 0 for s in layout.stride) or not is_layout_kind(element, Layout(extent, layout.stride[1:]), tag):
                raise ConfigError(f"{what}: {label} {layout} is not a batched {tag} layout (strides (batch, ld, 1) for "
                                  f"RowMajor, (batch, 1, ld) for ColumnMajor)")
        return True

    def to_underlying_arguments(self, args: StridedBatchedMatmulTlaArguments, workspace=None):
        self.can_implement(args)
        return StridedBatchedMatmulTlaParams(int(args.batch_count), GemmCoord(*args.problem_shape), args.ptr_a,
                                             args.layout_a, args.ptr_b, args.layout_b, args.ptr_c, args.layout_c)

    def total_blocks(self, batch_count: int, problem_shape) -> int:
        m, n, _ = problem_shape
        return batch_count * block_count(self.block_mmad.l1_tile_shape, m, n)

    # -- device side -----------------------------------------------------------------------------
    def aic(self, ctx, params: StridedBatchedMatmulTlaParams) -> None:
        """The cube-core program (``operator()<AIC>``)."""
        l1 = self.block_mmad.l1_tile_shape
        k = params.problem_shape.k
        scheduler = self.block_scheduler.update(params.problem_shape, MatrixCoord(l1.m, l1.n))
        core_loops = params.batch_count * scheduler.get_core_loops()
        tensor_a3 = make_tensor(params.ptr_a, params.layout_a)
        tensor_b3 = make_tensor(params.ptr_b, params.layout_b)
        tensor_c3 = make_tensor(params.ptr_c, params.layout_c)
        with self.block_mmad(ctx.resource) as block_mmad:
            for loop in range(ctx.block_idx, core_loops, ctx.block_num):
                batch = scheduler.get_batch_idx(loop)
                bc = scheduler.get_block_coord(loop)
                actual = scheduler.get_actual_block_shape(bc)
                ctx.mark("block", loop=loop, batch=batch, m_idx=bc.m, n_idx=bc.n, rows=actual.m, cols=actual.n,
                         row=bc.m * l1.m, col=bc.n * l1.n)
                tensor_a, tensor_b, tensor_c = (tensor_a3(batch, None, None), tensor_b3(batch, None, None),
                                                tensor_c3(batch, None, None))
                block_a = tile_view(tensor_a, (bc.m, 0), (l1.m, k))
                block_b = tile_view(tensor_b, (0, bc.n), (k, l1.n))
                block_c = tile_view(tensor_c, (bc.m, bc.n), (l1.m, l1.n))
                block_mmad(block_a, block_b, block_c)
            ctx.pipe_barrier(Pipe.ALL)


__all__ = ["StridedBatchedMatmulTla", "batched_layout"]
