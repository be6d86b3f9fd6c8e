"""CATLASS ``Gemm::Kernel::GroupedMatmulSliceMPerTokenDequant`` (example 07's kernel,
``gemm/kernel/grouped_matmul_slice_m_per_token_dequant.hpp``).

int8 grouped matmul split along M with per-channel x per-token dequantisation, like example 10, but with a
*full-size* workspace: C of every group is stored at its own place in a GM buffer of ``m * n`` elements (no
ring), so the cube core never waits for the vector cores to free a slot. The only synchronisation is one
flag with back-pressure (``CrossCoreFlagWithReverse``, flag 0, reverse flag 1):

==========  =====================================================  =========================================
who         when                                                   flag operation
==========  =====================================================  =========================================
AIC         right after each block's fixpipe (BlockMmad callback)   set 0 (mode 2, PIPE_FIX); every 15th: wait 1
AIV         inside the epilogue, before reading a block (k > 0)     wait 0; every 15th: set 1 (mode 2, MTE3)
==========  =====================================================  =========================================

Blocks of all groups form one sequence dealt round robin over the AI cores (``startCoreIdx`` rotation), as
in example 10. A group with ``k == 0`` blocks (only possible if the whole problem has k == 0) issues no cube
work and no flag; the epilogue then writes zeros without waiting.
"""

from __future__ import annotations

from dataclasses import dataclass

from catlass_py.arch.cross_core_sync import (
    CrossCoreFlagWithReverse,
    cross_core_set_flag_with_reverse,
    cross_core_wait_flag_with_reverse,
)
from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.epilogue.block.per_token_dequant import BlockEpiloguePerTokenDequant, PerTokenDequantParams
from catlass_py.errors import ConfigError
from catlass_py.gemm.coord import GemmCoord, MatrixCoord
from catlass_py.kernel._common import (
    GroupedPerTokenDequantParams,
    RoundRobinGroups,
    block_count,
    call_block_mmad,
    check_plain_block_call,
    dequant_layouts,
    group_size,
    offset_a,
    offset_b,
    offset_c,
    operand_layouts,
)
from catlass_py.layout import RowMajor
from catlass_py.numerics import dtypes as dt

FLAG_AIC_FINISH_STORE = 0
RV_FLAG_AIC_FINISH_STORE = 1


@dataclass(frozen=True)
class GroupedMatmulSliceMPerTokenDequantMoeArguments:
    """Host-side ``Arguments{problemShape, problemCount, ptrGroupList, ptrA, ptrB, ptrScale, ptrPerTokenScale,
    ptrD}``."""

    problem_shape: GemmCoord
    problem_count: int
    ptr_group_list: GlobalTensor
    ptr_a: GlobalTensor
    ptr_b: GlobalTensor
    ptr_scale: GlobalTensor
    ptr_per_token_scale: GlobalTensor
    ptr_d: GlobalTensor


