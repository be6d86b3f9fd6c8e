"""CATLASS ``Gemm::Kernel::QuantOptimizedMatmulTla`` (``gemm/kernel/quant_optimized_matmul_tla.hpp``; example 42):
int8 C = A @ B with the TLA preload block and padding prologues, dequantised per token on the vector cores through
a ring of ``WORKSPACE_STAGES`` int32 blocks per AI core.

========  =====================================================================================================
AIV       the paddings of A / B into WA / WB (``PaddingMatrixBlockND``), barrier (mode 0, PIPE_MTE3) and flag 4
          (mode 2, PIPE_MTE3) when any; then, for the blocks of this AI core (``blockIdx / subBlockNum``, step
          ``blockNum``): wait ``flagAicFinishStore[stage]``, dequantise the block from workspace block
          ``stage * blockNum + core`` (``EpilogueAtlasA2PerTokenDequantTla``), set ``flagAivFinishCompute[stage]``
          (mode 2, PIPE_MTE3)
AIC       wait flag 4 when padded; every block: one ``BlockMmadTla<MmadAtlasA2Preload>`` call (with the next
          block's tiles) whose fixpipe callbacks wait ``flagAivFinishCompute[stage]`` before the store once every
          stage was used, and set ``flagAicFinishStore[stage]`` (mode 2, PIPE_FIX) after it; at the end wait for
          the stages still in use
========  =====================================================================================================

Flags: ``flagAicFinishStore[s] = 2s``, ``flagAivFinishCompute[s] = 2s + 1``, the padding flag 4 (so at most 2
workspace stages with padding). Workspace: ``L1.M * L1.N * aicCoreNum * WORKSPACE_STAGES`` int32.
"""

from __future__ import annotations

from dataclasses import dataclass

from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ConfigError
from catlass_py.epilogue.block.per_token_dequant_tla import BlockEpiloguePerTokenDequantTla, PerTokenDequantTlaParams
from catlass_py.gemm.block.capabilities import PRELOAD_TLA_CALL, BlockMmadRequirement
from catlass_py.gemm.coord import GemmCoord, MatrixCoord
from catlass_py.integers import is_int
from catlass_py.kernel.gemm_kernel import GemmKernel, block_count
from catlass_py.kernel.optimized_matmul_tla import PaddingMatrixBlockNDTla, padding_layout
from catlass_py.tile.copy_tla import is_layout_kind, make_tensor
from catlass_py.tla import Layout, get_tile, make_layout_tag

FLAG_AIV_FINISH_PADDING = 4


@dataclass(frozen=True)
class OptimizedMmadArguments:
    """``BlockMmadArguments{ptrA, layoutA, ptrB, layoutB, ptrWA, layoutWA, ptrWB, layoutWB}`` (WA is A when A is
    not padded, likewise WB)."""

    ptr_a: GlobalTensor
    layout_a: Layout
    ptr_b: GlobalTensor
    layout_b: Layout
    ptr_wa: GlobalTensor
    layout_wa: Layout
    ptr_wb: GlobalTensor
    layout_wb: Layout


@dataclass(frozen=True)
class QuantOptimizedMatmulTlaArguments:
    """Host-side ``Arguments{problemShape, aicCoreNum, mmadArgs, epiArgs}``."""

    problem_shape: GemmCoord
    aic_core_num: int
    mmad_args: OptimizedMmadArguments
    epi_args: PerTokenDequantTlaParams


@dataclass(frozen=True)
class QuantOptimizedMatmulTlaParams:
    """Device-side ``Params`` (with the workspace)."""

    problem_shape: GemmCoord
    aic_core_num: int
    mmad_params: OptimizedMmadArguments
    epi_params: PerTokenDequantTlaParams
    ptr_workspace: GlobalTensor


