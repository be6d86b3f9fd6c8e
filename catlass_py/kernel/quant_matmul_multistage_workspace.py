"""CATLASS ``Gemm::Kernel::QuantMatmulMultiStageWorkspace`` (example 12's kernel,
``gemm/kernel/quant_matmul_multistage_workspace.hpp``).

The single-problem sibling of example 10's kernel: int8 A @ int8 B -> int32 blocks into a per-AI-core ring
of ``workspace_stages`` slots in a GM workspace; the two vector cores of the same AI core dequantise every
block (per-channel scale x per-token scale) into D. Blocks go round robin over the AI cores
(``loop = core, core + cores, ...``).

Ring handshake per AI core and slot s (flags AicFinishStore[s] = 2s, AivFinishCompute[s] = 2s + 1):

======================  ==========================================  ===================================
who                     when                                        flag operation
======================  ==========================================  ===================================
AIC, block b >= stages  right before b's fixpipe (callback)          wait AivFinishCompute[s]
AIC, every block        right after b's fixpipe (callback)           set AicFinishStore[s] (mode 2)
AIV, every block        before reading slot s                        wait AicFinishStore[s]
AIV, every block        after its D stores                           set AivFinishCompute[s] (mode 2)
AIC, the end            after synchronize_block, oldest slot first   wait the last min(blocks, stages)
======================  ==========================================  ===================================

The ring (flags, slot layout, one method per row) is :mod:`catlass_py.kernel._workspace_ring`, shared with
example 10's kernel.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.epilogue.block.per_token_dequant import PerTokenDequantParams
from catlass_py.gemm.coord import GemmCoord, MatrixCoord
from catlass_py.kernel._common import block_count, call_block_mmad, dequant_layouts, offset_a, offset_b, operand_layouts
from catlass_py.kernel._workspace_ring import USER_FLAG_IDS, AicSlots, WorkspaceRing, check_multistage  # noqa: F401
from catlass_py.numerics import dtypes as dt


@dataclass(frozen=True)
class QuantMatmulArguments:
    """Host-side ``Arguments{problemShape, aicCoreNum, ptrA, ptrB, ptrScale, ptrPerTokenScale, ptrD}``."""

    problem_shape: GemmCoord
    aic_core_num: int
    ptr_a: GlobalTensor
    ptr_b: GlobalTensor
    ptr_scale: GlobalTensor
    ptr_per_token_scale: GlobalTensor
    ptr_d: GlobalTensor


@dataclass(frozen=True)
class QuantMatmulParams:
    """Device-side ``Params`` (``ToUnderlyingArguments``)."""

    problem_shape: GemmCoord
    ptr_a: GlobalTensor
    layout_a: Any
    ptr_b: GlobalTensor
    layout_b: Any
    ptr_scale: GlobalTensor
    layout_scale: Any
    ptr_per_token_scale: GlobalTensor
    layout_per_token_scale: Any
    ptr_d: GlobalTensor
    layout_d: Any
    ptr_workspace: GlobalTensor


class QuantMatmulMultiStageWorkspace(WorkspaceRing):
    """CATLASS ``QuantMatmulMultiStageWorkspace<BlockMmad, BlockEpilogue, BlockScheduler, WORKSPACE_STAGES>``:
    int8 matmul with per-channel and per-token dequantisation through a per-AI-core ring of int32 workspace
    slots (see module doc). Assembly checks as example 10's kernel: stage count and flag ids, per-token
    dequant epilogue, callbacks on an async BlockMmad, int32 RowMajor C."""

    Arguments = QuantMatmulArguments
    Params = QuantMatmulParams

    def __init__(self, block_mmad, block_epilogue, block_scheduler, workspace_stages: int = 2):
        check_multistage("QuantMatmulMultiStageWorkspace", block_mmad, block_epilogue, workspace_stages)
        self.block_mmad = block_mmad
        self.block_epilogue = block_epilogue
        self.block_scheduler = block_scheduler
        self.arch = block_mmad.arch
        self._init_ring(workspace_stages)

    # -- host side -------------------------------------------------------------------------------
    @staticmethod
    def can_implement(args: QuantMatmulArguments) -> bool:
        """CATLASS ``CanImplement`` (always true; the ops layer validates user input)."""
        return True

    def to_underlying_arguments(self, args: QuantMatmulArguments, workspace: GlobalTensor) -> QuantMatmulParams:
        """CATLASS ``ToUnderlyingArguments``: the full-problem layouts."""
        m, n, k = args.problem_shape
        layout_a, layout_b, _ = operand_layouts(self.block_mmad, m, n, k)
        layout_scale, layout_per_token_scale, layout_d = dequant_layouts(self.block_epilogue, m, n)
        return QuantMatmulParams(GemmCoord(m, n, k), args.ptr_a, layout_a, args.ptr_b, layout_b, args.ptr_scale,
                                 layout_scale, args.ptr_per_token_scale, layout_per_token_scale, args.ptr_d, layout_d,
                                 workspace)

    # -- device side -----------------------------------------------------------------------------
    def _scheduler(self, params):
        l1 = self.block_mmad.l1_tile_shape
        return self.block_scheduler.update(params.problem_shape, MatrixCoord(l1.m, l1.n))

    def aic(self, ctx, params: QuantMatmulParams) -> None:
        """The cube-core program (``operator()<AIC>``)."""
        l1 = self.block_mmad.l1_tile_shape
        core_idx, core_num = ctx.block_idx, ctx.block_num
        scheduler = self._scheduler(params)
        core_loops = scheduler.get_core_loops()
        gm_c = params.ptr_workspace.reinterpret(dt.INT32)
        layout_c = self._workspace_layout(core_num)
        slots = AicSlots(self, ctx)
        is_async = getattr(self.block_mmad, "ASYNC", False)
        with self.block_mmad(ctx.resource) as block_mmad:
            for loop in range(core_idx, core_loops, core_num):
                bc = scheduler.get_block_coord(loop)
                actual = scheduler.get_actual_block_shape(bc)
                stage_id, before, after = slots.next_block()
                off_a, off_b = offset_a(params.layout_a, bc, l1), offset_b(params.layout_b, bc, l1)
                off_c = self._slot_offset(layout_c, stage_id, core_idx, core_num)
                ctx.mark("block", loop=loop, m_idx=bc.m, n_idx=bc.n, row=bc.m * l1.m, col=bc.n * l1.n,
                         rows=actual.m, cols=actual.n, stage=stage_id)
                call_block_mmad(block_mmad, is_async, (params.ptr_a[off_a], params.layout_a, params.ptr_b[off_b],
                                                       params.layout_b, gm_c[off_c], layout_c, actual), (before, after))
            block_mmad.synchronize_block()
            slots.drain()
            ctx.pipe_barrier(Pipe.ALL)

    def aiv(self, ctx, params: QuantMatmulParams) -> None:
        """The vector-core program (``operator()<AIV>``), run by both sub-blocks of every AI core."""
        l1 = self.block_mmad.l1_tile_shape
        stages = self.workspace_stages
        core_idx, core_num = ctx.ai_core_idx, ctx.block_num
        gm_c = params.ptr_workspace.reinterpret(dt.INT32)
        layout_c = self._workspace_layout(core_num)
        m, n, _ = params.problem_shape
        scheduler = self._scheduler(params)
        core_loops = scheduler.get_core_loops()
        block_shape = GemmCoord(l1.m, l1.n, l1.k)
        epilogue_params = PerTokenDequantParams(
            params.ptr_scale, params.layout_scale,
            params.ptr_per_token_scale, params.layout_per_token_scale.get_tile_layout(m),
            params.ptr_d, params.layout_d.get_tile_layout(m, n),
        )
        stage_id = 0
        with self.block_epilogue(ctx.resource) as epilogue:
            epilogue.update_params(epilogue_params)
            for loop in range(core_idx, core_loops, core_num):
                bc = scheduler.get_block_coord(loop)
                actual = scheduler.get_actual_block_shape(bc)
                gm_block_c = gm_c[self._slot_offset(layout_c, stage_id, core_idx, core_num)]
                layout_block_c = layout_c.get_tile_layout(actual.m, actual.n)
                self.aiv_wait_slot_stored(ctx, stage_id)
                ctx.mark("epilogue_block", loop=loop, stage=stage_id)
                epilogue(block_shape, bc, actual, gm_block_c, layout_block_c)
                self.aiv_set_slot_free(ctx, stage_id)
                stage_id = (stage_id + 1) % stages
            ctx.pipe_barrier(Pipe.ALL)

    def total_blocks(self, problem_shape) -> int:
        """Blocks of the problem (for progress reporting)."""
        m, n, _ = problem_shape
        return block_count(self.block_mmad.l1_tile_shape, m, n)


__all__ = ["QuantMatmulArguments", "QuantMatmulMultiStageWorkspace", "QuantMatmulParams", "check_multistage"]
