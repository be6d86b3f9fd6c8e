"""The skeleton of CATLASS's mix kernels that hand C blocks from the cube cores to the vector cores through a GM
workspace: the grouped per-token-dequant kernels (examples 07, 10, 11) and the multi-stage-workspace kernels
(examples 10, 12).

The cube core of every AI core walks the blocks of every group (:class:`RoundRobinGroups`: all groups' blocks
in one sequence dealt over the cores), computes each int32 block of C with the BlockMmad and stores it into
the workspace; the two vector cores of the same AI core run the block epilogue on it (dequantise it into D).
Two things vary, and a kernel states them when it is assembled:

**Where a block lives and how it is handed over** (``workspace_stages``):

* ``None`` - a *full-size* workspace: C of every group at its own place, so the cube never waits for the
  vector cores; one flag with back-pressure (``CrossCoreFlagWithReverse``, flag 0, reverse flag 1): the AIC
  sets it after each block's fixpipe (a BlockMmad callback; :meth:`~WorkspaceEpilogueKernel.aic_set_block_stored`),
  the epilogue waits for it before reading a block with k > 0 (its callback;
  :meth:`~WorkspaceEpilogueKernel.aiv_wait_block_stored`). Examples 07 and 11.
* ``S >= 1`` - a *ring* of S slots per AI core: block b of a core goes to slot ``b % S`` (``L1.M x L1.N`` int32
  at rows ``(s * cores + core) * L1.M`` of the workspace). Flags per slot: AicFinishStore[s] = 2s,
  AivFinishCompute[s] = 2s + 1. Examples 10 and 12:

  ======================  ==========================================  ==================================
  who                     when                                        method (flag operation)
  ======================  ==========================================  ==================================
  AIC, block b >= S       right before b's fixpipe (callback)          ``aic_wait_slot_free`` (wait 2s+1)
  AIC, every block        right after b's fixpipe (callback)           ``aic_set_slot_stored`` (set 2s, mode 2)
  AIV, every block        before reading slot s                        ``aiv_wait_slot_stored`` (wait 2s)
  AIV, every block        after its D stores                           ``aiv_set_slot_free`` (set 2s+1, mode 2)
  AIC, the end            after synchronize_block, oldest slot first   ``aic_drain_slot`` (wait 2s+1)
  ======================  ==========================================  ==================================

  Each synchronisation point is one method, so that a subclass can drop exactly one of them.

**How the problem splits into groups** (``group_walk``): :data:`SLICE_M` (groups slice the rows of A and D;
prefix sums over m read from the group list with ``GetValue``), :data:`SLICE_K` (groups slice K; D is
``[G, m, n]``) or :data:`ONE_GROUP` (a single problem).

**The block epilogue** can be any object with this protocol (the per-token-dequant epilogue,
:class:`~catlass_py.epilogue.BlockEpiloguePerTokenDequant`, is one):

* ``arch`` (the ArchSpec), ``c_type`` (a GemmType: the int32 RowMajor C blocks it reads), ``d_type`` (the
  GemmType of D), ``Params`` (a type
  taking ``(ptr_scale, layout_scale, ptr_per_token_scale, layout_per_token_scale, ptr_d, layout_d)``: the
  kernel builds one per group with the group's pointers, CATLASS's ``BlockEpilogue::Params{...}``);
* ``block_epilogue(resource)`` -> the per-core instance, used as a context manager (leaving it is the C++
  destructor), with ``update_params(params)`` and
  ``instance(block_shape, block_coord, actual_block_shape, gm_block_c, layout_block_c[, callback])``: process
  one block of C (``callback``, given with the full-size workspace, waits until the block is stored; the
  epilogue calls it before reading the block).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Iterator

import numpy as np

from catlass_py.arch.cross_core_sync import (
    CrossCoreFlagWithReverse,
    cross_core_set_flag_with_reverse,
    cross_core_wait_flag_with_reverse,
)
from catlass_py.arch.events import ObserverBus
from catlass_py.arch.flags import CrossCoreFlag
from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.errors import CatlassError, ConfigError
from catlass_py.gemm.block.capabilities import PLAIN_CALL, BlockMmadRequirement
from catlass_py.gemm.block.swizzle import GemmIdentityBlockSwizzle
from catlass_py.gemm.coord import GemmCoord, MatrixCoord
from catlass_py.integers import is_int
from catlass_py.kernel.gemm_kernel import GemmKernel, block_count, offset_a, offset_b, offset_c, operand_layouts
from catlass_py.kernel.grouped import RoundRobinGroups, get_value, get_values
from catlass_py.layout import RowMajor, VectorLayout
from catlass_py.numerics import dtypes as dt

USER_FLAG_IDS = 8  # FFTS_MAX_FLAG + 1: ids 8..10 are CATLASS's reserved barrier flags
FLAG_AIC_FINISH_STORE = 0  # the full-size workspace's flag and reverse flag
RV_FLAG_AIC_FINISH_STORE = 1
_MISSING = object()

# -- how the problem splits into groups ---------------------------------------------------------------


@dataclass(frozen=True)
class GemmGroup:
    """One group of a grouped problem, as the kernel walks it on a core: its index (None for a single problem),
    shape (m, n, k), the layouts of its A and B, where its A and B start in the full tensors (elements), and
    ``row``: its first row in the row space of the workspace's C and of D (D_g of a slice-K problem starts at
    row g * m of the stacked ``[G * m, n]``)."""

    index: int | None
    shape: GemmCoord
    layout_a: Any
    layout_b: Any
    offset_a: int
    offset_b: int
    row: int


def params_memo(ctx, what: str, params) -> dict:
    """A dict shared by the launch's cores for what they derive alike from ``params`` (``what`` names the
    use): the launch's memo (``CoreContext.launch_shared``) keyed by the params object itself."""
    return ctx.launch_shared(what, params, dict)


