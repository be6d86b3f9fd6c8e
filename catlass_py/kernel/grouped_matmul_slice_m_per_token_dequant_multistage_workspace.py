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
``aiv_set_slot_free``, ``aic_drain_slot``), so that a subclass can drop exactly one synchronisation point
(DESIGN.md section 7 toggle tests) without copying the loops.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from catlass_py.arch.flags import CrossCoreFlag
from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.epilogue.block.per_token_dequant import BlockEpiloguePerTokenDequant, PerTokenDequantParams
from catlass_py.errors import ConfigError
from catlass_py.gemm.coord import GemmCoord, MatrixCoord, ceil_div
from catlass_py.layout import RowMajor, VectorLayout
from catlass_py.numerics import dtypes as dt

USER_FLAG_IDS = 8  # FFTS_MAX_FLAG + 1: ids 8..10 are CATLASS's reserved barrier flags


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


@dataclass(frozen=True)
class GroupedMatmulSliceMPerTokenDequantParams:
    """Device-side ``Params`` (``ToUnderlyingArguments``): pointers with the layouts the kernel builds."""

    problem_shape: GemmCoord
    problem_count: int
    ptr_group_list: GlobalTensor
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


class GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace:
    """CATLASS ``GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace<BlockMmad, BlockEpilogue,
    BlockScheduler, WORKSPACE_STAGES, ElementGroupList>``: int8 grouped matmul split along M with per-channel
    and per-token dequantisation, through a per-AI-core ring of int32 workspace slots (see module doc)."""

    Arguments = GroupedMatmulSliceMPerTokenDequantArguments
    Params = GroupedMatmulSliceMPerTokenDequantParams

    def __init__(self, block_mmad, block_epilogue, block_scheduler, workspace_stages: int = 2,
                 element_group_list="int64"):
        what = "GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace"
        if isinstance(workspace_stages, bool) or not isinstance(workspace_stages, int) or workspace_stages < 1:
            raise ConfigError(f"{what}: WORKSPACE_STAGES must be an int >= 1, got {workspace_stages!r}")
        if 2 * workspace_stages > USER_FLAG_IDS:
            raise ConfigError(
                f"{what}: {workspace_stages} workspace stages need {2 * workspace_stages} cross-core flag ids but only "
                f"{USER_FLAG_IDS} (0..7) are free of CATLASS's reserved barrier ids"
            )
        if not isinstance(block_epilogue, BlockEpiloguePerTokenDequant):
            raise ConfigError(f"{what}: BlockEpilogue must be the per-token-dequant epilogue, got {block_epilogue!r}")
        if getattr(block_mmad, "ASYNC", False) and not getattr(block_mmad, "WITH_CALLBACK", False):
            raise ConfigError(
                f"{what}: an async BlockMmad must take callbacks before and after its fixpipe "
                f"(MmadAtlasA2PreloadAsyncWithCallback); {type(block_mmad.policy).__name__} takes one"
            )
        if block_mmad.element_c != dt.INT32 or block_mmad.c_type.layout is not RowMajor:
            raise ConfigError(f"{what}: the workspace holds RowMajor int32 C blocks; BlockMmad's CType is {block_mmad.c_type}")
        if block_epilogue.c_type.element != block_mmad.element_c:
            raise ConfigError(f"{what}: BlockEpilogue reads {block_epilogue.c_type.element} but BlockMmad writes {block_mmad.element_c}")
        if block_mmad.arch != block_epilogue.arch:
            raise ConfigError(f"{what}: BlockMmad targets {block_mmad.arch.name}, BlockEpilogue {block_epilogue.arch.name}")
        self.block_mmad = block_mmad
        self.block_epilogue = block_epilogue
        self.block_scheduler = block_scheduler
        self.workspace_stages = workspace_stages
        self.element_group_list = dt.get_dtype(element_group_list)
        self.arch = block_mmad.arch
        self.flag_aic_finish_store = [CrossCoreFlag(2 * s) for s in range(workspace_stages)]
        self.flag_aiv_finish_compute = [CrossCoreFlag(2 * s + 1) for s in range(workspace_stages)]

    # -- host side -------------------------------------------------------------------------------
    @staticmethod
    def can_implement(args: GroupedMatmulSliceMPerTokenDequantArguments) -> bool:
        """CATLASS ``CanImplement`` (always true; the ops layer validates user input)."""
        return True

    def get_workspace_size(self, args: GroupedMatmulSliceMPerTokenDequantArguments) -> int:
        """``L1.M * L1.N * aicCoreNum * WORKSPACE_STAGES * 4`` bytes, independent of the problem."""
        l1 = self.block_mmad.l1_tile_shape
        return l1.m * l1.n * args.aic_core_num * self.workspace_stages * 4

    def to_underlying_arguments(self, args, workspace: GlobalTensor) -> GroupedMatmulSliceMPerTokenDequantParams:
        """CATLASS ``ToUnderlyingArguments``: build the full-problem layouts."""
        m, n, k = args.problem_shape
        mmad, epi = self.block_mmad, self.block_epilogue
        return GroupedMatmulSliceMPerTokenDequantParams(
            GemmCoord(m, n, k), args.problem_count, args.ptr_group_list,
            args.ptr_a, mmad.a_type.layout.make_layout(mmad.element_a, m, k),
            args.ptr_b, mmad.b_type.layout.make_layout(mmad.element_b, k, n),
            args.ptr_scale, VectorLayout(n), args.ptr_per_token_scale, VectorLayout(m),
            args.ptr_d, RowMajor.make_layout(epi.d_type.element, m, n), workspace,
        )

    # -- synchronisation points (one method each, so that a test can remove exactly one) -----------
    def aic_wait_slot_free(self, ctx, stage: int) -> None:
        """AIC, right before a block's fixpipe overwrites workspace slot ``stage`` (its 2nd and later use):
        wait until both AIVs finished the block they read from it (``aicWaitFunc``)."""
        ctx.cross_core_wait_flag(self.flag_aiv_finish_compute[stage])

    def aic_set_slot_stored(self, ctx, stage: int) -> None:
        """AIC, right after a block's fixpipe: tell both AIVs slot ``stage`` holds C (``aicSetFunc``, mode 2,
        issued on PIPE_FIX so that it follows the store)."""
        ctx.cross_core_set_flag(self.flag_aic_finish_store[stage], 2, Pipe.FIX)

    def aic_drain_slot(self, ctx, stage: int) -> None:
        """AIC, at the end: consume the AIVs' last "computed" signal of slot ``stage``."""
        ctx.cross_core_wait_flag(self.flag_aiv_finish_compute[stage])

    def aiv_wait_slot_stored(self, ctx, stage: int) -> None:
        """AIV, before reading workspace slot ``stage``: wait for the AIC's "stored" signal."""
        ctx.cross_core_wait_flag(self.flag_aic_finish_store[stage])

    def aiv_set_slot_free(self, ctx, stage: int) -> None:
        """AIV, after its D stores of the block: release slot ``stage`` (mode 2 on PIPE_MTE3; the AIC sees it
        once both AIVs have set)."""
        ctx.cross_core_set_flag(self.flag_aiv_finish_compute[stage], 2, Pipe.MTE3)

    # -- device side -----------------------------------------------------------------------------
    def _group_m(self, ctx, params, g: int, prev: int) -> tuple[int, int]:
        """Rows of group g (``groupList.GetValue``: scalar GM reads) and the new prefix value."""
        gl = params.ptr_group_list
        value = int(gl.view(g + 1)[g])
        if ctx.bus.instructions:
            ctx.emit(Pipe.S, "GetValue", gm_reads=(gl.access(g, 1),))
        return value - prev, value

    def _workspace_layout(self, core_num: int) -> RowMajor:
        l1 = self.block_mmad.l1_tile_shape
        return RowMajor(l1.m * core_num * self.workspace_stages, l1.n)

    def aic(self, ctx, params: GroupedMatmulSliceMPerTokenDequantParams) -> None:
        """The cube-core program (``operator()<AIC>``)."""
        l1 = self.block_mmad.l1_tile_shape
        stages = self.workspace_stages
        core_idx, core_num = ctx.block_idx, ctx.block_num
        gm_a = params.ptr_a
        gm_c = params.ptr_workspace.reinterpret(dt.INT32)
        layout_c = self._workspace_layout(core_num)
        offset_a = offset_b = 0
        stage_id = stage_used = start_core = 0
        prev = 0
        n, k = params.problem_shape.n, params.problem_shape.k
        wait_free = [partial(self.aic_wait_slot_free, ctx, s) for s in range(stages)]
        set_stored = [partial(self.aic_set_slot_stored, ctx, s) for s in range(stages)]
        is_async = getattr(self.block_mmad, "ASYNC", False)
        with self.block_mmad(ctx.resource) as block_mmad:
            for g in range(params.problem_count):
                m_g, prev = self._group_m(ctx, params, g, prev)
                shape = GemmCoord(m_g, n, k)
                layout_a = params.layout_a.get_tile_layout(m_g, k)
                layout_b = params.layout_b
                scheduler = self.block_scheduler.update(shape, MatrixCoord(l1.m, l1.n))
                core_loops = scheduler.get_core_loops()
                gm_b = params.ptr_b[offset_b]
                start_loop = (core_idx + core_num if core_idx < start_core else core_idx) - start_core
                for loop in range(start_loop, core_loops, core_num):
                    bc = scheduler.get_block_coord(loop)
                    actual = scheduler.get_actual_block_shape(bc)
                    if stage_used == stages:
                        before = wait_free[stage_id]
                    else:
                        before = None
                        stage_used += 1
                    after = set_stored[stage_id]
                    off_a = layout_a.offset(bc.m * l1.m, bc.k * l1.k)
                    off_b = layout_b.offset(bc.k * l1.k, bc.n * l1.n)
                    off_c = layout_c.offset((stage_id * core_num + core_idx) * l1.m, 0)
                    ctx.mark("block", group=g, loop=loop, m_idx=bc.m, n_idx=bc.n, rows=actual.m, cols=actual.n,
                             row=prev - m_g + bc.m * l1.m, col=bc.n * l1.n, stage=stage_id)
                    if is_async:
                        block_mmad(gm_a[offset_a + off_a], layout_a, gm_b[off_b], layout_b, gm_c[off_c], layout_c,
                                   actual, before, after)
                    else:
                        if before is not None:
                            before()
                        block_mmad(gm_a[offset_a + off_a], layout_a, gm_b[off_b], layout_b, gm_c[off_c], layout_c, actual)
                        after()
                    stage_id = (stage_id + 1) % stages
                offset_a += m_g * k
                offset_b += k * n
                start_core = (start_core + core_loops) % core_num
            block_mmad.synchronize_block()
            while stage_used > 0:
                self.aic_drain_slot(ctx, (stage_id - stage_used) % stages)
                stage_used -= 1
            ctx.pipe_barrier(Pipe.ALL)

    def aiv(self, ctx, params: GroupedMatmulSliceMPerTokenDequantParams) -> None:
        """The vector-core program (``operator()<AIV>``), run by both sub-blocks of every AI core."""
        l1 = self.block_mmad.l1_tile_shape
        stages = self.workspace_stages
        core_idx, core_num = ctx.ai_core_idx, ctx.block_num
        gm_c = params.ptr_workspace.reinterpret(dt.INT32)
        layout_c = self._workspace_layout(core_num)
        off_scale = off_pts = off_d = 0
        stage_id = start_core = prev = 0
        n, k = params.problem_shape.n, params.problem_shape.k
        block_shape = GemmCoord(l1.m, l1.n, l1.k)
        with self.block_epilogue(ctx.resource) as epilogue:
            for g in range(params.problem_count):
                m_g, prev = self._group_m(ctx, params, g, prev)
                shape = GemmCoord(m_g, n, k)
                epilogue.update_params(PerTokenDequantParams(
                    params.ptr_scale[off_scale], params.layout_scale,
                    params.ptr_per_token_scale[off_pts], params.layout_per_token_scale.get_tile_layout(m_g),
                    params.ptr_d[off_d], params.layout_d.get_tile_layout(m_g, n),
                ))
                scheduler = self.block_scheduler.update(shape, MatrixCoord(l1.m, l1.n))
                core_loops = scheduler.get_core_loops()
                start_loop = (core_idx + core_num if core_idx < start_core else core_idx) - start_core
                for loop in range(start_loop, core_loops, core_num):
                    bc = scheduler.get_block_coord(loop)
                    actual = scheduler.get_actual_block_shape(bc)
                    gm_block_c = gm_c[layout_c.offset((stage_id * core_num + core_idx) * l1.m, 0)]
                    layout_block_c = layout_c.get_tile_layout(actual.m, actual.n)
                    self.aiv_wait_slot_stored(ctx, stage_id)
                    ctx.mark("epilogue_block", group=g, loop=loop, stage=stage_id)
                    epilogue(block_shape, bc, actual, gm_block_c, layout_block_c)
                    self.aiv_set_slot_free(ctx, stage_id)
                    stage_id = (stage_id + 1) % stages
                off_scale += n
                off_pts += m_g
                off_d += m_g * n
                start_core = (start_core + core_loops) % core_num
            ctx.pipe_barrier(Pipe.ALL)

    def total_blocks(self, group_list, n: int) -> int:
        """Blocks of the whole problem (for progress reporting): sum over groups of the scheduler's loops."""
        l1 = self.block_mmad.l1_tile_shape
        total, prev = 0, 0
        for v in group_list:
            m_g = int(v) - prev
            prev = int(v)
            total += ceil_div(m_g, l1.m) * ceil_div(n, l1.n)
        return total
