"""CATLASS ``Gemm::Kernel::KernelSparseMatmul`` (``gemm/kernel/sparse_matmul_tla.hpp``; example 41): int32 C = A @ B
for an int8 A and a 4:2-sparse int8 B given compressed (:mod:`catlass_py.sparse`): the dense ``k/2 x n`` B
(ColumnMajor) and its index in NZ.

AIC only. Each cube core walks the tiles of ``BlockSchedulerIterateK`` (``L1.M x L1.N``, the whole K) from its
block index in steps of the launch's block count; for a tile the kernel points A, B, C and the index at the tile's
origin (``layout(coord)`` of the block's coordinate; the index through ``BIndexLayout``, nZ fractals of 8 bytes x
16 columns) with the whole layouts, and calls ``BlockMmadSparseTla(c, a, b, index, blockShape)``.

``CanImplement``: ``CheckShape`` (one batch, ``k % 8 == 0``, the inner extents at most 65536) and the tile rule
``L0_M * L0_K * sizeof(A) * STAGES <= L0A_SIZE``, ``L0_N * L0_K * sizeof(B) * STAGES <= L0B_SIZE``, ``L0_M * L0_N *
sizeof(C) <= L0C_SIZE``, ``(L1_M * L1_K * sizeof(A) + L1_K * L1_N * sizeof(B)) * STAGES <= L1_SIZE``. The example
calls it and ignores the answer; here the tile rule is an assembly :class:`ConfigError` and the shape rules an
:class:`ArgumentError` of :meth:`KernelSparseMatmul.can_implement`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catlass_py.arch.memory import GlobalTensor
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm.block.capabilities import SPARSE_TLA_CALL, BlockMmadRequirement
from catlass_py.gemm.block.scheduler_iterate_k import BlockSchedulerIterateK, MatmulShape, get_block_num
from catlass_py.gemm.coord import ceil_div
from catlass_py.integers import is_int
from catlass_py.kernel.gemm_kernel import GemmKernel
from catlass_py.tile.copy_sparse_tla import INDEX_LAYOUT_DTYPE
from catlass_py.tile.copy_tla import is_layout_kind, make_tensor
from catlass_py.tla import Layout, make_layout_tag

#: the largest K (A row-major, B column-major) CheckShape allows (MATRIX_INNER_DIM_LIMIT_SIZE)
MATRIX_INNER_DIM_LIMIT_SIZE = 65536
DENSE_MATRIX_B_OFFSET, INDEX_MATRIX_OFFSET = 2, 8


def index_layout(n: int, k: int) -> Layout:
    """The kernel's ``BIndexLayout`` for a ``k x n`` B: ``((8, ceil(k/8 / 8)), (16, ceil(n / 16)))`` with strides
    ``((1, round_up(n, 16) * 8), (8, 128))`` over bytes, i.e. TLA ``nZ`` of 4-byte elements of the ``k/8 x n`` index."""
    return make_layout_tag(INDEX_LAYOUT_DTYPE, "nZ", k // INDEX_MATRIX_OFFSET, n)


@dataclass(frozen=True)
class SparseBlockMmadArguments:
    """``BlockMmadArguments{aGmAddr, bGmAddr, cGmAddr, biasGmAddr, indexGmAddr, layoutA, layoutB, layoutC}``: the
    dense B (``k/2 x n``, ``layout_b`` ColumnMajor) and the NZ index (bytes); no bias (``ptr_bias`` None)."""

    ptr_a: GlobalTensor
    ptr_b: GlobalTensor
    ptr_c: GlobalTensor
    ptr_bias: Any
    ptr_index: GlobalTensor
    layout_a: Layout
    layout_b: Layout
    layout_c: Layout


@dataclass(frozen=True)
class KernelSparseMatmulArguments:
    """Host-side ``Arguments{problemShape, mmadArgs, schedulerArgs{aicoreNum}}``."""

    problem_shape: MatmulShape
    mmad_args: SparseBlockMmadArguments
    aicore_num: int


@dataclass(frozen=True)
class KernelSparseMatmulParams:
    """Device-side ``Params`` (the arguments as they are)."""

    problem_shape: MatmulShape
    mmad_params: SparseBlockMmadArguments
    aicore_num: int


class KernelSparseMatmul(GemmKernel):
    """CATLASS ``KernelSparseMatmul<ProblemShape, BlockMmad, BlockEpilogue = void, BlockScheduler>`` (see the
    module): a ``BlockMmadSparseTla`` and a ``BlockSchedulerIterateK``."""

    Arguments = KernelSparseMatmulArguments
    Params = KernelSparseMatmulParams
    block_mmad_needs = BlockMmadRequirement(SPARSE_TLA_CALL, asynchronous=False,
                                            reason="KernelSparseMatmul hands the block the index tensor")
    STAGES = 2

    def __init__(self, block_mmad, block_epilogue, block_scheduler):
        super().__init__(block_mmad, block_epilogue, block_scheduler)
        mm, arch, what = block_mmad, self.arch, self.kernel_name()
        l1, l0 = mm.l1_tile_shape, mm.l0_tile_shape
        if tuple(block_scheduler.l1_shape) != tuple(l1) or tuple(block_scheduler.l0_shape) != tuple(l0):
            raise ConfigError(f"{what}: the BlockScheduler was assembled for L1 {tuple(block_scheduler.l1_shape)} / L0 "
                              f"{tuple(block_scheduler.l0_shape)}, the BlockMmad has L1 {tuple(l1)} / L0 {tuple(l0)}")
        s, ea, eb, acc = self.STAGES, mm.element_a, mm.element_b, mm.element_accumulator
        rules = (
            ("L0_M * L0_K * sizeof(AType) * STAGES <= L0A_SIZE", ea.nbytes(l0.m * l0.k) * s, arch.l0a_size),
            ("L0_N * L0_K * sizeof(BType) * STAGES <= L0B_SIZE", eb.nbytes(l0.n * l0.k) * s, arch.l0b_size),
            ("L0_M * L0_N * sizeof(CType) <= L0C_SIZE", acc.nbytes(l0.m * l0.n), arch.l0c_size),
            ("(L1_M * L1_K * sizeof(AType) + L1_K * L1_N * sizeof(BType)) * STAGES <= L1_SIZE",
             (ea.nbytes(l1.m * l1.k) + eb.nbytes(l1.k * l1.n)) * s, arch.l1_size),
        )
        for formula, need, have in rules:
            if need > have:
                raise ConfigError(f"{what}: CanImplement's tile rule fails: {formula} ({need} > {have})")

    def check_block_scheduler(self, block_scheduler) -> None:
        if not isinstance(block_scheduler, BlockSchedulerIterateK):
            raise ConfigError(f"{self.kernel_name()}: BlockScheduler must be a BlockSchedulerIterateK, got "
                              f"{block_scheduler!r}")

    # -- host side -------------------------------------------------------------------------------
    def can_implement(self, args: KernelSparseMatmulArguments) -> bool:
        """``CanImplement``'s ``CheckShape`` as :class:`ArgumentError`\\ s (one batch, ``k % 8 == 0``, ``k <=
        65536``), plus the layouts' formats and extents and the scheduler's core count."""
        what, mm = self.kernel_name(), self.block_mmad
        s = args.problem_shape
        if not isinstance(s, MatmulShape):
            raise ConfigError(f"{what}: problemShape must be a MatmulShape(m, n, k, b), got {s!r}")
        if s.b > 1:
            raise ArgumentError(f"{what}: Sparse only support batch 1 (b = {s.b})")
        if s.k % 8:
            raise ArgumentError(f"{what}: Sparse k must be multiple of 8 (k = {s.k})")
        if s.k > MATRIX_INNER_DIM_LIMIT_SIZE:
            raise ArgumentError(f"{what}: k = {s.k} exceeds the inner-dimension limit {MATRIX_INNER_DIM_LIMIT_SIZE} "
                                "(row-major A and column-major B)")
        if not is_int(args.aicore_num) or args.aicore_num < 1:
            raise ConfigError(f"{what}: aicoreNum must be an int >= 1, got {args.aicore_num!r}")
        ma = args.mmad_args
        for label, layout, element, tag, extent in (
            ("layoutA", ma.layout_a, mm.element_a, "RowMajor", (s.m, s.k)),
            ("layoutB", ma.layout_b, mm.element_b, "ColumnMajor", (s.k // DENSE_MATRIX_B_OFFSET, s.n)),
            ("layoutC", ma.layout_c, mm.element_c, "RowMajor", (s.m, s.n)),
        ):
            if not isinstance(layout, Layout) or not is_layout_kind(element, layout, tag):
                raise ConfigError(f"{what}: {label} must be a TLA {tag} layout of {element} (tla.make_layout_tag), "
                                  f"got {layout!r}")
            if tuple(layout.origin_shape) != extent:
                raise ConfigError(f"{what}: {label} has origin shape {tuple(layout.origin_shape)}, the problem needs "
                                  f"{extent}")
        if ma.ptr_bias is not None:
            raise ConfigError(f"{what}: biasGmAddr must be null (the block has no bias path)")
        return True

    def to_underlying_arguments(self, args: KernelSparseMatmulArguments, workspace=None) -> KernelSparseMatmulParams:
        self.can_implement(args)
        return KernelSparseMatmulParams(args.problem_shape, args.mmad_args, int(args.aicore_num))

    def block_num(self, problem_shape: MatmulShape, aicore_num: int) -> int:
        """The AI cores the example launches (``GetTotalBlockNum<L1TileShape>(aicCoreNum, shape)``)."""
        return get_block_num(self.block_mmad.l1_tile_shape, aicore_num, problem_shape)

    def total_blocks(self, problem_shape) -> int:
        m, n = problem_shape[0], problem_shape[1]
        l1 = self.block_mmad.l1_tile_shape
        return ceil_div(m, l1.m) * ceil_div(n, l1.n)

    # -- device side -----------------------------------------------------------------------------
    def aic(self, ctx, params: KernelSparseMatmulParams) -> None:
        """The cube-core program (``operator()`` on the AIC; the AIV returns at once)."""
        if ctx.block_idx >= ctx.block_num:
            return
        s, ma = params.problem_shape, params.mmad_params
        m, n, k = s.m, s.n, s.k
        layout_idx = index_layout(n, k)
        scheduler = self.block_scheduler.update(s, ctx.block_idx, ctx.block_num, params.aicore_num)
        with self.block_mmad(ctx.resource) as block_mmad:
            for tile in range(ctx.block_idx, scheduler.get_tile_num(), ctx.block_num):
                shape = scheduler.get_block_shape(tile)
                row, col, kk, batch = scheduler.get_block_coord(tile)
                if shape[0] <= 0 or shape[1] <= 0:
                    return
                ctx.mark("block", loop=tile, m_idx=row // self.block_mmad.l1_tile_shape.m,
                         n_idx=col // self.block_mmad.l1_tile_shape.n, rows=shape[0], cols=shape[1], row=row, col=col)
                offset_a = int(ma.layout_a._eval((row, kk))) + batch * m * k
                offset_b = int(ma.layout_b._eval((kk, col))) + batch * n * k // DENSE_MATRIX_B_OFFSET
                offset_c = int(ma.layout_c._eval((row, col))) + batch * m * n
                offset_idx = int(layout_idx._eval((kk, col))) + batch * n * k // INDEX_MATRIX_OFFSET
                block_mmad(make_tensor(ma.ptr_c[offset_c], ma.layout_c),
                           make_tensor(ma.ptr_a[offset_a], ma.layout_a),
                           make_tensor(ma.ptr_b[offset_b], ma.layout_b),
                           make_tensor(ma.ptr_index[offset_idx], layout_idx), shape)


__all__ = ["KernelSparseMatmul", "SparseBlockMmadArguments", "index_layout"]