class GroupWalk:
    """How a problem splits into groups: :meth:`groups` on a core (reading the group list from GM), and
    :meth:`shapes` on the host (for the block count)."""

    grouped = True

    def groups(self, ctx, params) -> Iterator[GemmGroup]:  # pragma: no cover - every walk overrides it
        raise NotImplementedError

    def shapes(self, problem_shape, group_list) -> list[GemmCoord]:  # pragma: no cover
        raise NotImplementedError

    def read(self, ctx, params, g: int) -> None:
        """Group ``g``'s read of the group list on ``ctx`` (what :meth:`groups` does first for each group), for a
        core that takes its blocks from the launch's walk table."""
        get_value(ctx, params.ptr_group_list, g)

    def reads(self, ctx, params, start: int, stop: int) -> None:
        """:meth:`read` of the groups ``start .. stop - 1`` in order (one replay of the read's template for all of
        them when the core has it, :func:`~catlass_py.kernel.grouped.get_values`)."""
        if type(self).read is GroupWalk.read:
            get_values(ctx, params.ptr_group_list, start, stop)
        else:
            for g in range(start, stop):
                self.read(ctx, params, g)


class _QuietCore:
    """A core as :meth:`GroupWalk.groups` uses it, whose group-list reads publish nothing: the view the launch's
    walk table is made through (each core publishes its own reads, see ``blocks``)."""

    bus = ObserverBus(())

    def __init__(self, ctx):
        self._ctx = ctx

    def launch_shared(self, what, owner, make):
        return self._ctx.launch_shared(what, owner, make)


