"""CATLASS ``Gemm::Kernel::SingleCoreSplitkMatmul`` (example 34, ``gemm/kernel/single_core_slicek_matmul.hpp``).

Single-core split-K: every cube core owns a contiguous range of output blocks
(``SingleCoreSplitkGemmIdentityBlockSwizzle``) and walks all K tiles of that range, K tile outermost, storing
the first K tile of each block and *atomically adding* the later ones into an fp32 C (``SetAtomicAdd``).
Optional vector-core stages around it:

=====================  ==============================================================================
prologue (AIV)         repack A and/or B into NZ workspaces (``PaddingMatrixNZ``); barrier of all AIVs;
                       set flag 0 (mode 2, PIPE_MTE3); the AIC waits flag 0 before its first load
matmul (AIC)           the block loop; then set flag 1 (mode 2, PIPE_FIX) if there is an epilogue
epilogue (AIV)         wait flag 1; barrier of all AIVs; ``RemovePaddingNDAndCast`` copies the fp32
                       workspace C into the output type
=====================  ==============================================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ConfigError
from catlass_py.gemm.block.capabilities import SINGLE_CORE_SPLITK_CALL, BlockMmadRequirement
from catlass_py.gemm.coord import GemmCoord, ceil_div
from catlass_py.kernel.gemm_kernel import GemmKernel, offset_a, offset_b, offset_c
from catlass_py.kernel.padding_nz import PaddingMatrixNZ, RemovePaddingNDAndCast
from catlass_py.kernel.padding_tag import PaddingTag
from catlass_py.layout import RowMajor
from catlass_py.tile.atomic import set_atomic_none

FLAG_AIV_FINISH_STORE = 0  # CATLASS's name of the padding-done flag
FLAG_AIC_FINISH = 1


@dataclass(frozen=True)
class SingleCoreSplitkMatmulArguments:
    """Host-side ``Arguments{problemShape, ptrA, ptrB, ptrC}``."""

    problem_shape: GemmCoord
    ptr_a: GlobalTensor
    ptr_b: GlobalTensor
    ptr_c: GlobalTensor


@dataclass(frozen=True)
class SingleCoreSplitkMatmulParams:
    """Device-side ``Params``: inputs, and the workspaces of the padded A/B and of the fp32 C (None when the
    corresponding stage is void)."""

    problem_shape: GemmCoord
    ptr_a: GlobalTensor
    layout_a: Any
    ptr_b: GlobalTensor
    layout_b: Any
    ptr_c: GlobalTensor
    layout_c: Any
    ptr_wa: GlobalTensor | None
    layout_wa: Any
    ptr_wb: GlobalTensor | None
    layout_wb: Any
    ptr_wc: GlobalTensor | None


class SingleCoreSplitkMatmul(GemmKernel):
    """CATLASS ``SingleCoreSplitkMatmul<PrologueA, PrologueB, BlockMmad, BlockEpilogue(void), BlockScheduler,
    RemovePaddingNDAndCastC>`` (see module doc). ``prologue_a``/``prologue_b``: a :class:`PaddingMatrixNZ` or
    None; ``remove_padding_nd_and_cast_c``: a :class:`RemovePaddingNDAndCast` or None (then C is the
    accumulator type). Assembly checks: the BlockMmad is the single-core split-K one, the prologues' output
    layouts are the BlockMmad's operand layouts, C's element types chain (accumulator -> epilogue input)."""

    Arguments = SingleCoreSplitkMatmulArguments
    Params = SingleCoreSplitkMatmulParams
    block_mmad_needs = BlockMmadRequirement(SINGLE_CORE_SPLITK_CALL, reason="a call multiplies one K tile of a block")

    def __init__(self, prologue_a, prologue_b, block_mmad, block_epilogue, block_scheduler,
                 remove_padding_nd_and_cast_c=None):
        super().__init__(block_mmad, block_epilogue, block_scheduler)
        what = self.kernel_name()
        for name, pro, t in (("PrologueA", prologue_a, block_mmad.a_type),
                             ("PrologueB", prologue_b, block_mmad.b_type)):
            if pro is None:
                continue
            if not isinstance(pro, PaddingMatrixNZ):
                raise ConfigError(f"{what}: {name} must be a PaddingMatrixNZ or None, got {pro!r}")
            if pro.layout_out is not t.layout or pro.element != t.element:
                raise ConfigError(f"{what}: {name} writes {pro.element} {pro.layout_out.__name__} but the BlockMmad "
                                  f"reads {t}")
        remove = remove_padding_nd_and_cast_c
        if remove is not None:
            if not isinstance(remove, RemovePaddingNDAndCast) or remove.padding_tag is not PaddingTag.NO_PADDING:
                raise ConfigError(f"{what}: RemovePaddingNDAndCastC must be a NO_PADDING RemovePaddingNDAndCast, got "
                                  f"{remove!r}")
            if remove.element_in != block_mmad.element_accumulator:
                raise ConfigError(f"{what}: the epilogue reads {remove.element_in} but the accumulator is "
                                  f"{block_mmad.element_accumulator}")
        elif block_mmad.element_c != block_mmad.element_accumulator:
            raise ConfigError(f"{what}: without RemovePaddingNDAndCastC the cube stores (and atomically adds) "
                              f"C directly, so CType must be the accumulator type {block_mmad.element_accumulator}")
        if block_mmad.element_c != block_mmad.element_accumulator:
            raise ConfigError(f"{what}: K tiles are accumulated in C by atomic adds; CType must be "
                              f"{block_mmad.element_accumulator}, got {block_mmad.element_c}")
        self.prologue_a, self.prologue_b = prologue_a, prologue_b
        self.remove_padding = remove
        self.layout_a = prologue_a.layout_in if prologue_a is not None else block_mmad.a_type.layout
        self.layout_b = prologue_b.layout_in if prologue_b is not None else block_mmad.b_type.layout
        self.element_c = remove.element_out if remove is not None else block_mmad.element_c
        self.padding = prologue_a is not None or prologue_b is not None

    def check_block_scheduler(self, block_scheduler) -> None:
        if not hasattr(block_scheduler, "get_single_core_loops"):
            raise ConfigError(f"{self.kernel_name()}: BlockScheduler must be SingleCoreSplitkGemmIdentityBlockSwizzle")

    # -- host side -------------------------------------------------------------------------------

    def _sizes(self, args) -> tuple[int, int, int]:
        m, n, k = args.problem_shape
        wa = self.prologue_a.get_workspace_size(m, k) if self.prologue_a is not None else 0
        wb = self.prologue_b.get_workspace_size(k, n) if self.prologue_b is not None else 0
        wc = 0
        if self.remove_padding is not None and self.remove_padding.element_in != self.remove_padding.element_out:
            wc = self.remove_padding.get_workspace_size(m, n)
        return wa, wb, wc

    def get_workspace_size(self, args) -> int:
        """Padded A + padded B + the fp32 C copy (when the epilogue casts)."""
        return sum(self._sizes(args))

    def to_underlying_arguments(self, args, workspace: GlobalTensor | None) -> SingleCoreSplitkMatmulParams:
        """CATLASS ``ToUnderlyingArguments``: layouts and the workspace split (A, then B, then C)."""
        m, n, k = args.problem_shape
        mmad = self.block_mmad
        layout_a = self.layout_a.make_layout(mmad.element_a, m, k)
        layout_b = self.layout_b.make_layout(mmad.element_b, k, n)
        layout_c = RowMajor.make_layout(self.element_c, m, n)
        wa, wb, _wc = self._sizes(args)
        ws = workspace.reinterpret("uint8") if workspace is not None else None
        ptr_wa = layout_wa = ptr_wb = layout_wb = ptr_wc = None
        if self.prologue_a is not None:
            ptr_wa = ws[0].reinterpret(mmad.element_a)
            layout_wa = self.prologue_a.get_workspace_layout(layout_a)
        if self.prologue_b is not None:
            ptr_wb = ws[wa].reinterpret(mmad.element_b)
            layout_wb = self.prologue_b.get_workspace_layout(layout_b)
        if ws is not None:
            ptr_wc = ws[wa + wb].reinterpret(mmad.element_accumulator)
        return SingleCoreSplitkMatmulParams(GemmCoord(m, n, k), args.ptr_a, layout_a, args.ptr_b, layout_b, args.ptr_c,
                                            layout_c, ptr_wa, layout_wa, ptr_wb, layout_wb, ptr_wc)

    # -- device side -----------------------------------------------------------------------------
    def aiv(self, ctx, params: SingleCoreSplitkMatmulParams) -> None:
        """The vector-core program (``operator()<AIV>``): prologues, then the C copy/cast."""
        if self.prologue_a is not None:
            self.prologue_a(ctx.resource)(params.ptr_wa, params.ptr_a, params.layout_wa, params.layout_a)
        if self.prologue_b is not None:
            self.prologue_b(ctx.resource)(params.ptr_wb, params.ptr_b, params.layout_wb, params.layout_b)
        if self.padding:
            ctx.cross_core_barrier(0, Pipe.MTE3)
            ctx.cross_core_set_flag(FLAG_AIV_FINISH_STORE, 2, Pipe.MTE3)
        if self.remove_padding is not None:
            ctx.cross_core_wait_flag(FLAG_AIC_FINISH)
            ctx.cross_core_barrier(0, Pipe.MTE3)
            self.remove_padding(ctx.resource)(params.ptr_c, params.ptr_wc, params.layout_c, params.layout_c)
        ctx.pipe_barrier(Pipe.ALL)

    def aic(self, ctx, params: SingleCoreSplitkMatmulParams) -> None:
        """The cube-core program (``operator()<AIC>``)."""
        if self.padding:
            ctx.cross_core_wait_flag(FLAG_AIV_FINISH_STORE)
        l1 = self.block_mmad.l1_tile_shape
        sched = self.block_scheduler.update(params.problem_shape, GemmCoord(l1.m, l1.n, l1.k), ctx.block_num,
                                           ctx.block_idx)
        core_loops = sched.get_single_core_loops()
        if self.prologue_a is None:
            gm_a, layout_a = params.ptr_a, params.layout_a
        else:
            gm_a, layout_a = params.ptr_wa, params.layout_wa
        if self.prologue_b is None:
            gm_b, layout_b = params.ptr_b, params.layout_b
        else:
            gm_b, layout_b = params.ptr_wb, params.layout_wb
        acc = self.block_mmad.element_accumulator
        gm_c = params.ptr_wc if self.remove_padding is not None else params.ptr_c.reinterpret(acc)
        layout_c = params.layout_c
        bc = shape = nbc = nshape = GemmCoord(0, 0, 0)
        with self.block_mmad(ctx.resource) as block_mmad:
            for loop in range(core_loops):
                if loop == 0:
                    bc = sched.get_block_coord(loop)
                    shape = sched.get_actual_block_shape(bc)
                else:
                    bc, shape = nbc, nshape
                load_a = load_b = False
                if loop < core_loops - 1:
                    nbc = sched.get_block_coord(loop + 1)
                    nshape = sched.get_actual_block_shape(nbc)
                    load_a = bc.k != nbc.k or bc.m != nbc.m
                    load_b = bc.k != nbc.k or bc.n != nbc.n
                off_a, off_b, off_c = offset_a(layout_a, bc, l1), offset_b(layout_b, bc, l1), offset_c(layout_c, bc, l1)
                off_na, off_nb = offset_a(layout_a, nbc, l1), offset_b(layout_b, nbc, l1)
                atomic = sched.is_atomic_add(loop)
                ctx.mark("block", loop=loop, m_idx=bc.m, n_idx=bc.n, k_idx=bc.k, row=bc.m * l1.m, col=bc.n * l1.n,
                         rows=shape.m, cols=shape.n, k=shape.k, atomic=atomic)
                block_mmad(gm_a[off_a], layout_a, gm_b[off_b], layout_b, gm_c[off_c], layout_c, gm_a[off_na],
                           gm_b[off_nb], shape, nshape, load_a, load_b, atomic)
            if self.remove_padding is not None:
                ctx.cross_core_set_flag(FLAG_AIC_FINISH, 2, Pipe.FIX)
            set_atomic_none(ctx)
            ctx.pipe_barrier(Pipe.ALL)

    def total_blocks(self, problem_shape) -> int:
        """Block K tiles of the problem (for progress reporting)."""
        l1 = self.block_mmad.l1_tile_shape
        m, n, k = problem_shape
        return ceil_div(m, l1.m) * ceil_div(n, l1.n) * ceil_div(k, l1.k)


__all__ = ["SingleCoreSplitkMatmul", "SingleCoreSplitkMatmulArguments", "SingleCoreSplitkMatmulParams"]
