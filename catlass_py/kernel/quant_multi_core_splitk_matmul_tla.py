"""CATLASS ``Gemm::Kernel::QuantMultiCoreSplitkMatmulTla`` (``gemm/kernel/quant_multi_core_splitk_matmul_tla.hpp``;
example 52): int8 C = A @ B with K split across cube cores, the int32 partial sums reduced by the vector cores,
then dequantised per token (D = float(C) * scale[col] * per_token_scale[row]).

========  =====================================================================================================
AIC       every split-K task ``(block, slice)`` of ``SplitkGemmIdentityBlockSwizzle`` round robin: one BlockMmadTla
          call storing the slice's int32 partial block into slice ``s`` of the partial workspace
          (``splitkFactor * m`` rows of n); then cross-core flag 0 (mode 2, PIPE_FIX)
AIV       wait flag 0; barrier with every vector core (mode 0, PIPE_MTE2: every AIC is done); ``SplitkReduceAdd``
          of the slices into the reduced workspace (int32, m x n); ``PipeBarrier<ALL>``; barrier again (every
          reduction done); the dequant epilogue over the blocks of ``GemmIdentityBlockSwizzle<3, 0>``, the AI core
          index ``GetBlockIdx() / GetSubBlockNum()`` stepping by ``GetBlockNum() / GetSubBlockNum()``
========  =====================================================================================================

The split factor: ``aicCoreNum / blocks`` (2 when there are more blocks than cores), at most the number of K
tiles, at least 1. The workspace: ``m * n * 4 * factor + m * n * 4`` bytes, at least 2 MiB. The epilogue's step
is half the AI core count (CATLASS divides the AI core count ``GetBlockNum()`` by the sub-block count), so with
more than one AI core, blocks past the first ``cores / 2`` are dequantised by several AI cores (identical bytes
written twice: ``--detect-races`` reports it, as for example 05's zero fill); with one AI core the step is 0 and
the C++ loop never ends: the simulated vector core raises :class:`~catlass_py.errors.DeadlockError` instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ConfigError, DeadlockError
from catlass_py.epilogue.block.per_token_dequant_tla import BlockEpiloguePerTokenDequantTla, PerTokenDequantTlaParams
from catlass_py.gemm.block.capabilities import TLA_CALL, BlockMmadRequirement
from catlass_py.gemm.block.swizzle import GemmIdentityBlockSwizzle
from catlass_py.gemm.coord import GemmCoord, MatrixCoord, ceil_div
from catlass_py.integers import is_int
from catlass_py.kernel.basic_matmul_tla import check_operand_layouts
from catlass_py.kernel.gemm_kernel import GemmKernel, block_count
from catlass_py.kernel.splitk_matmul import SplitkReduceAdd
from catlass_py.tile.copy_tla import make_tensor
from catlass_py.tla import Layout, get_tile, make_layout_tag

FLAG_AIC_FINISH = 0
MIN_WORKSPACE = 2 * 1024 * 1024


@dataclass(frozen=True)
class QuantMultiCoreSplitkMatmulTlaArguments:
    """Host-side ``Arguments{problemShape, aicCoreNum, ptrA, ptrB, ptrScale, ptrPerTokenScale, ptrD, layoutA, layoutB,
    layoutScale, layoutPerTokenScale, layoutD}``."""

    problem_shape: GemmCoord
    aic_core_num: int
    ptr_a: GlobalTensor
    ptr_b: GlobalTensor
    ptr_scale: GlobalTensor
    ptr_per_token_scale: GlobalTensor
    ptr_d: GlobalTensor
    layout_a: Layout
    layout_b: Layout
    layout_scale: Layout
    layout_per_token_scale: Layout
    layout_d: Layout


@dataclass(frozen=True)
class QuantMultiCoreSplitkMatmulTlaParams:
    """Device-side ``Params`` (with the workspace and the split factor)."""

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
    splitk_factor: int


class QuantMultiCoreSplitkMatmulTla(GemmKernel):
    """CATLASS ``QuantMultiCoreSplitkMatmulTla<BlockMmad, BlockEpilogue, BlockScheduler, ReduceAdd>`` (see the
    module). Assembly checks: a synchronous BlockMmadTla storing int32 (the partial sums), the per-token-dequant TLA
    epilogue reading int32 C, a split-K scheduler, a ``SplitkReduceAdd`` int32 -> int32."""

    Arguments = QuantMultiCoreSplitkMatmulTlaArguments
    Params = QuantMultiCoreSplitkMatmulTlaParams
    block_mmad_needs = BlockMmadRequirement(TLA_CALL, asynchronous=False,
                                            reason="the AIC signals the vector cores after its last call")

    def __init__(self, block_mmad, block_epilogue, block_scheduler, reduce_add: SplitkReduceAdd):
        super().__init__(block_mmad, block_epilogue, block_scheduler)
        what = self.kernel_name()
        if not isinstance(reduce_add, SplitkReduceAdd):
            raise ConfigError(f"{what}: ReduceAdd must be a SplitkReduceAdd, got {reduce_add!r}")
        if (reduce_add.element_accumulator, reduce_add.element_out) != (block_mmad.element_accumulator,
                                                                         block_mmad.element_c):
            raise ConfigError(f"{what}: ReduceAdd reduces {reduce_add.element_accumulator} into "
                              f"{reduce_add.element_out}, the BlockMmad accumulates {block_mmad.element_accumulator} "
                              f"and stores {block_mmad.element_c}")
        if block_mmad.element_c != block_epilogue.element_c:
            raise ConfigError(f"{what}: the epilogue reads {block_epilogue.element_c} C, the BlockMmad stores "
                              f"{block_mmad.element_c}")
        self.reduce_add = reduce_add
        self.epilogue_scheduler = GemmIdentityBlockSwizzle(3, 0)

    def check_block_epilogue(self, block_epilogue) -> None:
        if not isinstance(block_epilogue, BlockEpiloguePerTokenDequantTla):
            raise ConfigError(f"{self.kernel_name()}: BlockEpilogue must be the per-token-dequant TLA epilogue "
                              f"(BlockEpiloguePerTokenDequantTla), got {block_epilogue!r}")

    def check_block_scheduler(self, block_scheduler) -> None:
        if not hasattr(block_scheduler, "get_splitk_slice_idx"):
            raise ConfigError(f"{self.kernel_name()}: BlockScheduler must be a split-K scheduler "
                              f"(SplitkGemmIdentityBlockSwizzle), got {block_scheduler!r}")

    # -- host side -------------------------------------------------------------------------------
    def get_splitk_factor(self, m: int, n: int, k: int, aic_core_num: int) -> int:
        """CATLASS ``GetSplitkFactor``: ``aicCoreNum / blocks`` when that is >= 1 (else 2), at most the number of K
        tiles, at least 1."""
        l1 = self.block_mmad.l1_tile_shape
        factor = 2
        blocks = block_count(l1, m, n)
        if blocks > 0 and aic_core_num // blocks > 0:
            factor = aic_core_num // blocks
        return max(min(factor, ceil_div(k, l1.k)), 1)

    def can_implement(self, args) -> bool:
        """``CanImplement`` (always true in CATLASS); here also the layouts of A, B (the bundle's tags) and of the
        scales (1 x n, 1 x m) and D (m x n), row-major, and a positive ``aicCoreNum``."""
        what, mm = self.kernel_name(), self.block_mmad
        m, n, k = GemmCoord(*args.problem_shape)
        if not is_int(args.aic_core_num) or args.aic_core_num < 1:
            raise ConfigError(f"{what}: aicCoreNum must be an integer >= 1, got {args.aic_core_num!r}")
        check_operand_layouts(what, mm, (args.layout_a, args.layout_b,
                                         make_layout_tag(mm.element_c, mm.layout_tag_c, m, n)), (m, n, k))
        ep = self.block_epilogue
        for label, layout, element, extent in (("layoutScale", args.layout_scale, ep.element_scale, (1, n)),
                                               ("layoutPerTokenScale", args.layout_per_token_scale,
                                                ep.element_per_token_scale, (1, m)),
                                               ("layoutD", args.layout_d, ep.element_d, (m, n))):
            want = make_layout_tag(element, "RowMajor", *extent)
            if not isinstance(layout, Layout) or (layout.shape, layout.stride) != (want.shape, want.stride):
                raise ConfigError(f"{what}: {label} must be the RowMajor layout {want} (MakeLayoutFromTag), got "
                                  f"{layout!r}")
        return True

    def get_workspace_size(self, args) -> int:
        """``max(m * n * sizeof(acc) * factor + m * n * sizeof(C), 2 MiB)``."""
        m, n, k = GemmCoord(*args.problem_shape)
        factor = self.get_splitk_factor(m, n, k, args.aic_core_num)
        total = m * n * self.block_mmad.element_accumulator.nbytes(1) * factor + self.block_mmad.element_c.nbytes(m * n)
        return max(total, MIN_WORKSPACE)

    def to_underlying_arguments(self, args, workspace):
        self.can_implement(args)
        m, n, k = GemmCoord(*args.problem_shape)
        return QuantMultiCoreSplitkMatmulTlaParams(
            GemmCoord(m, n, k), args.ptr_a, args.layout_a, args.ptr_b, args.layout_b, args.ptr_scale,
            args.layout_scale, args.ptr_per_token_scale, args.layout_per_token_scale, args.ptr_d, args.layout_d,
            workspace, self.get_splitk_factor(m, n, k, args.aic_core_num))

    def total_blocks(self, problem_shape, aic_core_num: int) -> int:
        m, n, k = problem_shape
        return block_count(self.block_mmad.l1_tile_shape, m, n) * self.get_splitk_factor(m, n, k, aic_core_num)

    # -- device side -----------------------------------------------------------------------------
    def _partial(self, params):
        return params.ptr_workspace.reinterpret(self.block_mmad.element_accumulator)

    def _reduced(self, params):
        m, n, _ = params.problem_shape
        acc = self.block_mmad.element_accumulator
        offset = acc.nbytes(m * n * params.splitk_factor) // self.block_mmad.element_c.nbytes(1)
        return params.ptr_workspace.reinterpret(self.block_mmad.element_c)[offset]

    def aic(self, ctx, params) -> None:
        """The cube-core program (``operator()<AIC>``)."""
        l1 = self.block_mmad.l1_tile_shape
        m, n, _ = params.problem_shape
        scheduler = self.block_scheduler.update(params.problem_shape, GemmCoord(l1.m, l1.n, l1.k),
                                                params.splitk_factor)
        tensor_a = make_tensor(params.ptr_a, params.layout_a)
        tensor_b = make_tensor(params.ptr_b, params.layout_b)
        layout_partial = make_layout_tag(self.block_mmad.element_accumulator, "RowMajor", m * params.splitk_factor, n)
        tensor_partial = make_tensor(self._partial(params), layout_partial)
        with self.block_mmad(ctx.resource) as block_mmad:
            for loop in range(ctx.block_idx, scheduler.get_core_loops(), ctx.block_num):
                bc = scheduler.get_block_coord(loop)
                sl = scheduler.get_splitk_slice_idx(loop)
                actual = scheduler.get_actual_block_shape(bc, sl)
                row, col, kk = bc.m * l1.m, bc.n * l1.n, bc.k * l1.k
                ctx.mark("block", loop=loop, m_idx=bc.m, n_idx=bc.n, k_idx=bc.k, slice=sl, row=row, col=col,
                         rows=actual.m, cols=actual.n, k=actual.k)
                block_a = get_tile(tensor_a, (row, kk), (actual.m, actual.k))
                block_b = get_tile(tensor_b, (kk, col), (actual.k, actual.n))
                block_partial = get_tile(tensor_partial, (sl * m + row, col), (actual.m, actual.n))
                block_mmad(block_a, block_b, block_partial, actual)
            ctx.cross_core_set_flag(FLAG_AIC_FINISH, 2, Pipe.FIX)
            ctx.pipe_barrier(Pipe.ALL)

    def aiv(self, ctx, params) -> None:
        """The vector-core program (``operator()<AIV>``)."""
        ctx.cross_core_wait_flag(FLAG_AIC_FINISH)
        ctx.cross_core_barrier(0, Pipe.MTE2)
        m, n, _ = params.problem_shape
        reduced = self._reduced(params)
        reduce_add = self.reduce_add(ctx.resource)
        reduce_add(reduced, self._partial(params), m * n, params.splitk_factor)
        ctx.pipe_barrier(Pipe.ALL)
        ctx.cross_core_barrier(0, Pipe.MTE2)
        l1 = self.block_mmad.l1_tile_shape
        scheduler = self.epilogue_scheduler.update(params.problem_shape, MatrixCoord(l1.m, l1.n))
        core_idx = ctx.block_idx // ctx.sub_block_num
        core_num = ctx.block_num // ctx.sub_block_num
        if core_num == 0:
            raise DeadlockError(
                f"{self.kernel_name()}: the epilogue steps by GetBlockNum() / GetSubBlockNum() = {ctx.block_num} / "
                f"{ctx.sub_block_num} = 0 AI cores, so its loop never advances (it hangs on the device); launch on at "
                f"least {ctx.sub_block_num} AI cores")
        ep = self.block_epilogue
        tensor_c = make_tensor(reduced, make_layout_tag(self.block_mmad.element_c, "RowMajor", m, n))
        tensor_scale = make_tensor(params.ptr_scale, params.layout_scale)
        tensor_pts = make_tensor(params.ptr_per_token_scale, params.layout_per_token_scale)
        tensor_d = make_tensor(params.ptr_d, params.layout_d)
        with ep(ctx.resource) as block_epilogue:
            block_epilogue.update_params(PerTokenDequantTlaParams(
                params.ptr_scale, params.layout_scale, params.ptr_per_token_scale, params.layout_per_token_scale,
                params.ptr_d, params.layout_d))
            for loop in range(core_idx, scheduler.get_core_loops(), core_num):
                bc = scheduler.get_block_coord(loop)
                actual = scheduler.get_actual_block_shape(bc)
                row, col = bc.m * l1.m, bc.n * l1.n
                block_epilogue(get_tile(tensor_c, (row, col), (actual.m, actual.n)),
                               get_tile(tensor_scale, (0, col), (1, actual.n)),
                               get_tile(tensor_pts, (0, row), (1, actual.m)),
                               get_tile(tensor_d, (row, col), (actual.m, actual.n)), actual)
        ctx.pipe_barrier(Pipe.ALL)


__all__ = ["QuantMultiCoreSplitkMatmulTla"]