class SliceMGroups(GroupWalk):
    """Groups slice the rows of A [m, k] and D [m, n] (the group list holds prefix sums over m); B is [G, k, n]."""

    def groups(self, ctx, params) -> Iterator[GemmGroup]:
        _, n, k = params.problem_shape
        memo = params_memo(ctx, "slice-m groups", params)  # every core reads the same list: one GemmGroup each
        prev = 0
        for g in range(params.problem_count):
            value = get_value(ctx, params.ptr_group_list, g)
            group = memo.get((g, prev, value))
            if group is None:
                m_g = value - prev
                group = memo[(g, prev, value)] = GemmGroup(
                    g, GemmCoord(m_g, n, k), params.layout_a.get_tile_layout(m_g, k), params.layout_b, prev * k,
                    g * k * n, prev)
            yield group
            prev = value

    def shapes(self, problem_shape, group_list) -> list[GemmCoord]:
        _, n, k = problem_shape
        values = [0] + [int(v) for v in group_list]
        return [GemmCoord(b - a, n, k) for a, b in zip(values, values[1:])]


class SliceKGroups(GroupWalk):
    """Groups slice K (the group list holds prefix sums over k): A [m, K] column-major and B [K, n] row-major,
    so a group's slabs are contiguous; D is ``[G, m, n]``."""

    def groups(self, ctx, params) -> Iterator[GemmGroup]:
        m, n, _ = params.problem_shape
        memo = params_memo(ctx, "slice-k groups", params)  # every core reads the same list: one GemmGroup each
        prev = 0
        for g in range(params.problem_count):
            value = get_value(ctx, params.ptr_group_list, g)
            group = memo.get((g, prev, value))
            if group is None:
                k_g = value - prev
                group = memo[(g, prev, value)] = GemmGroup(
                    g, GemmCoord(m, n, k_g), params.layout_a.get_tile_layout(m, k_g),
                    params.layout_b.get_tile_layout(k_g, n), m * prev, prev * n, g * m)
            yield group
            prev = value

    def shapes(self, problem_shape, group_list) -> list[GemmCoord]:
        m, n, _ = problem_shape
        values = [0] + [int(v) for v in group_list]
        return [GemmCoord(m, n, b - a) for a, b in zip(values, values[1:])]


class OneGroup(GroupWalk):
    """A single problem (no group list)."""

    grouped = False

    def groups(self, ctx, params) -> Iterator[GemmGroup]:
        yield GemmGroup(None, GemmCoord(*params.problem_shape), params.layout_a, params.layout_b, 0, 0, 0)

    def shapes(self, problem_shape, group_list=None) -> list[GemmCoord]:
        return [GemmCoord(*problem_shape)]


SLICE_M, SLICE_K, ONE_GROUP = SliceMGroups(), SliceKGroups(), OneGroup()


# -- the ring's AIC side on one core ------------------------------------------------------------------


class AicSlots:
    """The AIC side of the ring on one core (CATLASS ``stageId`` / ``stageUsed``): which slot the next block
    goes to, and how many slots hold blocks the AIVs may still be reading."""

    def __init__(self, kernel: "WorkspaceEpilogueKernel", ctx):
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


# -- the skeleton ------------------------------------------------------------------------------------