class _GroupedPerTokenDequantFullWorkspace:
    """What kernels 07 and 11 share: construction checks, flag, host methods, the group-list reads."""

    kernel_name = ""
    Params = GroupedPerTokenDequantParams

    def __init__(self, block_mmad, block_epilogue, block_scheduler, element_group_list="int64"):
        what = self.kernel_name
        if not isinstance(block_epilogue, BlockEpiloguePerTokenDequant):
            raise ConfigError(f"{what}: BlockEpilogue must be the per-token-dequant epilogue, got {block_epilogue!r}")
        if getattr(block_mmad, "ASYNC", False) and getattr(block_mmad, "WITH_CALLBACK", False):
            raise ConfigError(
                f"{what}: the kernel passes one callback, run after each block's fixpipe (MmadAtlasA2PreloadAsync); "
                f"{type(block_mmad.policy).__name__} takes two"
            )
        check_plain_block_call(what, block_mmad)
        if block_mmad.element_c != dt.INT32 or block_mmad.c_type.layout is not RowMajor:
            raise ConfigError(f"{what}: the workspace holds RowMajor int32 C; BlockMmad's CType is {block_mmad.c_type}")
        if block_epilogue.c_type.element != block_mmad.element_c:
            raise ConfigError(f"{what}: BlockEpilogue reads {block_epilogue.c_type.element} but BlockMmad writes "
                              f"{block_mmad.element_c}")
        if block_mmad.arch != block_epilogue.arch:
            raise ConfigError(
                f"{what}: BlockMmad targets {block_mmad.arch.name}, BlockEpilogue {block_epilogue.arch.name}")
        egl = dt.get_dtype(element_group_list)
        if egl.kind not in ("int", "uint") or egl.bits not in (32, 64):
            raise ConfigError(f"{what}: ElementGroupList must be a 32- or 64-bit integer type, got {egl}")
        self.block_mmad = block_mmad
        self.block_epilogue = block_epilogue
        self.block_scheduler = block_scheduler
        self.element_group_list = egl
        self.arch = block_mmad.arch
        self.flag_aic_finish_store = CrossCoreFlagWithReverse(FLAG_AIC_FINISH_STORE, RV_FLAG_AIC_FINISH_STORE)

    @staticmethod
    def can_implement(args) -> bool:
        """CATLASS ``CanImplement`` (always true; the ops layer validates user input)."""
        return True

    def to_underlying_arguments(self, args, workspace: GlobalTensor) -> GroupedPerTokenDequantParams:
        """CATLASS ``ToUnderlyingArguments``: the full-problem layouts."""
        m, n, k = args.problem_shape
        layout_a, layout_b, _ = operand_layouts(self.block_mmad, m, n, k)
        layout_scale, layout_per_token_scale, layout_d = dequant_layouts(self.block_epilogue, m, n)
        return GroupedPerTokenDequantParams(
            GemmCoord(m, n, k), args.problem_count, args.ptr_group_list, args.ptr_a, layout_a, args.ptr_b, layout_b,
            args.ptr_scale, layout_scale, args.ptr_per_token_scale, layout_per_token_scale, args.ptr_d, layout_d,
            workspace,
        )

    def _group_shape(self, params, size: int) -> GemmCoord:  # pragma: no cover - overridden
        raise NotImplementedError

    def _scheduler(self, shape):
        l1 = self.block_mmad.l1_tile_shape
        return self.block_scheduler.update(shape, MatrixCoord(l1.m, l1.n))

    def aic(self, ctx, params: GroupedPerTokenDequantParams) -> None:
        """The cube-core program (``operator()<AIC>``)."""
        l1 = self.block_mmad.l1_tile_shape
        gm_c = params.ptr_workspace.reinterpret(dt.INT32)
        flag = self.flag_aic_finish_store.fresh()

        def finish_store():
            """The C++ ``AicFinishSync`` callback."""
            cross_core_set_flag_with_reverse(ctx, flag, 2, Pipe.FIX)

        is_async = getattr(self.block_mmad, "ASYNC", False)
        deal = RoundRobinGroups(ctx.block_idx, ctx.block_num)
        off_a = off_b = off_c = prev = 0
        with self.block_mmad(ctx.resource) as block_mmad:
            for g in range(params.problem_count):
                size, prev = group_size(ctx, params.ptr_group_list, g, prev)
                shape = self._group_shape(params, size)
                layout_a = params.layout_a.get_tile_layout(shape.m, shape.k)
                layout_b = self._group_layout_b(params, shape)
                layout_c = RowMajor(shape.m, shape.n)
                scheduler = self._scheduler(shape)
                for loop in deal.loops(scheduler.get_core_loops()):
                    bc = scheduler.get_block_coord(loop)
                    actual = scheduler.get_actual_block_shape(bc)
                    o_a, o_b, o_c = offset_a(layout_a, bc, l1), offset_b(layout_b, bc, l1), offset_c(layout_c, bc, l1)
                    ctx.mark("block", group=g, loop=loop, m_idx=bc.m, n_idx=bc.n, rows=actual.m, cols=actual.n,
                             **self._block_origin(params, g, prev - size, bc))
                    args = (params.ptr_a[off_a + o_a], layout_a, params.ptr_b[off_b + o_b], layout_b,
                            gm_c[off_c + o_c], layout_c, actual)
                    call_block_mmad(block_mmad, is_async, args, (finish_store,))
                off_a += shape.m * shape.k
                off_b += shape.k * shape.n
                off_c += shape.m * shape.n
            block_mmad.synchronize_block()
            ctx.pipe_barrier(Pipe.ALL)

    def aiv(self, ctx, params: GroupedPerTokenDequantParams) -> None:
        """The vector-core program (``operator()<AIV>``), run by both sub-blocks of every AI core."""
        l1 = self.block_mmad.l1_tile_shape
        gm_c = params.ptr_workspace.reinterpret(dt.INT32)
        flag = self.flag_aic_finish_store.fresh()

        def wait_stored():
            """The C++ ``AivWaitSync`` callback."""
            cross_core_wait_flag_with_reverse(ctx, flag, 2, Pipe.MTE3)

        deal = RoundRobinGroups(ctx.ai_core_idx, ctx.block_num)
        off_c = off_scale = off_pts = off_d = prev = 0
        block_shape = GemmCoord(l1.m, l1.n, l1.k)
        with self.block_epilogue(ctx.resource) as epilogue:
            for g in range(params.problem_count):
                size, prev = group_size(ctx, params.ptr_group_list, g, prev)
                shape = self._group_shape(params, size)
                layout_c = RowMajor(shape.m, shape.n)
                epilogue.update_params(PerTokenDequantParams(
                    params.ptr_scale[off_scale], params.layout_scale,
                    params.ptr_per_token_scale[off_pts], params.layout_per_token_scale.get_tile_layout(shape.m),
                    params.ptr_d[off_d], params.layout_d.get_tile_layout(shape.m, shape.n),
                ))
                scheduler = self._scheduler(shape)
                for loop in deal.loops(scheduler.get_core_loops()):
                    bc = scheduler.get_block_coord(loop)
                    actual = scheduler.get_actual_block_shape(bc)
                    gm_block_c = gm_c[off_c + offset_c(layout_c, bc, l1)]
                    layout_block_c = layout_c.get_tile_layout(actual.m, actual.n)
                    ctx.mark("epilogue_block", group=g, loop=loop)
                    epilogue(block_shape, bc, actual, gm_block_c, layout_block_c, wait_stored)
                off_c += shape.m * shape.n
                off_scale += shape.n
                off_pts += shape.m
                off_d += shape.m * shape.n
            ctx.pipe_barrier(Pipe.ALL)