class QuantOptimizedMatmulTla(GemmKernel):
    """CATLASS ``QuantOptimizedMatmulTla<BlockMmad, BlockEpilogue, BlockScheduler, PaddingA, PaddingB,
    WORKSPACE_STAGES>`` (see the module)."""

    Arguments = QuantOptimizedMatmulTlaArguments
    Params = QuantOptimizedMatmulTlaParams
    block_mmad_needs = BlockMmadRequirement(PRELOAD_TLA_CALL, reason="the kernel prefetches the next block and "
                                                                     "hooks the fixpipe through the block's call")

    def __init__(self, block_mmad, block_epilogue, block_scheduler, padding_a=None, padding_b=None,
                 workspace_stages: int = 2):
        super().__init__(block_mmad, block_epilogue, block_scheduler)
        what, tc = self.kernel_name(), block_mmad.tile_copy
        for name, padding, flag, tag in (
                ("PaddingA", padding_a, getattr(tc, "is_padding_a", False), block_mmad.layout_tag_a),
                ("PaddingB", padding_b, getattr(tc, "is_padding_b", False), block_mmad.layout_tag_b)):
            if padding is not None and not isinstance(padding, PaddingMatrixBlockNDTla):
                raise ConfigError(f"{what}: {name} must be a PaddingMatrixBlockNDTla or None, got {padding!r}")
            if (padding is not None) != bool(flag):
                raise ConfigError(f"{what}: {name} is {'set' if padding else 'void'} but the tile copy bundle's "
                                  f"IS_PADDING flag is {bool(flag)}: the BlockMmad would read the wrong layout")
            if padding is not None and padding.layout_in != tag:
                raise ConfigError(f"{what}: {name} pads a {padding.layout_in} operand, the BlockMmad's is {tag}")
        if not is_int(workspace_stages) or workspace_stages < 1:
            raise ConfigError(f"{what}: WORKSPACE_STAGES must be an int >= 1, got {workspace_stages!r}")
        if (padding_a is not None or padding_b is not None) and 2 * workspace_stages > FLAG_AIV_FINISH_PADDING:
            raise ConfigError(f"{what}: {workspace_stages} workspace stages use flags 0..{2 * workspace_stages - 1}, "
                              f"which include the padding flag {FLAG_AIV_FINISH_PADDING} (FLAG_AIV_FINISH_STORE)")
        if 2 * workspace_stages > self.arch.flag_id_count:
            raise ConfigError(f"{what}: {workspace_stages} workspace stages need {2 * workspace_stages} flag ids, the "
                              f"hardware has {self.arch.flag_id_count}")
        if block_mmad.element_c != block_epilogue.element_c:
            raise ConfigError(f"{what}: the epilogue reads {block_epilogue.element_c} C, the BlockMmad stores "
                              f"{block_mmad.element_c}")
        self.padding_a, self.padding_b, self.workspace_stages = padding_a, padding_b, int(workspace_stages)

    def check_block_epilogue(self, block_epilogue) -> None:
        if not isinstance(block_epilogue, BlockEpiloguePerTokenDequantTla):
            raise ConfigError(f"{self.kernel_name()}: BlockEpilogue must be the per-token-dequant TLA epilogue "
                              f"(BlockEpiloguePerTokenDequantTla), got {block_epilogue!r}")

    # -- host side -------------------------------------------------------------------------------
    def can_implement(self, args) -> bool:
        """``CanImplement`` (always true in CATLASS); here the layouts (A, B, WA, WB, scales, D)."""
        what, mm, ma = self.kernel_name(), self.block_mmad, args.mmad_args
        m, n, k = GemmCoord(*args.problem_shape)
        l1 = mm.l1_tile_shape
        if not is_int(args.aic_core_num) or args.aic_core_num < 1:
            raise ConfigError(f"{what}: aicCoreNum must be an integer >= 1, got {args.aic_core_num!r}")
        for label, layout, tag, extent in (("layoutA", ma.layout_a, mm.layout_tag_a, (m, k)),
                                           ("layoutB", ma.layout_b, mm.layout_tag_b, (k, n))):
            good = isinstance(layout, Layout) and is_layout_kind(mm.element_a, layout, tag)
            if not good or tuple(layout.origin_shape) != extent:
                raise ConfigError(f"{what}: {label} must be a {tag} TLA layout of {extent}, got {layout!r}")
        for label, layout, base, padding, tag, tile in (
                ("layoutWA", ma.layout_wa, ma.layout_a, self.padding_a, mm.layout_tag_a, (l1.m, l1.k)),
                ("layoutWB", ma.layout_wb, ma.layout_b, self.padding_b, mm.layout_tag_b, (l1.k, l1.n))):
            want = padding_layout(tag, *base.origin_shape, *tile) if padding is not None else base
            if not isinstance(layout, Layout) or (layout.shape, layout.stride) != (want.shape, want.stride):
                raise ConfigError(f"{what}: {label} must be {want}, got {layout!r}")
        ep, be = args.epi_args, self.block_epilogue
        for label, layout, element, extent in (("layoutScale", ep.layout_scale, be.element_scale, (1, n)),
                                               ("layoutPerTokenScale", ep.layout_per_token_scale,
                                                be.element_per_token_scale, (1, m)),
                                               ("layoutD", ep.layout_d, be.element_d, (m, n))):
            want = make_layout_tag(element, "RowMajor", *extent)
            if not isinstance(layout, Layout) or (layout.shape, layout.stride) != (want.shape, want.stride):
                raise ConfigError(f"{what}: {label} must be the RowMajor layout {want}, got {layout!r}")
        return True

    def get_workspace_size(self, args) -> int:
        """``L1_TILE_M * L1_TILE_N * aicCoreNum * WORKSPACE_STAGES * sizeof(C)``."""
        l1 = self.block_mmad.l1_tile_shape
        return self.block_mmad.element_c.nbytes(l1.m * l1.n * args.aic_core_num * self.workspace_stages)

    def to_underlying_arguments(self, args, workspace):
        self.can_implement(args)
        return QuantOptimizedMatmulTlaParams(GemmCoord(*args.problem_shape), int(args.aic_core_num), args.mmad_args,
                                             args.epi_args, workspace)

    def total_blocks(self, problem_shape) -> int:
        m, n, _ = problem_shape
        return block_count(self.block_mmad.l1_tile_shape, m, n)

    # -- device side -----------------------------------------------------------------------------
    def _tensor_c(self, ctx, params):
        l1 = self.block_mmad.l1_tile_shape
        layout = make_layout_tag(self.block_mmad.element_c, "RowMajor", l1.m * ctx.block_num * self.workspace_stages,
                                 l1.n)
        return make_tensor(params.ptr_workspace.reinterpret(self.block_mmad.element_c), layout)

    def aic(self, ctx, params) -> None:
        """The cube-core program (``operator()<AIC>``)."""
        if self.padding_a is not None or self.padding_b is not None:
            ctx.cross_core_wait_flag(FLAG_AIV_FINISH_PADDING)
        l1, stages, ma = self.block_mmad.l1_tile_shape, self.workspace_stages, params.mmad_params
        scheduler = self.block_scheduler.update(params.problem_shape, MatrixCoord(l1.m, l1.n))
        loops = scheduler.get_core_loops()
        tensor_a, tensor_b = make_tensor(ma.ptr_wa, ma.layout_wa), make_tensor(ma.ptr_wb, ma.layout_wb)
        tensor_c = self._tensor_c(ctx, params)

        def tiles(bc, actual):
            return (get_tile(tensor_a, (bc.m * l1.m, bc.k * l1.k), (actual.m, actual.k)),
                    get_tile(tensor_b, (bc.k * l1.k, bc.n * l1.n), (actual.k, actual.n)))

        stage = used = 0
        with self.block_mmad(ctx.resource) as block_mmad:
            for loop in range(ctx.block_idx, loops, ctx.block_num):
                bc = scheduler.get_block_coord(loop)
                actual = scheduler.get_actual_block_shape(bc)
                before = None
                if used == stages:
                    before = (lambda s=stage: ctx.cross_core_wait_flag(2 * s + 1))
                else:
                    used += 1
                after = (lambda s=stage: ctx.cross_core_set_flag(2 * s, 2, Pipe.FIX))
                ctx.mark("block", loop=loop, m_idx=bc.m, n_idx=bc.n, rows=actual.m, cols=actual.n, row=bc.m * l1.m,
                         col=bc.n * l1.n, stage=stage)
                block_a, block_b = tiles(bc, actual)
                block_c = get_tile(tensor_c, ((stage * ctx.block_num + ctx.block_idx) * l1.m, 0), (actual.m, actual.n))
                has_next = loop + ctx.block_num < loops
                next_a = next_b = None
                next_actual = GemmCoord(0, 0, 0)
                if has_next:
                    nbc = scheduler.get_block_coord(loop + ctx.block_num)
                    next_actual = scheduler.get_actual_block_shape(nbc)
                    next_a, next_b = tiles(nbc, next_actual)
                block_mmad(block_a, block_b, block_c, next_a, next_b, actual, next_actual, loop == ctx.block_idx,
                           has_next, before, after)
                stage = (stage + 1) % stages
            while used > 0:
                ctx.cross_core_wait_flag(2 * ((stage - used) % stages) + 1)
                used -= 1
            ctx.pipe_barrier(Pipe.ALL)

    def aiv(self, ctx, params) -> None:
        """The vector-core program (``operator()<AIV>``)."""
        ma, ep = params.mmad_params, params.epi_params
        padded = False
        for padding, src, layout, dst, layout_w in ((self.padding_a, ma.ptr_a, ma.layout_a, ma.ptr_wa, ma.layout_wa),
                                                    (self.padding_b, ma.ptr_b, ma.layout_b, ma.ptr_wb, ma.layout_wb)):
            if padding is not None:
                padding(ctx.resource)(make_tensor(dst, layout_w), make_tensor(src, layout))
                padded = True
        if padded:
            ctx.cross_core_barrier(0, Pipe.MTE3)
            ctx.cross_core_set_flag(FLAG_AIV_FINISH_PADDING, 2, Pipe.MTE3)
        l1, stages = self.block_mmad.l1_tile_shape, self.workspace_stages
        scheduler = self.block_scheduler.update(params.problem_shape, MatrixCoord(l1.m, l1.n))
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


__all__ = ["OptimizedMmadArguments", "QuantOptimizedMatmulTla"]