class WorkspaceEpilogueKernel(GemmKernel):
    """Skeleton of the kernels whose cube cores store int32 C blocks into a GM workspace and whose vector cores
    run a block epilogue on each (see the module doc). A kernel sets ``group_walk`` and ``Arguments``/``Params``
    and builds its ``Params`` in ``to_underlying_arguments``; the skeleton checks the assembly, sizes the ring,
    and runs both core programs.

    Assembly checks: ``workspace_stages`` is None or an int >= 1 whose 2 flags per slot fit the 8 user flag
    ids; the BlockMmad has the plain call and, if asynchronous, takes one callback (full-size workspace) or two
    (ring); it stores RowMajor int32 C; the epilogue has the protocol of the module doc, reads that C and
    targets the same arch; the group list element is a 32- or 64-bit integer."""

    group_walk: GroupWalk = ONE_GROUP

    def __init__(self, block_mmad, block_epilogue, block_scheduler, *, workspace_stages: int | None = None,
                 element_group_list=None):
        what = self.kernel_name()
        if workspace_stages is not None:
            if not is_int(workspace_stages) or workspace_stages < 1:
                raise ConfigError(f"{what}: WORKSPACE_STAGES must be an int >= 1, got {workspace_stages!r}")
            workspace_stages = int(workspace_stages)
            if 2 * workspace_stages > USER_FLAG_IDS:
                raise ConfigError(
                    f"{what}: {workspace_stages} workspace stages need {2 * workspace_stages} cross-core flag ids but "
                    f"only {USER_FLAG_IDS} (0..7) are free of CATLASS's reserved barrier ids")
        self.workspace_stages = workspace_stages
        super().__init__(block_mmad, block_epilogue, block_scheduler)
        if block_mmad.element_c != dt.INT32 or block_mmad.c_type.layout is not RowMajor:
            raise ConfigError(f"{what}: the workspace holds RowMajor int32 C blocks; BlockMmad's CType is "
                              f"{block_mmad.c_type}")
        if block_epilogue.c_type.element != block_mmad.element_c:
            raise ConfigError(f"{what}: BlockEpilogue reads {block_epilogue.c_type.element} but BlockMmad writes "
                              f"{block_mmad.element_c}")
        if block_mmad.arch != block_epilogue.arch:
            raise ConfigError(
                f"{what}: BlockMmad targets {block_mmad.arch.name}, BlockEpilogue {block_epilogue.arch.name}")
        self.element_group_list = None
        if element_group_list is not None:
            egl = dt.get_dtype(element_group_list)
            if egl.kind not in ("int", "uint") or egl.bits not in (32, 64):
                raise ConfigError(f"{what}: ElementGroupList must be a 32- or 64-bit integer type, got {egl}")
            self.element_group_list = egl
        if workspace_stages is None:
            self.flag_aic_finish_store = CrossCoreFlagWithReverse(FLAG_AIC_FINISH_STORE, RV_FLAG_AIC_FINISH_STORE)
        else:
            self.flag_aic_finish_store = [CrossCoreFlag(2 * s) for s in range(workspace_stages)]
            self.flag_aiv_finish_compute = [CrossCoreFlag(2 * s + 1) for s in range(workspace_stages)]

    @property
    def block_mmad_needs(self) -> BlockMmadRequirement:
        """The plain call; an asynchronous block must take the callbacks the kernel runs around each fixpipe."""
        if self.workspace_stages is None:
            return BlockMmadRequirement(PLAIN_CALL, callbacks=(1,),
                                        reason="the kernel passes one callback, run after each block's fixpipe")
        return BlockMmadRequirement(PLAIN_CALL, callbacks=(2,),
                                    reason="the kernel runs callbacks before and after each block's fixpipe")

    def check_block_epilogue(self, block_epilogue) -> None:
        """The block epilogue protocol of the module doc."""
        missing = [name for name in ("arch", "c_type", "d_type", "Params") if not hasattr(block_epilogue, name)]
        if not callable(block_epilogue):
            missing.append("a call (resource) -> per-core instance")
        if missing:
            raise ConfigError(
                f"{self.kernel_name()}: BlockEpilogue must be a block epilogue such as the per-token-dequant one "
                f"(arch, c_type, d_type, Params, a call (resource) -> per-core instance); {block_epilogue!r} lacks "
                + ", ".join(missing))

    # -- host side -------------------------------------------------------------------------------
    def get_workspace_size(self, args) -> int:
        """The ring: ``L1.M * L1.N * aicCoreNum * WORKSPACE_STAGES * sizeof(int32)`` bytes, independent of the
        problem. (A full-size workspace kernel states its own size.)"""
        if self.workspace_stages is None:
            raise NotImplementedError(f"{self.kernel_name()}: a full-size workspace kernel defines get_workspace_size")
        l1 = self.block_mmad.l1_tile_shape
        return l1.m * l1.n * args.aic_core_num * self.workspace_stages * 4

    def underlying_layouts(self, m: int, n: int, k: int) -> tuple:
        """``ToUnderlyingArguments``' layouts of A, B, the per-channel scale [n], the per-token scale [m] and D."""
        layout_a, layout_b, _ = operand_layouts(self.block_mmad, m, n, k)
        return (layout_a, layout_b, VectorLayout(n), VectorLayout(m),
                RowMajor.make_layout(self.block_epilogue.d_type.element, m, n))

    def total_blocks(self, problem_shape, group_list=None) -> int:
        """Blocks of the whole problem (for progress reporting): every group's blocks, including those of empty
        K groups (they go through the scheduler; the cube just issues nothing)."""
        l1 = self.block_mmad.l1_tile_shape
        return sum(block_count(l1, s.m, s.n) for s in self.group_walk.shapes(problem_shape, group_list))

    # -- synchronisation points ------------------------------------------------------------------
    def aic_set_block_stored(self, ctx, flag) -> None:
        """Full-size workspace, AIC, right after a block's fixpipe: the C++ ``AicFinishSync`` callback (set the
        flag with reverse, mode 2, on PIPE_FIX)."""
        cross_core_set_flag_with_reverse(ctx, flag, 2, Pipe.FIX)

    def aiv_wait_block_stored(self, ctx, flag) -> None:
        """Full-size workspace, AIV, before reading a block: the C++ ``AivWaitSync`` callback."""
        cross_core_wait_flag_with_reverse(ctx, flag, 2, Pipe.MTE3)

    def aic_wait_slot_free(self, ctx, stage: int) -> None:
        """Ring, AIC, right before a block's fixpipe overwrites slot ``stage`` (its 2nd and later use): wait until
        both AIVs finished the block they read from it (``aicWaitFunc``)."""
        ctx.cross_core_wait_flag(self.flag_aiv_finish_compute[stage])

    def aic_set_slot_stored(self, ctx, stage: int) -> None:
        """Ring, AIC, right after a block's fixpipe: tell both AIVs slot ``stage`` holds C (``aicSetFunc``, mode 2,
        issued on PIPE_FIX so that it follows the store)."""
        ctx.cross_core_set_flag(self.flag_aic_finish_store[stage], 2, Pipe.FIX)

    def aic_drain_slot(self, ctx, stage: int) -> None:
        """Ring, AIC, at the end: consume the AIVs' last "computed" signal of slot ``stage``."""
        ctx.cross_core_wait_flag(self.flag_aiv_finish_compute[stage])

    def aiv_wait_slot_stored(self, ctx, stage: int) -> None:
        """Ring, AIV, before reading slot ``stage``: wait for the AIC's "stored" signal."""
        ctx.cross_core_wait_flag(self.flag_aic_finish_store[stage])

    def aiv_set_slot_free(self, ctx, stage: int) -> None:
        """Ring, AIV, after its D stores of the block: release slot ``stage`` (mode 2 on PIPE_MTE3; the AIC sees it
        once both AIVs have set)."""
        ctx.cross_core_set_flag(self.flag_aiv_finish_compute[stage], 2, Pipe.MTE3)

    # -- device side -----------------------------------------------------------------------------
    def ring_layout(self, core_num: int) -> RowMajor:
        """The ring workspace as one RowMajor matrix: ``L1.M * cores * stages`` rows of ``L1.N``."""
        l1 = self.block_mmad.l1_tile_shape
        return RowMajor(l1.m * core_num * self.workspace_stages, l1.n)

    def slot_offset(self, layout: RowMajor, stage: int, core_idx: int, core_num: int) -> int:
        """Element offset of AI core ``core_idx``'s ring slot ``stage`` in the workspace."""
        return layout.offset((stage * core_num + core_idx) * self.block_mmad.l1_tile_shape.m, 0)

    def epilogue_params(self, params, group: GemmGroup):
        """The epilogue's ``Params`` for ``group``: the per-channel scale row of the group, the per-token scales
        and D from the group's first row."""
        n = params.problem_shape.n
        rows = group.shape.m
        return self.block_epilogue.Params(
            params.ptr_scale[(group.index or 0) * n], params.layout_scale,
            params.ptr_per_token_scale[group.row], params.layout_per_token_scale.get_tile_layout(rows),
            params.ptr_d[group.row * n], params.layout_d.get_tile_layout(rows, n))

    def blocks(self, ctx, params, core_idx: int, start_group=None) -> Iterator[tuple]:
        """The blocks core ``core_idx`` takes, group by group (the groups' blocks dealt round robin over the
        cores): ``(group, marker data, block coord, actual block shape)``. ``start_group(group)`` runs when a
        group starts (after its group-list read); from the launch's walk table (nobody observes instructions),
        only for the groups the core has blocks in. A core that takes its blocks from the table still makes every
        group-list read in its place when observers time them (``ObserverBus.templates``); the table is used only
        when nobody else observes instructions."""
        l1 = self.block_mmad.l1_tile_shape
        l1_mn = MatrixCoord(l1.m, l1.n)
        # (an immutable scheduler: its update() returns a fresh value, so one per group serves every core)
        bus = ctx.bus
        if self.group_walk.grouped and (not bus.instructions or bus.templates) and isinstance(
                self.block_scheduler, GemmIdentityBlockSwizzle):
            table = self._walk_table(ctx, params, l1_mn)
            if table is not None:
                read = partial(self.group_walk.reads, ctx, params) if bus.instructions else None
                yield from self._table_blocks(table, core_idx, ctx.block_num, start_group, read)
                return
        deal = RoundRobinGroups(core_idx, ctx.block_num)
        for group in self.group_walk.groups(ctx, params):
            if start_group is not None:
                start_group(group)
            scheduler = self.block_scheduler.update(group.shape, l1_mn)
            for loop in deal.loops(scheduler.get_core_loops()):
                bc = scheduler.get_block_coord(loop)
                mark = {"group": group.index, "loop": loop} if self.group_walk.grouped else {"loop": loop}
                yield group, mark, bc, scheduler.get_actual_block_shape(bc)

    def _walk_table(self, ctx, params, l1_mn) -> tuple | None:
        """The walk every core of the launch makes alike, made once by the first core that starts (when nobody
        observes instructions, the group-list reads publish nothing, so one core's reads stand for all): ``(groups,
        schedulers, block counts, first core of each group, shared block memo)``, or None when making it raised
        (each core then walks the groups itself and raises where it would have). Every group's epilogue Params
        are made with it (into the memo :meth:`aiv` shares them through), so that a vector core can skip the
        groups it has no block in: what it would do for them (make the Params, ``update_params``) can neither
        raise nor be seen."""
        memo = params_memo(ctx, "block walk", params)
        key = (ctx.block_num, l1_mn)
        table = memo.get(key, _MISSING)
        if table is _MISSING:
            try:
                groups = list(self.group_walk.groups(_QuietCore(ctx), params))
                made = params_memo(ctx, "epilogue params", params)  # what aiv's start_group makes, for every group
                for group in groups:
                    hit = made.get(id(group))
                    if hit is None or hit[0] is not group:
                        made[id(group)] = (group, self.epilogue_params(params, group))
                schedulers = [self.block_scheduler.update(group.shape, l1_mn) for group in groups]
                loops = [scheduler.get_core_loops() for scheduler in schedulers]
                num, start, starts = ctx.block_num, 0, []
                for n in loops:  # RoundRobinGroups' startCoreIdx before each group
                    starts.append(start)
                    start = (start + n) % num
                table = (groups, schedulers, np.array(loops, np.int64), np.array(starts, np.int64), {})
            except CatlassError:  # a bad group list: the per-core walk raises it again, at its own place
                table = None
            memo[key] = table
        return table

    @staticmethod
    def _table_blocks(table, core_idx: int, core_num: int, start_group, read=None) -> Iterator[tuple]:
        """:meth:`blocks` from the launch's walk table: this core's blocks of each group are
        ``range(first, loops, core_num)`` with ``first = (core_idx - group's first core) mod core_num``
        (RoundRobinGroups), found for all groups at once; ``start_group`` runs for the groups the core has blocks
        in (see :meth:`_walk_table`). ``read(start, stop)``: the group-list reads of groups ``start .. stop - 1``,
        made for every group in the order and place of the per-core walk (before the group's blocks; the last
        groups' after the core's last block)."""
        groups, schedulers, loops, starts, shared = table
        first = (core_idx - starts) % core_num
        firsts, counts = first.tolist(), loops.tolist()
        done = 0  # the groups whose read was made
        for g in np.flatnonzero(first < loops).tolist():
            if read is not None:
                read(done, g + 1)
                done = g + 1
            group = groups[g]
            if start_group is not None:
                start_group(group)
            scheduler = schedulers[g]
            for loop in range(firsts[g], counts[g], core_num):
                mark = {"group": group.index, "loop": loop}
                hit = shared.get((g, loop))
                if hit is None:  # the AIC and both AIVs of a core take the same block
                    bc = scheduler.get_block_coord(loop)
                    hit = shared[(g, loop)] = (bc, scheduler.get_actual_block_shape(bc))
                yield group, mark, hit[0], hit[1]
        if read is not None:
            read(done, len(groups))

    def aic(self, ctx, params) -> None:
        """The cube-core program (``operator()<AIC>``)."""
        l1 = self.block_mmad.l1_tile_shape
        core_idx, core_num = ctx.block_idx, ctx.block_num
        n = params.problem_shape.n
        gm_c = params.ptr_workspace.reinterpret(dt.INT32)
        ring = self.workspace_stages is not None
        if ring:
            slots = AicSlots(self, ctx)
            layout_ring = self.ring_layout(core_num)
        else:
            after = partial(self.aic_set_block_stored, ctx, self.flag_aic_finish_store.fresh())
        with self.block_mmad(ctx.resource) as block_mmad:
            for group, mark, bc, actual in self.blocks(ctx, params, core_idx):
                if ring:
                    stage, before, after = slots.next_block()
                    layout_c = layout_ring
                    gm_block_c = gm_c[self.slot_offset(layout_c, stage, core_idx, core_num)]
                    mark["stage"] = stage
                else:
                    before, layout_c = None, RowMajor(group.shape.m, group.shape.n)
                    gm_block_c = gm_c[group.row * n + offset_c(layout_c, bc, l1)]
                ctx.mark("block", **mark, m_idx=bc.m, n_idx=bc.n, rows=actual.m, cols=actual.n,
                         row=group.row + bc.m * l1.m, col=bc.n * l1.n)
                gm_a = params.ptr_a[group.offset_a + offset_a(group.layout_a, bc, l1)]
                gm_b = params.ptr_b[group.offset_b + offset_b(group.layout_b, bc, l1)]
                self.call_block_mmad(block_mmad, (gm_a, group.layout_a, gm_b, group.layout_b, gm_block_c,
                                                  layout_c, actual), before, after)
            block_mmad.synchronize_block()
            if ring:
                slots.drain()
            ctx.pipe_barrier(Pipe.ALL)

    def aiv(self, ctx, params) -> None:
        """The vector-core program (``operator()<AIV>``), run by both sub-blocks of every AI core."""
        l1 = self.block_mmad.l1_tile_shape
        core_idx, core_num = ctx.ai_core_idx, ctx.block_num
        n = params.problem_shape.n
        gm_c = params.ptr_workspace.reinterpret(dt.INT32)
        ring = self.workspace_stages is not None
        if ring:
            layout_ring = self.ring_layout(core_num)
            stage = 0
        else:
            wait_stored = partial(self.aiv_wait_block_stored, ctx, self.flag_aic_finish_store.fresh())
        block_shape = GemmCoord(l1.m, l1.n, l1.k)
        # one epilogue Params per group, made by the first core that starts the group and shared by the others
        # (the epilogues only read them); keyed by the group object, which the walk's memo shares too
        shared = params_memo(ctx, "epilogue params", params)
        with self.block_epilogue(ctx.resource) as epilogue:
            def start_group(group):
                hit = shared.get(id(group))
                if hit is None or hit[0] is not group:
                    hit = shared[id(group)] = (group, self.epilogue_params(params, group))
                epilogue.update_params(hit[1])

            for group, mark, bc, actual in self.blocks(ctx, params, core_idx, start_group):
                if ring:
                    gm_block_c = gm_c[self.slot_offset(layout_ring, stage, core_idx, core_num)]
                    layout_block_c = layout_ring.get_tile_layout(actual.m, actual.n)
                    self.aiv_wait_slot_stored(ctx, stage)
                    ctx.mark("epilogue_block", **mark, stage=stage)
                    epilogue(block_shape, bc, actual, gm_block_c, layout_block_c)
                    self.aiv_set_slot_free(ctx, stage)
                    stage = (stage + 1) % self.workspace_stages
                else:
                    layout_c = RowMajor(group.shape.m, group.shape.n)
                    gm_block_c = gm_c[group.row * n + offset_c(layout_c, bc, l1)]
                    ctx.mark("epilogue_block", **mark)
                    epilogue(block_shape, bc, actual, gm_block_c, layout_c.get_tile_layout(actual.m, actual.n),
                             wait_stored)
            ctx.pipe_barrier(Pipe.ALL)


