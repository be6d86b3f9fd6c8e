"""CATLASS ``Gemm::Kernel::MatmulEpilogue`` (example 03's kernel, ``gemm/kernel/matmul_epilogue.hpp``).

A mix kernel computing ``D = A @ B + X``. The cube core of every AI core computes C blocks (round robin over
the AI cores, in scheduler order) and stores them into a full-size GM workspace C [m, n]; after each block
it signals its two vector cores, which add X to their rows of the block and write D. D and X share one GM
buffer (the C++ example uploads X into D's allocation), so every element of X is read before the same
element of D is written, by the same vector core.

One-way handshake with back-pressure (``CrossCoreFlagWithReverse``, flag 0, reverse flag 1):

=========  =====================================  =============================================
who        when                                   flag operation
=========  =====================================  =============================================
AIC        after each block's store                set 0 (mode 2, PIPE_FIX); every 15th: wait 1
AIV        before each block                       wait 0; every 15th: set 1 (mode 2, PIPE_MTE3)
=========  =====================================  =============================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catlass_py.arch.cross_core_sync import (
    CrossCoreFlagWithReverse,
    cross_core_set_flag_with_reverse,
    cross_core_wait_flag_with_reverse,
)
from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.epilogue.block.elemwise import (
    BlockEpilogueElemWiseNoSource,
    BlockEpilogueElemWiseOneSource,
    ElemWiseNoSourceParams,
    ElemWiseOneSourceParams,
)
from catlass_py.errors import ConfigError
from catlass_py.gemm.block.capabilities import PLAIN_CALL, BlockMmadRequirement
from catlass_py.gemm.coord import GemmCoord, MatrixCoord, ceil_div, round_up
from catlass_py.kernel.gemm_kernel import GemmKernel, block_count, offset_a, offset_b, offset_c, operand_layouts
from catlass_py.layout import RowMajor

FLAG_AIC_FINISH_STORE = 0
RV_FLAG_AIC_FINISH_STORE = 1


@dataclass(frozen=True)
class MatmulEpilogueArguments:
    """Host-side ``Arguments{problemShape, elementSize, ptrA, ptrB, ptrC}`` (``ptr_c`` holds X on entry and D
    on exit; ``element_size`` is the byte size of the workspace's C elements)."""

    problem_shape: GemmCoord
    element_size: int
    ptr_a: GlobalTensor
    ptr_b: GlobalTensor
    ptr_c: GlobalTensor


@dataclass(frozen=True)
class MatmulEpilogueParams:
    """Device-side ``Params{problemShape, ptrA, layoutA, ptrB, layoutB, ptrWorkspace, epilogueParams}``."""

    problem_shape: GemmCoord
    ptr_a: GlobalTensor
    layout_a: Any
    ptr_b: GlobalTensor
    layout_b: Any
    ptr_workspace: GlobalTensor
    epilogue_params: Any


class _MatmulElemWiseKernel(GemmKernel):
    """What MatmulEpilogue and MatmulActivation share: the assembly checks, the block loop on both core types
    and the handshake."""

    epilogue_class: type = object
    block_mmad_needs = BlockMmadRequirement(
        PLAIN_CALL, asynchronous=False, reason="the kernel signals the vector cores right after each BlockMmad call")

    def __init__(self, block_mmad, block_epilogue, block_scheduler):
        super().__init__(block_mmad, block_epilogue, block_scheduler)
        what = self.kernel_name()
        if block_epilogue.c_type != block_mmad.c_type:
            raise ConfigError(
                f"{what}: the CType of Mmad and Epilogue should be consistent: {block_mmad.c_type} vs "
                f"{block_epilogue.c_type}"
            )
        if block_mmad.arch != block_epilogue.arch:
            raise ConfigError(
                f"{what}: BlockMmad targets {block_mmad.arch.name}, BlockEpilogue {block_epilogue.arch.name}")
        self.flag_aic_finish_store = CrossCoreFlagWithReverse(FLAG_AIC_FINISH_STORE, RV_FLAG_AIC_FINISH_STORE)
        self._check_ub()

    def check_block_epilogue(self, block_epilogue) -> None:
        if not isinstance(block_epilogue, self.epilogue_class):
            raise ConfigError(f"{self.kernel_name()}: BlockEpilogue must be {self.epilogue_class.__name__}, got "
                              f"{block_epilogue!r}")

    def check_block_scheduler(self, block_scheduler) -> None:
        if not hasattr(block_scheduler, "update") or not hasattr(block_scheduler, "get_block_coord"):
            raise ConfigError(f"{self.kernel_name()}: BlockScheduler must be a block swizzle such as "
                              f"GemmIdentityBlockSwizzle")

    def _check_ub(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    # -- host side -------------------------------------------------------------------------------
    def get_workspace_size(self, args) -> int:
        """``elementSize * m * n`` bytes: the whole C."""
        m, n, _ = args.problem_shape
        return int(args.element_size) * m * n

    # -- device side -----------------------------------------------------------------------------
    def _scheduler(self, params):
        l1 = self.block_mmad.l1_tile_shape
        return self.block_scheduler.update(params.problem_shape, MatrixCoord(l1.m, l1.n))

    def aic(self, ctx, params: MatmulEpilogueParams) -> None:
        """The cube-core program (``operator()<AIC>``)."""
        mmad_spec = self.block_mmad
        l1 = mmad_spec.l1_tile_shape
        scheduler = self._scheduler(params)
        core_loops = scheduler.get_core_loops()
        m, n, _ = params.problem_shape
        gm_c = params.ptr_workspace.reinterpret(mmad_spec.element_c)
        layout_c = RowMajor(m, n)
        flag = self.flag_aic_finish_store.fresh()
        with mmad_spec(ctx.resource) as block_mmad:
            for loop in range(ctx.block_idx, core_loops, ctx.block_num):
                bc = scheduler.get_block_coord(loop)
                actual = scheduler.get_actual_block_shape(bc)
                off_a, off_b = offset_a(params.layout_a, bc, l1), offset_b(params.layout_b, bc, l1)
                off_c = offset_c(layout_c, bc, l1)
                ctx.mark("block", loop=loop, m_idx=bc.m, n_idx=bc.n, row=bc.m * l1.m, col=bc.n * l1.n,
                         rows=actual.m, cols=actual.n)
                block_mmad(params.ptr_a[off_a], params.layout_a, params.ptr_b[off_b], params.layout_b,
                           gm_c[off_c], layout_c, actual)
                cross_core_set_flag_with_reverse(ctx, flag, 2, Pipe.FIX)
            ctx.pipe_barrier(Pipe.ALL)

    def aiv(self, ctx, params: MatmulEpilogueParams) -> None:
        """The vector-core program (``operator()<AIV>``), run by both sub-blocks of every AI core."""
        l1 = self.block_mmad.l1_tile_shape
        scheduler = self._scheduler(params)
        core_loops = scheduler.get_core_loops()
        m, n, _ = params.problem_shape
        gm_c = params.ptr_workspace.reinterpret(self.block_mmad.element_c)
        layout_c = RowMajor(m, n)
        flag = self.flag_aic_finish_store.fresh()
        block_shape = GemmCoord(l1.m, l1.n, l1.k)
        with self.block_epilogue(ctx.resource, params.epilogue_params) as epilogue:
            for loop in range(ctx.ai_core_idx, core_loops, ctx.block_num):
                bc = scheduler.get_block_coord(loop)
                actual = scheduler.get_actual_block_shape(bc)
                gm_block_c = gm_c[offset_c(layout_c, bc, l1)]
                layout_block_c = layout_c.get_tile_layout(actual.m, actual.n)
                cross_core_wait_flag_with_reverse(ctx, flag, 2, Pipe.MTE3)
                ctx.mark("epilogue_block", loop=loop, m_idx=bc.m, n_idx=bc.n)
                epilogue(block_shape, bc, actual, gm_block_c, layout_block_c)
            ctx.pipe_barrier(Pipe.ALL)

    def total_blocks(self, problem_shape) -> int:
        """Blocks of the problem (for progress reporting)."""
        m, n, _ = problem_shape
        return block_count(self.block_mmad.l1_tile_shape, m, n)


class MatmulEpilogue(_MatmulElemWiseKernel):
    """CATLASS ``Gemm::Kernel::MatmulEpilogue<BlockMmad, BlockEpilogue, BlockScheduler>``: ``D = A @ B + X``
    with a synchronous BlockMmad and the one-source element-wise epilogue (see module doc).

    Assembly checks: the epilogue is :class:`BlockEpilogueElemWiseOneSource`, the CTypes agree, the
    BlockMmad is synchronous, and one vector core's half block (``ceil(L1.M / 2)`` rows of
    ``roundup(L1.N, C0)``) fits the epilogue's ``COMPUTE_LENGTH`` (the C++ would overrun UB silently).
    """

    Arguments = MatmulEpilogueArguments
    Params = MatmulEpilogueParams
    epilogue_class = BlockEpilogueElemWiseOneSource

    def _check_ub(self) -> None:
        l1, epi = self.block_mmad.l1_tile_shape, self.block_epilogue
        rows = ceil_div(l1.m, self.arch.aiv_per_aic)
        need = rows * round_up(l1.n, epi.element_compute.c0)
        if need > epi.compute_length:
            raise ConfigError(
                f"{self.kernel_name()}: a vector core's share of a block is {rows} x roundup({l1.n}, "
                f"{epi.element_compute.c0}) = {need} elements but the epilogue's COMPUTE_LENGTH is {epi.compute_length}"
            )

    def to_underlying_arguments(self, args: MatmulEpilogueArguments, workspace: GlobalTensor) -> MatmulEpilogueParams:
        """CATLASS ``ToUnderlyingArguments``: X and D are both ``ptr_c`` with layout RowMajor(m, n)."""
        m, n, k = args.problem_shape
        layout_a, layout_b, _ = operand_layouts(self.block_mmad, m, n, k)
        layout_c = RowMajor.make_layout(self.block_mmad.element_c, m, n)
        epi = ElemWiseOneSourceParams(args.ptr_c, layout_c, args.ptr_c, layout_c)
        return MatmulEpilogueParams(GemmCoord(m, n, k), args.ptr_a, layout_a, args.ptr_b, layout_b, workspace, epi)


@dataclass(frozen=True)
class MatmulActivationArguments:
    """Host-side ``Arguments{problemShape, elementSize, ptrA, ptrB, ptrD}`` (``element_size``: bytes of the
    workspace's C elements, ``sizeof(float)`` in examples 27/28)."""

    problem_shape: GemmCoord
    element_size: int
    ptr_a: GlobalTensor
    ptr_b: GlobalTensor
    ptr_d: GlobalTensor


class MatmulActivation(_MatmulElemWiseKernel):
    """CATLASS ``Gemm::Kernel::MatmulActivation<BlockMmad, BlockEpilogue, BlockScheduler>``
    (``gemm/kernel/matmul_activation.hpp``, examples 27/28): ``C = A @ B`` (fp32) into the workspace, then
    ``D = cast(act(C))`` on the vector cores, with the same block loop and handshake as
    :class:`MatmulEpilogue`.

    Assembly checks: the epilogue is :class:`BlockEpilogueElemWiseNoSource`, the CTypes agree, the BlockMmad
    is synchronous, UB rows of pitch L1.N are whole 32-byte blocks for C and D, and a vector core's half
    block (``ceil(L1.M / 2) x L1.N``) fits ``COMPUTE_LENGTH``.
    """

    Arguments = MatmulActivationArguments
    Params = MatmulEpilogueParams
    epilogue_class = BlockEpilogueElemWiseNoSource

    def _check_ub(self) -> None:
        l1, epi = self.block_mmad.l1_tile_shape, self.block_epilogue
        rows = ceil_div(l1.m, self.arch.aiv_per_aic)
        if rows * l1.n > epi.compute_length:
            raise ConfigError(
                f"{self.kernel_name()}: a vector core's share of a block is {rows} x {l1.n} = {rows * l1.n} elements but "
                f"the epilogue's COMPUTE_LENGTH is {epi.compute_length}"
            )
        for name, e in (("C", epi.c_type.element), ("D", epi.d_type.element)):
            if e.nbytes(l1.n) % 32:
                raise ConfigError(
                    f"{self.kernel_name()}: the UB row pitch L1.N = {l1.n} {e} elements of {name} is not a whole number "
                    f"of 32-byte blocks"
                )

    def to_underlying_arguments(self, args: MatmulActivationArguments, workspace: GlobalTensor) -> MatmulEpilogueParams:
        """CATLASS ``ToUnderlyingArguments``: epilogue reads C from the workspace and writes ``ptr_d``."""
        m, n, k = args.problem_shape
        layout_a, layout_b, _ = operand_layouts(self.block_mmad, m, n, k)
        layout_c = RowMajor.make_layout(self.block_mmad.element_c, m, n)
        epi = ElemWiseNoSourceParams(workspace.reinterpret(self.block_mmad.element_c), layout_c, args.ptr_d, layout_c)
        return MatmulEpilogueParams(GemmCoord(m, n, k), args.ptr_a, layout_a, args.ptr_b, layout_b, workspace, epi)


__all__ = [
    "MatmulActivation",
    "MatmulActivationArguments",
    "MatmulEpilogue",
    "MatmulEpilogueArguments",
    "MatmulEpilogueParams",
]