class GroupedMatmulSliceMPerTokenDequant(_GroupedPerTokenDequantFullWorkspace):
    """CATLASS ``GroupedMatmulSliceMPerTokenDequant<BlockMmad, BlockEpilogue, BlockScheduler,
    ElementGroupList>`` (example 07, "MoE"): groups slice the rows of A [m, k]; B is [G, k, n]; scales
    [G, n] and [m]; D [m, n] (rows past ``groupList[G-1]`` untouched). Full-size int32 workspace (see module
    doc); an async BlockMmad must take one callback (``MmadAtlasA2PreloadAsync``)."""

    Arguments = GroupedMatmulSliceMPerTokenDequantMoeArguments
    kernel_name = "GroupedMatmulSliceMPerTokenDequant"

    def get_workspace_size(self, args) -> int:
        """``m * n * sizeof(ElementGroupList)`` bytes (the C++ sizes the int32 C buffer with the group-list
        element: 8 bytes per element for int64 lists, twice what is used)."""
        m, n, _ = args.problem_shape
        return m * n * self.element_group_list.nbytes(1)

    def _group_shape(self, params, size: int) -> GemmCoord:
        return GemmCoord(size, params.problem_shape.n, params.problem_shape.k)

    def _group_layout_b(self, params, shape):
        return params.layout_b

    def _block_origin(self, params, g, start, bc) -> dict:
        l1 = self.block_mmad.l1_tile_shape
        return {"row": start + bc.m * l1.m, "col": bc.n * l1.n}

    def total_blocks(self, group_list, n: int) -> int:
        """Blocks of the whole problem (for progress reporting)."""
        l1 = self.block_mmad.l1_tile_shape
        total, prev = 0, 0
        for v in group_list:
            total += block_count(l1, int(v) - prev, n)
            prev = int(v)
        return total


__all__ = [
    "GroupedMatmulSliceMPerTokenDequant",
    "GroupedMatmulSliceMPerTokenDequantMoeArguments",
    "GroupedPerTokenDequantParams",
]