@dataclass(frozen=True)
class GroupedPerTokenDequantParams:
    """Device-side ``Params`` of the grouped kernels on this skeleton: CATLASS's
    ``GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace::Params`` (example 10) and the full-workspace
    ``GroupedMatmulSlice{M,K}PerTokenDequant::Params`` (examples 07, 11) have the same fields: pointers with
    the layouts ``ToUnderlyingArguments`` builds, and the GM workspace."""

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


class GroupedPerTokenDequantKernel(WorkspaceEpilogueKernel):
    """The grouped kernels' ``ToUnderlyingArguments`` (Arguments with ``problem_shape``, ``problem_count``,
    ``ptr_group_list``, ``ptr_a``, ``ptr_b``, ``ptr_scale``, ``ptr_per_token_scale``, ``ptr_d``)."""

    Params = GroupedPerTokenDequantParams

    def to_underlying_arguments(self, args, workspace: GlobalTensor) -> GroupedPerTokenDequantParams:
        """CATLASS ``ToUnderlyingArguments``: the full-problem layouts."""
        m, n, k = args.problem_shape
        layout_a, layout_b, layout_scale, layout_per_token_scale, layout_d = self.underlying_layouts(m, n, k)
        return GroupedPerTokenDequantParams(
            GemmCoord(m, n, k), args.problem_count, args.ptr_group_list, args.ptr_a, layout_a, args.ptr_b, layout_b,
            args.ptr_scale, layout_scale, args.ptr_per_token_scale, layout_per_token_scale, args.ptr_d, layout_d,
            workspace,
        )


__all__ = [
    "AicSlots",
    "GemmGroup",
    "GroupWalk",
    "GroupedPerTokenDequantKernel",
    "GroupedPerTokenDequantParams",
    "ONE_GROUP",
    "OneGroup",
    "SLICE_K",
    "SLICE_M",
    "SliceKGroups",
    "SliceMGroups",
    "USER_FLAG_IDS",
    "WorkspaceEpilogueKernel",
]
