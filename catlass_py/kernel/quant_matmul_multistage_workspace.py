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
from catlass_py.kernel.matmul_epilogue import check_plain_block_call
from catlass_py.layout import RowMajor, VectorLayout
from catlass_py.numerics import dtypes as dt

USER_FLAG_IDS = 8  # FFTS_MAX_FLAG + 1: ids 8..10 are CATLASS's reserved barrier flags


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


def check_multistage(what: str, block_mmad, block_epilogue, workspace_stages) -> None:
    """Assembly rules shared by the multi-stage-workspace kernels (example 10 and 12)."""
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
    check_plain_block_call(what, block_mmad)
    if block_mmad.element_c != dt.INT32 or block_mmad.c_type.layout is not RowMajor:
        raise ConfigError(
            f"{what}: the workspace holds RowMajor int32 C blocks; BlockMmad's CType is {block_mmad.c_type}")
    if block_epilogue.c_type.element != block_mmad.element_c:
        raise ConfigError(
            f"{what}: BlockEpilogue reads {block_epilogue.c_type.element} but BlockMmad writes {block_mmad.element_c}")
    if block_mmad.arch != block_epilogue.arch:
        raise ConfigError(f"{what}: BlockMmad targets {block_mmad.arch.name}, BlockEpilogue {block_epilogue.arch.name}")


class QuantMatmulMultiStageWorkspace:
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
        self.workspace_stages = workspace_stages
        self.arch = block_mmad.arch
        self.flag_aic_finish_store = [CrossCoreFlag(2 * s) for s in range(workspace_stages)]
        self.flag_aiv_finish_compute = [CrossCoreFlag(2 * s + 1) for s in range(workspace_stages)]

    # -- host side -------------------------------------------------------------------------------
    @staticmethod
    def can_implement(args: QuantMatmulArguments) -> bool:
        """CATLASS ``CanImplement`` (always true; the ops layer validates user input)."""
        return True

    def get_workspace_size(self, args: QuantMatmulArguments) -> int:
        """``L1.M * L1.N * aicCoreNum * WORKSPACE_STAGES * sizeof(uint32)`` bytes, independent of the problem."""
        l1 = self.block_mmad.l1_tile_shape
        return l1.m * l1.n * args.aic_core_num * self.workspace_stages * 4

    def to_underlying_arguments(self, args: QuantMatmulArguments, workspace: GlobalTensor) -> QuantMatmulParams:
        """CATLASS ``ToUnderlyingArguments``: the full-problem layouts."""
        m, n, k = args.problem_shape
        mmad, epi = self.block_mmad, self.block_epilogue
        return QuantMatmulParams(
            GemmCoord(m, n, k),
            args.ptr_a, mmad.a_type.layout.make_layout(mmad.element_a, m, k),
            args.ptr_b, mmad.b_type.layout.make_layout(mmad.element_b, k, n),
            args.ptr_scale, VectorLayout(n), args.ptr_per_token_scale, VectorLayout(m),
            args.ptr_d, RowMajor.make_layout(epi.d_type.element, m, n), workspace,
        )

    # -- device side -----------------------------------------------------------------------------
    def _workspace_layout(self, core_num: int) -> RowMajor:
        l1 = self.block_mmad.l1_tile_shape
        return RowMajor(l1.m * core_num * self.workspace_stages, l1.n)

    def _scheduler(self, params):
        l1 = self.block_mmad.l1_tile_shape
        return self.block_scheduler.update(params.problem_shape, MatrixCoord(l1.m, l1.n))

    def aic(self, ctx, params: QuantMatmulParams) -> None:
        """The cube-core program (``operator()<AIC>``)."""
        l1 = self.block_mmad.l1_tile_shape
        stages = self.workspace_stages
        core_idx, core_num = ctx.block_idx, ctx.block_num
        scheduler = self._scheduler(params)
        core_loops = scheduler.get_core_loops()
        gm_c = params.ptr_workspace.reinterpret(dt.INT32)
        layout_c = self._workspace_layout(core_num)
        wait_free = [partial(ctx.cross_core_wait_flag, f) for f in self.flag_aiv_finish_compute]
        set_stored = [partial(ctx.cross_core_set_flag, f, 2, Pipe.FIX) for f in self.flag_aic_finish_store]
        is_async = getattr(self.block_mmad, "ASYNC", False)
        stage_id = stage_used = 0
        with self.block_mmad(ctx.resource) as block_mmad:
            for loop in range(core_idx, core_loops, core_num):
                bc = scheduler.get_block_coord(loop)
                actual = scheduler.get_actual_block_shape(bc)
                if stage_used == stages:
                    before = wait_free[stage_id]
                else:
                    before = None
                    stage_used += 1
                after = set_stored[stage_id]
                off_a = params.layout_a.offset(bc.m * l1.m, bc.k * l1.k)
                off_b = params.layout_b.offset(bc.k * l1.k, bc.n * l1.n)
                off_c = layout_c.offset((stage_id * core_num + core_idx) * l1.m, 0)
                ctx.mark("block", loop=loop, m_idx=bc.m, n_idx=bc.n, row=bc.m * l1.m, col=bc.n * l1.n,
                         rows=actual.m, cols=actual.n, stage=stage_id)
                if is_async:
                    block_mmad(params.ptr_a[off_a], params.layout_a, params.ptr_b[off_b], params.layout_b,
                               gm_c[off_c], layout_c, actual, before, after)
                else:
                    if before is not None:
                        before()
                    block_mmad(params.ptr_a[off_a], params.layout_a, params.ptr_b[off_b], params.layout_b,
                               gm_c[off_c], layout_c, actual)
                    after()
                stage_id = (stage_id + 1) % stages
            block_mmad.synchronize_block()
            while stage_used > 0:
                ctx.cross_core_wait_flag(self.flag_aiv_finish_compute[(stage_id - stage_used) % stages])
                stage_used -= 1
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
                gm_block_c = gm_c[layout_c.offset((stage_id * core_num + core_idx) * l1.m, 0)]
                layout_block_c = layout_c.get_tile_layout(actual.m, actual.n)
                ctx.cross_core_wait_flag(self.flag_aic_finish_store[stage_id])
                ctx.mark("epilogue_block", loop=loop, stage=stage_id)
                epilogue(block_shape, bc, actual, gm_block_c, layout_block_c)
                ctx.cross_core_set_flag(self.flag_aiv_finish_compute[stage_id], 2, Pipe.MTE3)
                stage_id = (stage_id + 1) % stages
            ctx.pipe_barrier(Pipe.ALL)

    def total_blocks(self, problem_shape) -> int:
        """Blocks of the problem (for progress reporting)."""
        l1 = self.block_mmad.l1_tile_shape
        m, n, _ = problem_shape
        return ceil_div(m, l1.m) * ceil_div(n, l1.n)


__all__ = ["QuantMatmulArguments", "QuantMatmulMultiStageWorkspace", "QuantMatmulParams", "check_multistage"]
