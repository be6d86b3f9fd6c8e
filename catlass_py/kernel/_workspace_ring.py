"""The per-AI-core ring of int32 workspace slots of CATLASS's multi-stage-workspace kernels (examples 10 and 12:
``grouped_matmul_slice_m_per_token_dequant_multistage_workspace.hpp``, ``quant_matmul_multistage_workspace.hpp``).

The cube core of AI core c stores block b of C into slot ``s = b % WORKSPACE_STAGES`` of its own ring
(``L1.M x L1.N`` int32 at rows ``(s * cores + c) * L1.M`` of the workspace); its two vector cores dequantise the
block from there. Flags per slot: AicFinishStore[s] = 2s, AivFinishCompute[s] = 2s + 1. Each synchronisation
point is one method (``aic_wait_slot_free``, ``aic_set_slot_stored``, ``aic_drain_slot``,
``aiv_wait_slot_stored``, ``aiv_set_slot_free``), so that a subclass can drop exactly one of them (DESIGN.md
section 7 toggle tests) without copying the loops.
"""

from __future__ import annotations

from functools import partial

from catlass_py.arch.flags import CrossCoreFlag
from catlass_py.arch.pipes import Pipe
from catlass_py.epilogue.block.per_token_dequant import BlockEpiloguePerTokenDequant
from catlass_py.errors import ConfigError
from catlass_py.kernel._common import check_plain_block_call
from catlass_py.layout import RowMajor
from catlass_py.numerics import dtypes as dt

USER_FLAG_IDS = 8  # FFTS_MAX_FLAG + 1: ids 8..10 are CATLASS's reserved barrier flags


def check_multistage(what: str, block_mmad, block_epilogue, workspace_stages, *, plain_block_call: bool = True) -> None:
    """Assembly rules shared by the multi-stage-workspace kernels (example 10 and 12). Example 10's kernel has
    never checked the call signature of a synchronous BlockMmad (``plain_block_call=False`` keeps it so)."""
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
    if plain_block_call:
        check_plain_block_call(what, block_mmad)
    if block_mmad.element_c != dt.INT32 or block_mmad.c_type.layout is not RowMajor:
        raise ConfigError(
            f"{what}: the workspace holds RowMajor int32 C blocks; BlockMmad's CType is {block_mmad.c_type}")
    if block_epilogue.c_type.element != block_mmad.element_c:
        raise ConfigError(
            f"{what}: BlockEpilogue reads {block_epilogue.c_type.element} but BlockMmad writes {block_mmad.element_c}")
    if block_mmad.arch != block_epilogue.arch:
        raise ConfigError(f"{what}: BlockMmad targets {block_mmad.arch.name}, BlockEpilogue {block_epilogue.arch.name}")


class WorkspaceRing:
    """Mixin of the multi-stage-workspace kernels: the ring's flags, its five synchronisation points, its size
    and layout. The kernel sets ``block_mmad`` and calls :meth:`_init_ring`."""

    def _init_ring(self, workspace_stages: int) -> None:
        self.workspace_stages = workspace_stages
        self.flag_aic_finish_store = [CrossCoreFlag(2 * s) for s in range(workspace_stages)]
        self.flag_aiv_finish_compute = [CrossCoreFlag(2 * s + 1) for s in range(workspace_stages)]

    def get_workspace_size(self, args) -> int:
        """``L1.M * L1.N * aicCoreNum * WORKSPACE_STAGES * sizeof(int32)`` bytes, independent of the problem."""
        l1 = self.block_mmad.l1_tile_shape
        return l1.m * l1.n * args.aic_core_num * self.workspace_stages * 4

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
    def _workspace_layout(self, core_num: int) -> RowMajor:
        l1 = self.block_mmad.l1_tile_shape
        return RowMajor(l1.m * core_num * self.workspace_stages, l1.n)

    def _slot_offset(self, layout_c: RowMajor, stage: int, core_idx: int, core_num: int) -> int:
        """Element offset of AI core ``core_idx``'s slot ``stage`` in the workspace."""
        return layout_c.offset((stage * core_num + core_idx) * self.block_mmad.l1_tile_shape.m, 0)


class AicSlots:
    """The AIC side of the ring on one core (CATLASS ``stageId`` / ``stageUsed``): which slot the next block
    goes to, and how many slots hold blocks the AIVs may still be reading."""

    def __init__(self, kernel: WorkspaceRing, ctx):
        self.kernel, self.ctx = kernel, ctx
        self.stages = stages = kernel.workspace_stages
        self.wait_free = [partial(kernel.aic_wait_slot_free, ctx, s) for s in range(stages)]
        self.set_stored = [partial(kernel.aic_set_slot_stored, ctx, s) for s in range(stages)]
        self.stage_id = self.stage_used = 0

    def next_block(self) -> tuple:
        """``(slot, before, after)`` of the next block: its fixpipe waits until the AIVs freed the slot (only
        from the slot's second use on; ``before`` is None before that) and signals "stored" after."""
        stage = self.stage_id
        if self.stage_used == self.stages:
            before = self.wait_free[stage]
        else:
            before = None
            self.stage_used += 1
        self.stage_id = (stage + 1) % self.stages
        return stage, before, self.set_stored[stage]

    def drain(self) -> None:
        """At the end (after ``SynchronizeBlock``): consume the AIVs' last signal of every used slot, oldest
        first."""
        while self.stage_used > 0:
            self.kernel.aic_drain_slot(self.ctx, (self.stage_id - self.stage_used) % self.stages)
            self.stage_used -= 1


__all__ = ["AicSlots", "USER_FLAG_IDS", "WorkspaceRing", "check_multistage"]
