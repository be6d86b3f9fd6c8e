"""CATLASS ``Gemm::Kernel::QuantMatmulFullLoadATla`` (``gemm/kernel/quant_matmul_full_loadA_tla.hpp``; example 44):
int8 C = A @ B with A's whole K panel kept in L1, dequantised per token on the vector cores through a ring of
``WORKSPACE_STAGES`` int32 blocks per AI core.

========  =====================================================================================================
AIC       block ``loop`` of the scheduler (``GemmIdentityBlockSwizzleL1FullLoad<1, 0>`` when m > L1.M, else
          ``GemmIdentityBlockSwizzle<3, 0>``) for ``loop = blockIdx, blockIdx + blockNum, ...``: once every stage
          was used, wait ``flagAivFinishCompute[stage]`` before the call; one BlockMmadTla call (``needLoadL1``
          false when A's offset equals the previous block's on this core) storing int32 C into workspace block
          ``stage * blockNum + blockIdx``; then set ``flagAicFinishStore[stage]`` (mode 2, PIPE_FIX); at the end
          wait for every stage still in use
AIV       the same loops (AI core ``blockIdx / subBlockNum``): wait ``flagAicFinishStore[stage]``, dequantise the
          block (``EpilogueAtlasA2PerTokenDequantTla``), set ``flagAivFinishCompute[stage]`` (mode 2, PIPE_MTE3)
========  =====================================================================================================

Flags: ``flagAicFinishStore[s] = 2s``, ``flagAivFinishCompute[s] = 2s + 1``. Workspace: ``L1.M * L1.N * aicCoreNum *
WORKSPACE_STAGES`` int32. ``CanImplement``: ``L1.M * K * sizeof(A) + L1.K * L1.N * 2 * sizeof(B) <= L1_SIZE``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.epilogue.block.per_token_dequant_tla import BlockEpiloguePerTokenDequantTla, PerTokenDequantTlaParams
from catlass_py.gemm.block.capabilities import FULL_LOAD_A_CALL, BlockMmadRequirement
from catlass_py.gemm.block.swizzle import GemmIdentityBlockSwizzle
from catlass_py.gemm.block.swizzle_full_load import GemmIdentityBlockSwizzleL1FullLoad
from catlass_py.gemm.coord import GemmCoord, MatrixCoord
from catlass_py.integers import is_int
from catlass_py.kernel.basic_matmul_tla import check_operand_layouts
from catlass_py.kernel.gemm_kernel import GemmKernel, block_count
from catlass_py.tile.copy_tla import make_tensor
from catlass_py.tla import Layout, get_tile, make_layout_tag


@dataclass(frozen=True)
class FullLoadABlockMmadArguments:
    """``BlockMmadArguments{ptrA, layoutA, ptrB, layoutB, ptrBias}`` (no bias: ``ptr_bias`` None)."""

    ptr_a: GlobalTensor
    layout_a: Layout
    ptr_b: GlobalTensor
    layout_b: Layout
    ptr_bias: Any = None


@dataclass(frozen=True)
class QuantMatmulFullLoadATlaArguments:
    """Host-side ``Arguments{problemShape, aicCoreNum, mmadArgs, epiArgs}``."""

    problem_shape: GemmCoord
    aic_core_num: int
    mmad_args: FullLoadABlockMmadArguments
    epi_args: PerTokenDequantTlaParams


@dataclass(frozen=True)
class QuantMatmulFullLoadATlaParams:
    """Device-side ``Params{problemShape, aicCoreNum, mmadParams, epiParams, ptrWorkspace}``."""

    problem_shape: GemmCoord
    aic_core_num: int
    mmad_params: FullLoadABlockMmadArguments
    epi_params: PerTokenDequantTlaParams
    ptr_workspace: GlobalTensor


class QuantMatmulFullLoadATla(GemmKernel):
    """CATLASS ``QuantMatmulFullLoadATla<BlockMmad, BlockEpilogue, BlockScheduler, WORKSPACE_STAGES>`` (see the
    module). Assembly checks: a BlockMmadTla with ``MmadFullLoadA`` (its call takes ``needLoadL1``) storing int32,
    the per-token-dequant TLA epilogue, an identity or L1-full-load scheduler, ``1 <= WORKSPACE_STAGES`` with
    ``2 * WORKSPACE_STAGES`` flag ids available."""

    Arguments = QuantMatmulFullLoadATlaArguments
    Params = QuantMatmulFullLoadATlaParams
    block_mmad_needs = BlockMmadRequirement(FULL_LOAD_A_CALL, asynchronous=False,
                                            reason="the kernel keeps A's panel in L1 across blocks (needLoadL1)")

    def __init__(self, block_mmad, block_epilogue, block_scheduler, workspace_stages: int = 2):
        super().__init__(block_mmad, block_epilogue, block_scheduler)
        what = self.kernel_name()
        if not is_int(workspace_stages) or workspace_stages < 1:
            raise ConfigError(f"{what}: WORKSPACE_STAGES must be an int >= 1, got {workspace_stages!r}")
        flags = self.arch.flag_id_count
        if 2 * workspace_stages > flags:
            raise ConfigError(f"{what}: {workspace_stages} workspace stages need {2 * workspace_stages} cross-core flag "
                              f"ids, the hardware has {flags}")
        if block_mmad.element_c != block_epilogue.element_c:
            raise ConfigError(f"{what}: the epilogue reads {block_epilogue.element_c} C, the BlockMmad stores "
                              f"{block_mmad.element_c}")
        self.workspace_stages = int(workspace_stages)

    def check_block_epilogue(self, block_epilogue) -> None:
        if not isinstance(block_epilogue, BlockEpiloguePerTokenDequantTla):
            raise ConfigError(f"{self.kernel_name()}: BlockEpilogue must be the per-token-dequant TLA epilogue "
                              f"(BlockEpiloguePerTokenDequantTla), got {block_epilogue!r}")

    def check_block_scheduler(self, block_scheduler) -> None:
        if not isinstance(block_scheduler, (GemmIdentityBlockSwizzle, GemmIdentityBlockSwizzleL1FullLoad)):
            raise ConfigError(f"{self.kernel_name()}: BlockScheduler must be GemmIdentityBlockSwizzle or "
                              f"GemmIdentityBlockSwizzleL1FullLoad, got {block_scheduler!r}")

    # -- host side -------------------------------------------------------------------------------
    def can_implement(self, args) -> bool:
        """``CanImplement``: A's whole panel and two B tiles fit L1 (``L1_TILE_M * K * sizeof(A) + L1_TILE_K *
        L1_TILE_N * 2 * sizeof(B) <= L1_SIZE``; CATLASS returns ``kInvalid``, here an :class:`ArgumentError` with
        the example's message); plus the layouts' formats and extents."""
        what, mm = self.kernel_name(), self.block_mmad
        m, n, k = GemmCoord(*args.problem_shape)
        if not is_int(args.aic_core_num) or args.aic_core_num < 1:
            raise ConfigError(f"{what}: aicCoreNum must be an integer >= 1, got {args.aic_core_num!r}")
        if not mm.fits(k):
            l1 = mm.l1_tile_shape
            raise ArgumentError(
                f"Not satisfy the constraints of quant_matmul_full_loadA_tla. MatA tile cannot be full loaded to L1: "
                f"L1_TILE_M * K * sizeof(A) + L1_TILE_K * L1_TILE_N * 2 * sizeof(B) = "
                f"{mm.element_a.nbytes(l1.m * k) + mm.element_b.nbytes(l1.k * l1.n * 2)} > L1_SIZE {self.arch.l1_size}")
        ma, ep = args.mmad_args, args.epi_args
        check_operand_layouts(what, mm, (ma.layout_a, ma.layout_b, make_layout_tag(mm.element_c, "RowMajor", m, n)),
                              (m, n, k))
        be = self.block_epilogue
        for label, layout, element, extent in (("layoutScale", ep.layout_scale, be.element_scale, (1, n)),
                                               ("layoutPerTokenScale", ep.layout_per_token_scale,
                                                be.element_per_token_scale, (1, m)),
                                               ("layoutD", ep.layout_d, be.element_d, (m, n))):
            want = make_layout_tag(element, "RowMajor", *extent)
            if not isinstance(layout, Layout) or (layout.shape, layout.stride) != (want.shape, want.stride):
                raise ConfigError(f"{what}: {label} must be the RowMajor layout {want} (MakeLayoutFromTag), got "
                                  f"{layout!r}")
        return True

    def get_workspace_size(self, args) -> int:
        """``L1_TILE_M * L1_TILE_N * aicCoreNum * WORKSPACE_STAGES * sizeof(C)``."""
        l1 = self.block_mmad.l1_tile_shape
        return self.block_mmad.element_c.nbytes(l1.m * l1.n * args.aic_core_num * self.workspace_stages)

    def to_underlying_arguments(self, args, workspace):
        self.can_implement(args)
        return QuantMatmulFullLoadATlaParams(GemmCoord(*args.problem_shape), int(args.aic_core_num), args.mmad_args,
                                             args.epi_args, workspace)

    def total_blocks(self, problem_shape) -> int:
        m, n, _ = problem_shape
        return block_count(self.block_mmad.l1_tile_shape, m, n)

    # -- device side -----------------------------------------------------------------------------
    def _scheduler(self, ctx, params):
        l1 = self.block_mmad.l1_tile_shape
        tile = MatrixCoord(l1.m, l1.n)
        if isinstance(self.block_scheduler, GemmIdentityBlockSwizzleL1FullLoad):
            return self.block_scheduler.update(params.problem_shape, tile, block_num=ctx.block_num)
        return self.block_scheduler.update(params.problem_shape, tile)

    def _tensor_c(self, ctx, params):
        l1 = self.block_mmad.l1_tile_shape
        layout = make_layout_tag(self.block_mmad.element_c, "RowMajor", l1.m * ctx.block_num * self.workspace_stages,
                                 l1.n)
        return make_tensor(params.ptr_workspace.reinterpret(self.block_mmad.element_c), layout)

    def aic(self, ctx, params) -> None:
        """The cube-core program (``operator()<AIC>``)."""
        l1, stages = self.block_mmad.l1_tile_shape, self.workspace_stages
        scheduler = self._scheduler(ctx, params)
        ma = params.mmad_params
        tensor_a, tensor_b = make_tensor(ma.ptr_a, ma.layout_a), make_tensor(ma.ptr_b, ma.layout_b)
        tensor_c = self._tensor_c(ctx, params)
        stage = used = 0
        offset_a_prev = None
        with self.block_mmad(ctx.resource) as block_mmad:
            for loop in range(ctx.block_idx, scheduler.get_core_loops(), ctx.block_num):
                bc = scheduler.get_block_coord(loop)
                actual = scheduler.get_actual_block_shape(bc)
                if used == stages:
                    ctx.cross_core_wait_flag(2 * stage + 1)  # flagAivFinishCompute[stage]
                else:
                    used += 1
                row, col, kk = bc.m * l1.m, bc.n * l1.n, bc.k * l1.k
                ctx.mark("block", loop=loop, m_idx=bc.m, n_idx=bc.n, rows=actual.m, cols=actual.n, row=row, col=col,
                         stage=stage)
                offset_a = int(ma.layout_a._eval((row, kk)))
                need_load = loop == ctx.block_idx or offset_a != offset_a_prev
                offset_a_prev = offset_a
                block_mmad(get_tile(tensor_a, (row, kk), (actual.m, actual.k)),
                           get_tile(tensor_b, (kk, col), (actual.k, actual.n)),
                           get_tile(tensor_c, ((stage * ctx.block_num + ctx.block_idx) * l1.m, 0),
                                    (actual.m, actual.n)), actual, need_load)
                ctx.cross_core_set_flag(2 * stage, 2, Pipe.FIX)  # flagAicFinishStore[stage]
                stage = (stage + 1) % stages
            while used > 0:
                ctx.cross_core_wait_flag(2 * ((stage - used) % stages) + 1)
                used -= 1
            ctx.pipe_barrier(Pipe.ALL)

    def aiv(self, ctx, params) -> None:
        """The vector-core program (``operator()<AIV>``)."""
        l1, stages = self.block_mmad.l1_tile_shape, self.workspace_stages
        scheduler = self._scheduler(ctx, params)
        ep = params.epi_params
        core_idx, core_num = ctx.block_idx // ctx.sub_block_num, ctx.block_num
        tensor_c = self._tensor_c(ctx, params)
        tensor_scale = make_tensor(ep.ptr_scale, ep.layout_scale)
        tensor_pts = make_tensor(ep.ptr_per_token_scale, ep.layout_per_token_scale)
        tensor_d = make_tensor(ep.ptr_d, ep.layout_d)
        stage = 0
        with self.block_epilogue(ctx.resource) as block_epilogue:
            block_epilogue.update_params(ep)
            for loop in range(core_idx, scheduler.get_core_loops(), core_num):
                bc = scheduler.get_block_coord(loop)
                actual = scheduler.get_actual_block_shape(bc)
                row, col = bc.m * l1.m, bc.n * l1.n
                ctx.cross_core_wait_flag(2 * stage)
                block_epilogue(get_tile(tensor_c, ((stage * core_num + core_idx) * l1.m, 0), (actual.m, actual.n)),
                               get_tile(tensor_scale, (0, col), (1, actual.n)),
                               get_tile(tensor_pts, (0, row), (1, actual.m)),
                               get_tile(tensor_d, (row, col), (actual.m, actual.n)), actual)
                ctx.cross_core_set_flag(2 * stage + 1, 2, Pipe.MTE3)
                stage = (stage + 1) % stages
        ctx.pipe_barrier(Pipe.ALL)


__all__ = ["FullLoadABlockMmadArguments", "QuantMatmulFullLoadATla"]
