"""CATLASS ``Gemm::Kernel::OptimizedMatmul`` (``gemm/kernel/optimized_matmul.hpp``; examples 06 and 26).

C = A @ B with a ``MmadAtlasA2Preload`` BlockMmad (shuffle-K and the next block's first K tile prefetched
during the current block's last one) and optional padding prologues for A and B.

===========================  =======================================================================
without prologues            AIC-only: blocks dealt round-robin over the cube cores, like BasicMatmul
with a prologue for A/B      the vector cores first copy the operand into a padded workspace
                             (:class:`~catlass_py.kernel.padding_block_nd.PaddingMatrixBlockND`), meet at a
                             ``CrossCoreBarrier<0>`` and set flag 0 (mode 2); each cube core waits on
                             flag 0 and then reads the padded copy instead of the original
===========================  =======================================================================

Example 26 (matmul + ReLU) is this kernel with a ``ReluTileCopy`` (the fixpipe applies the ReLU).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catlass_py.arch.flags import CrossCoreFlag
from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ConfigError
from catlass_py.gemm.block.capabilities import PRELOAD_CALL, BlockMmadRequirement
from catlass_py.gemm.coord import GemmCoord, MatrixCoord
from catlass_py.kernel.gemm_kernel import GemmKernel, block_count, offset_a, offset_b, offset_c
from catlass_py.kernel.padding_tag import PaddingTag
from catlass_py.layout import ColumnMajor, RowMajor

FLAG_AIV_FINISH_STORE = 0  # CATLASS names the padding-done flag id this way


@dataclass(frozen=True)
class OptimizedMatmulArguments:
    """Host-side ``Arguments{problemShape, ptrA, ptrB, ptrC}``."""

    problem_shape: GemmCoord
    ptr_a: GlobalTensor
    ptr_b: GlobalTensor
    ptr_c: GlobalTensor


@dataclass(frozen=True)
class OptimizedMatmulParams:
    """Device-side ``KernelParams<IsPaddingA, IsPaddingB>``: the inputs, and the padded workspace copies
    (``ptr_wa``/``layout_wa`` etc. are None for an operand without prologue)."""

    problem_shape: GemmCoord
    ptr_a: GlobalTensor
    layout_a: Any
    ptr_b: GlobalTensor
    layout_b: Any
    ptr_c: GlobalTensor
    layout_c: Any
    ptr_wa: GlobalTensor | None = None
    layout_wa: Any = None
    ptr_wb: GlobalTensor | None = None
    layout_wb: Any = None


class OptimizedMatmul(GemmKernel):
    """CATLASS ``OptimizedMatmul<PrologueA, PrologueB, BlockMmad, BlockEpilogue = void, BlockScheduler>``.

    ``prologue_a`` / ``prologue_b``: a :class:`~catlass_py.kernel.padding_block_nd.PaddingMatrixBlockND`
    (PADDING_BLOCK_ND), a :class:`~catlass_py.kernel.padding_nz.PaddingMatrixNZ` (PADDING_NZ) or None (void).
    With a prologue the BlockMmad's operand layout must be the prologue's output layout (``PaddingRowMajor`` /
    ``PaddingColumnMajor``); the kernel's own operand layout is then the prologue's input layout.
    """

    Arguments = OptimizedMatmulArguments
    Params = OptimizedMatmulParams
    block_mmad_needs = BlockMmadRequirement(PRELOAD_CALL, reason="each call also prefetches the next block")

    def __init__(self, prologue_a, prologue_b, block_mmad, block_epilogue, block_scheduler):
        super().__init__(block_mmad, block_epilogue, block_scheduler)
        what = type(self).__name__
        for name, pro, t in (("PrologueA", prologue_a, block_mmad.a_type), ("PrologueB", prologue_b, block_mmad.b_type)):
            if pro is None:
                continue
            if getattr(pro, "padding_tag", None) not in (PaddingTag.PADDING_BLOCK_ND, PaddingTag.PADDING_NZ):
                raise ConfigError(f"{what}: {name} must be a PADDING_BLOCK_ND or PADDING_NZ prologue "
                                  f"(PaddingMatrixBlockND, PaddingMatrixNZ) or None, got {pro!r}")
            if pro.layout_out is not t.layout or pro.element != t.element:
                raise ConfigError(f"{what}: {name} writes {pro.element} {pro.layout_out.__name__} but the BlockMmad "
                                  f"reads {t}")
            if pro.arch != block_mmad.arch:
                raise ConfigError(f"{what}: {name} targets {pro.arch.name}, the BlockMmad {block_mmad.arch.name}")
            if pro.padding_tag is PaddingTag.PADDING_BLOCK_ND:
                # A row longer than COMPUTE_LENGTH is moved in COMPUTE_LENGTH pieces, each written as whole
                # block-wide chunks: a piece that does not start on a block edge would overrun into the next
                # row of the padded block (the C++ default, 96 KiB of elements, is a multiple of every tile).
                l1 = block_mmad.l1_tile_shape
                width = {("PrologueA", RowMajor): l1.k, ("PrologueA", ColumnMajor): l1.m,
                         ("PrologueB", RowMajor): l1.n, ("PrologueB", ColumnMajor): l1.k}[(name, pro.layout_in)]
                if pro.compute_length % width:
                    raise ConfigError(f"{what}: {name}'s COMPUTE_LENGTH ({pro.compute_length}) must be a multiple of "
                                      f"the padded block width ({width}); otherwise long rows overrun their block")
        self.prologue_a, self.prologue_b = prologue_a, prologue_b
        self.layout_a = prologue_a.layout_in if prologue_a is not None else block_mmad.a_type.layout
        self.layout_b = prologue_b.layout_in if prologue_b is not None else block_mmad.b_type.layout
        self.padding = prologue_a is not None or prologue_b is not None
        self.flag_aiv_finish_padding = CrossCoreFlag(FLAG_AIV_FINISH_STORE)
        if not self.padding:
            self.aiv = None  # the C++ AIV operator() does nothing then: no vector cores launch

    # -- host side -------------------------------------------------------------------------------
    @staticmethod
    def _size(pro, rows, cols, row_align, col_align) -> int:
        if pro is None:
            return 0
        if pro.padding_tag is PaddingTag.PADDING_BLOCK_ND:
            return pro.get_workspace_size(rows, cols, row_align, col_align)
        return pro.get_workspace_size(rows, cols)  # PADDING_NZ

    @staticmethod
    def _workspace_layout(pro, layout, row_align, col_align):
        if pro.padding_tag is PaddingTag.PADDING_BLOCK_ND:
            return pro.get_workspace_layout(layout, row_align, col_align)
        return pro.get_workspace_layout(layout)  # PADDING_NZ

    def _sizes(self, args) -> tuple[int, int]:
        m, n, k = args.problem_shape
        l1 = self.block_mmad.l1_tile_shape
        return (self._size(self.prologue_a, m, k, l1.m, l1.k), self._size(self.prologue_b, k, n, l1.k, l1.n))

    def get_workspace_size(self, args: OptimizedMatmulArguments) -> int:
        """The padded copies, A's first: ``roundup(m, L1.M) * roundup(k, L1.K)`` elements for A and
        ``roundup(k, L1.K) * roundup(n, L1.N)`` for B with PADDING_BLOCK_ND; the fractal-rounded matrix with
        PADDING_NZ."""
        return sum(self._sizes(args))

    def to_underlying_arguments(self, args: OptimizedMatmulArguments, workspace: GlobalTensor | None = None):
        """Input layouts by ``MakeLayout``; the workspace holds WA at byte 0 and WB right after it."""
        m, n, k = args.problem_shape
        mm = self.block_mmad
        l1 = mm.l1_tile_shape
        layout_a = self.layout_a.make_layout(mm.element_a, m, k)
        layout_b = self.layout_b.make_layout(mm.element_b, k, n)
        layout_c = mm.c_type.layout.make_layout(mm.element_c, m, n)
        size_wa, _ = self._sizes(args)
        ptr_wa = layout_wa = ptr_wb = layout_wb = None
        if self.padding and workspace is None:
            raise ConfigError("OptimizedMatmul: the padding prologues need a workspace (get_workspace_size bytes)")
        if self.prologue_a is not None:
            ptr_wa = workspace.reinterpret(mm.element_a)
            layout_wa = self._workspace_layout(self.prologue_a, layout_a, l1.m, l1.k)
        if self.prologue_b is not None:
            ptr_wb = workspace[size_wa].reinterpret(mm.element_b)
            layout_wb = self._workspace_layout(self.prologue_b, layout_b, l1.k, l1.n)
        return OptimizedMatmulParams(GemmCoord(m, n, k), args.ptr_a, layout_a, args.ptr_b, layout_b, args.ptr_c,
                                     layout_c, ptr_wa, layout_wa, ptr_wb, layout_wb)

    def total_blocks(self, problem_shape) -> int:
        """Blocks of the problem (progress reporting)."""
        m, n, _ = problem_shape
        return block_count(self.block_mmad.l1_tile_shape, m, n)

    # -- device side -----------------------------------------------------------------------------
    def aiv(self, ctx, params: OptimizedMatmulParams) -> None:
        """The vector-core program (``operator()<AIV>``): the padding prologues, then the barrier and the flag."""
        if self.prologue_a is not None:
            self.prologue_a(ctx.resource)(params.ptr_wa, params.ptr_a, params.layout_wa, params.layout_a)
        if self.prologue_b is not None:
            self.prologue_b(ctx.resource)(params.ptr_wb, params.ptr_b, params.layout_wb, params.layout_b)
        if self.padding:
            ctx.cross_core_barrier(0, Pipe.MTE3)
            ctx.cross_core_set_flag(self.flag_aiv_finish_padding, 2, Pipe.MTE3)
        ctx.pipe_barrier(Pipe.ALL)

    def aic(self, ctx, params: OptimizedMatmulParams) -> None:
        """The cube-core program (``operator()<AIC>``)."""
        if self.padding:
            ctx.cross_core_wait_flag(self.flag_aiv_finish_padding)
        l1 = self.block_mmad.l1_tile_shape
        scheduler = self.block_scheduler.update(params.problem_shape, MatrixCoord(l1.m, l1.n))
        core_loops = scheduler.get_core_loops()
        if self.prologue_a is None:
            gm_a, layout_a = params.ptr_a, params.layout_a
        else:
            gm_a, layout_a = params.ptr_wa, params.layout_wa
        if self.prologue_b is None:
            gm_b, layout_b = params.ptr_b, params.layout_b
        else:
            gm_b, layout_b = params.ptr_wb, params.layout_wb
        layout_c = params.layout_c
        idx, num = ctx.block_idx, ctx.block_num
        with self.block_mmad(ctx.resource) as block_mmad:
            for loop in range(idx, core_loops, num):
                bc = scheduler.get_block_coord(loop)
                actual = scheduler.get_actual_block_shape(bc)
                off_a, off_b, off_c = offset_a(layout_a, bc, l1), offset_b(layout_b, bc, l1), offset_c(layout_c, bc, l1)
                has_next = loop + num < core_loops
                next_coord = next_actual = GemmCoord(0, 0, 0)
                if has_next:
                    next_coord = scheduler.get_block_coord(loop + num)
                    next_actual = scheduler.get_actual_block_shape(next_coord)
                off_next_a, off_next_b = offset_a(layout_a, next_coord, l1), offset_b(layout_b, next_coord, l1)
                ctx.mark("block", loop=loop, m_idx=bc.m, n_idx=bc.n, rows=actual.m, cols=actual.n,
                         row=bc.m * l1.m, col=bc.n * l1.n)
                block_mmad(gm_a[off_a], layout_a, gm_b[off_b], layout_b, params.ptr_c[off_c], layout_c,
                           gm_a[off_next_a], gm_b[off_next_b], actual, next_actual, loop == idx, has_next)
            ctx.pipe_barrier(Pipe.ALL)
