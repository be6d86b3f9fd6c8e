"""CATLASS ``Gemm::Kernel::GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace`` (example 10's kernel;
``gemm/kernel/grouped_matmul_slice_m_per_token_dequant_multistage_workspace.hpp``).

A mix kernel. The cube core of every AI core computes int32 blocks of C = A_g @ B_g into its own ring of
``workspace_stages`` slots in a GM workspace; the two vector cores of the same AI core dequantise each block
into D. All blocks of all groups form one global sequence dealt round-robin over the AI cores.

Ring handshake per AI core and workspace slot s (flags AicFinishStore[s] = 2s, AivFinishCompute[s] = 2s+1):

======================  ==========================================  ===================================
who                     when                                        flag operation
======================  ==========================================  ===================================
AIC, block b >= stages  right before b's fixpipe (inside BlockMmad)  wait AivFinishCompute[s]
AIC, every block        right after b's fixpipe                      set AicFinishStore[s] (mode 2)
AIV, every block        before reading slot s                        wait AicFinishStore[s]
AIV, every block        after its D stores                           set AivFinishCompute[s] (mode 2)
AIC, the end            after synchronize_block, oldest slot first   wait AivFinishCompute of the last
                                                                     min(blocks, stages) blocks
======================  ==========================================  ===================================

Each row is one method (``aic_wait_slot_free``, ``aic_set_slot_stored``, ``aiv_wait_slot_stored``,
``aiv_set_slot_free``, ``aic_drain_slot``; defined with the ring in :mod:`catlass_py.kernel._workspace_ring`,
which example 12's kernel shares), so that a subclass can drop exactly one synchronisation point (DESIGN.md
section 7 toggle tests) without copying the loops.
"""

from __future__ import annotations

from dataclasses import dataclass

from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.epilogue.block.per_token_dequant import PerTokenDequantParams
from catlass_py.gemm.coord import GemmCoord, MatrixCoord
from catlass_py.kernel._common import (
    GroupedPerTokenDequantParams,
    RoundRobinGroups,
    block_count,
    call_block_mmad,
    dequant_layouts,
    group_size,
    offset_a,
    offset_b,
    operand_layouts,
)
from catlass_py.kernel._workspace_ring import USER_FLAG_IDS, AicSlots, WorkspaceRing, check_multistage  # noqa: F401
from catlass_py.numerics import dtypes as dt


@dataclass(frozen=True)
class GroupedMatmulSliceMPerTokenDequantArguments:
    """Host-side ``Arguments``: problem (m, n, k) over all groups, group count, AI cores, GM tensors."""

    problem_shape: GemmCoord
    problem_count: int
    aic_core_num: int
    ptr_group_list: GlobalTensor
    ptr_a: GlobalTensor
    ptr_b: GlobalTensor
    ptr_scale: GlobalTensor
    ptr_per_token_scale: GlobalTensor
    ptr_d: GlobalTensor


# Device-side ``Params`` (``ToUnderlyingArguments``): pointers with the layouts the kernel builds.
GroupedMatmulSliceMPerTokenDequantParams = GroupedPerTokenDequantParams


class GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace(WorkspaceRing):
    """CATLASS ``GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace<BlockMmad, BlockEpilogue,
    BlockScheduler, WORKSPACE_STAGES, ElementGroupList>``: int8 grouped matmul split along M with per-channel
    and per-token dequantisation, through a per-AI-core ring of int32 workspace slots (see module doc)."""

    Arguments = GroupedMatmulSliceMPerTokenDequantArguments
    Params = GroupedMatmulSliceMPerTokenDequantParams

    def __init__(self, block_mmad, block_epilogue, block_scheduler, workspace_stages: int = 2,
                 element_group_list="int64"):
        check_multistage("GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace", block_mmad, block_epilogue,
                         workspace_stages, plain_block_call=False)
        self.block_mmad = block_mmad
        self.block_epilogue = block_epilogue
        self.block_scheduler = block_scheduler
        self.element_group_list = dt.get_dtype(element_group_list)
        self.arch = block_mmad.arch
        self._init_ring(workspace_stages)

    # -- host side -------------------------------------------------------------------------------
    @staticmethod
    def can_implement(args: GroupedMatmulSliceMPerTokenDequantArguments) -> bool:
        """CATLASS ``CanImplement`` (always true; the ops layer validates user input)."""
        return True

    def to_underlying_arguments(self, args, workspace: GlobalTensor) -> GroupedMatmulSliceMPerTokenDequantParams:
        """CATLASS ``ToUnderlyingArguments``: build the full-problem layouts."""
        m, n, k = args.problem_shape
        layout_a, layout_b, _ = operand_layouts(self.block_mmad, m, n, k)
        layout_scale, layout_per_token_scale, layout_d = dequant_layouts(self.block_epilogue, m, n)
        return GroupedMatmulSliceMPerTokenDequantParams(
            GemmCoord(m, n, k), args.problem_count, args.ptr_group_list, args.ptr_a, layout_a, args.ptr_b, layout_b,
            args.ptr_scale, layout_scale, args.ptr_per_token_scale, layout_per_token_scale, args.ptr_d, layout_d,
            workspace,
        )

    # -- device side -----------------------------------------------------------------------------
    def aic(self, ctx, params: GroupedMatmulSliceMPerTokenDequantParams) -> None:
        """The cube-core program (``operator()<AIC>``)."""
        l1 = self.block_mmad.l1_tile_shape
        core_idx, core_num = ctx.block_idx, ctx.block_num
        gm_a = params.ptr_a
        gm_c = params.ptr_workspace.reinterpret(dt.INT32)
        layout_c = self._workspace_layout(core_num)
        deal = RoundRobinGroups(core_idx, core_num)
        offset_a_g = offset_b_g = 0
        prev = 0
        n, k = params.problem_shape.n, params.problem_shape.k
        slots = AicSlots(self, ctx)
        is_async = getattr(self.block_mmad, "ASYNC", False)
        with self.block_mmad(ctx.resource) as block_mmad:
            for g in range(params.problem_count):
                m_g, prev = group_size(ctx, params.ptr_group_list, g, prev)
                shape = GemmCoord(m_g, n, k)
                layout_a = params.layout_a.get_tile_layout(m_g, k)
                layout_b = params.layout_b
                scheduler = self.block_scheduler.update(shape, MatrixCoord(l1.m, l1.n))
                gm_b = params.ptr_b[offset_b_g]
                for loop in deal.loops(scheduler.get_core_loops()):
                    bc = scheduler.get_block_coord(loop)
                    actual = scheduler.get_actual_block_shape(bc)
                    stage_id, before, after = slots.next_block()
                    off_a, off_b = offset_a(layout_a, bc, l1), offset_b(layout_b, bc, l1)
                    off_c = self._slot_offset(layout_c, stage_id, core_idx, core_num)
                    ctx.mark("block", group=g, loop=loop, m_idx=bc.m, n_idx=bc.n, rows=actual.m, cols=actual.n,
                             row=prev - m_g + bc.m * l1.m, col=bc.n * l1.n, stage=stage_id)
                    call_block_mmad(block_mmad, is_async, (gm_a[offset_a_g + off_a], layout_a, gm_b[off_b], layout_b,
                                                           gm_c[off_c], layout_c, actual), (before, after))
                offset_a_g += m_g * k
                offset_b_g += k * n
            block_mmad.synchronize_block()
            slots.drain()
            ctx.pipe_barrier(Pipe.ALL)

    def aiv(self, ctx, params: GroupedMatmulSliceMPerTokenDequantParams) -> None:
        """The vector-core program (``operator()<AIV>``), run by both sub-blocks of every AI core."""
        l1 = self.block_mmad.l1_tile_shape
        stages = self.workspace_stages
        core_idx, core_num = ctx.ai_core_idx, ctx.block_num
        gm_c = params.ptr_workspace.reinterpret(dt.INT32)
        layout_c = self._workspace_layout(core_num)
        deal = RoundRobinGroups(core_idx, core_num)
        off_scale = off_pts = off_d = 0
        stage_id = prev = 0
        n, k = params.problem_shape.n, params.problem_shape.k
        block_shape = GemmCoord(l1.m, l1.n, l1.k)
        with self.block_epilogue(ctx.resource) as epilogue:
            for g in range(params.problem_count):
                m_g, prev = group_size(ctx, params.ptr_group_list, g, prev)
                shape = GemmCoord(m_g, n, k)
                epilogue.update_params(PerTokenDequantParams(
                    params.ptr_scale[off_scale], params.layout_scale,
                    params.ptr_per_token_scale[off_pts], params.layout_per_token_scale.get_tile_layout(m_g),
                    params.ptr_d[off_d], params.layout_d.get_tile_layout(m_g, n),
                ))
                scheduler = self.block_scheduler.update(shape, MatrixCoord(l1.m, l1.n))
                for loop in deal.loops(scheduler.get_core_loops()):
                    bc = scheduler.get_block_coord(loop)
                    actual = scheduler.get_actual_block_shape(bc)
                    gm_block_c = gm_c[self._slot_offset(layout_c, stage_id, core_idx, core_num)]
                    layout_block_c = layout_c.get_tile_layout(actual.m, actual.n)
                    self.aiv_wait_slot_stored(ctx, stage_id)
                    ctx.mark("epilogue_block", group=g, loop=loop, stage=stage_id)
                    epilogue(block_shape, bc, actual, gm_block_c, layout_block_c)
                    self.aiv_set_slot_free(ctx, stage_id)
                    stage_id = (stage_id + 1) % stages
                off_scale += n
                off_pts += m_g
                off_d += m_g * n
            ctx.pipe_barrier(Pipe.ALL)

    def total_blocks(self, group_list, n: int) -> int:
        """Blocks of the whole problem (for progress reporting): sum over groups of the scheduler's loops."""
        l1 = self.block_mmad.l1_tile_shape
        total, prev = 0, 0
        for v in group_list:
            m_g = int(v) - prev
            prev = int(v)
            total += block_count(l1, m_g, n)
        return total
