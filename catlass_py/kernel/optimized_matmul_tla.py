"""CATLASS ``Gemm::Kernel::OptimizedMatmulTla`` and its ``PaddingMatrixBlockND`` (``gemm/kernel/optimized_matmul_tla.hpp``;
example 14): C = A @ B with the TLA preload block, an operand whose leading dimension would make the GM -> L1 DMA
slow first copied by the vector cores into a padded workspace.

========  =====================================================================================================
AIV       for each padded operand: ``PaddingMatrixBlockND`` copies A (B) into WA (WB), laid out ``PaddingRowMajor``
          / ``PaddingColumnMajor`` with one L1 tile per block; then barrier with every vector core (mode 0, PIPE_MTE3)
          and cross-core flag 0 (mode 2, PIPE_MTE3)
AIC       with a padded operand: wait flag 0; every block ``loop = blockIdx, blockIdx + blockNum, ...`` of the
          scheduler: one BlockMmadTla (``MmadAtlasA2Preload``) call on the block's tiles of WA, WB and C, with the
          next block's tiles for the prefetch
========  =====================================================================================================

``PaddingMatrixBlockND`` here moves the data exactly as :class:`catlass_py.kernel.PaddingMatrixBlockND` (the 1.x
prologue of ``padding_matmul.hpp``, the same tile split over the vector cores, the same two UB buffers and
chunks): the TLA tensors' layouts are read back as the 1.x ``RowMajor`` / ``PaddingRowMajor`` layouts they equal.
"""

from __future__ import annotations

from dataclasses import dataclass

from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ConfigError
from catlass_py.gemm.block.capabilities import PRELOAD_TLA_CALL, BlockMmadRequirement
from catlass_py.gemm.coord import GemmCoord, MatrixCoord
from catlass_py.kernel.gemm_kernel import GemmKernel, block_count
from catlass_py.kernel.padding_block_nd import PaddingMatrixBlockND
from catlass_py.layout import ColumnMajor, PaddingColumnMajor, PaddingRowMajor, RowMajor
from catlass_py.tile.copy_tla import is_layout_kind, make_tensor
from catlass_py.tla import Layout, get_tile

FLAG_AIV_FINISH_PADDING = 0


def padding_layout(tag: str, rows: int, cols: int, block_rows: int, block_cols: int) -> Layout:
    """The example's ``GetPaddingLayout(layout, blockRows, blockCols)``: a ``rows x cols`` matrix as
    ``((blockRows, ceil(rows / blockRows)), (blockCols, ceil(cols / blockCols)))`` blocks, each block row-major with
    the grid row-major (``RowMajor``), or both column-major (``ColumnMajor``)."""
    nr, nc = -(-rows // block_rows), -(-cols // block_cols)
    if tag == "RowMajor":
        stride = ((block_cols, block_rows * nc * block_cols), (1, block_rows * block_cols))
    else:
        stride = ((1, block_rows * block_cols), (block_rows, nr * block_rows * block_cols))
    return Layout(((block_rows, nr), (block_cols, nc)), stride, (rows, cols))


def padding_workspace_len(rows: int, cols: int, block_rows: int, block_cols: int) -> int:
    """The example's ``GetWorkspaceLen``: elements of a padded copy, ``RoundUp(rows, bR) * RoundUp(cols, bC)``."""
    return -(-rows // block_rows) * block_rows * -(-cols // block_cols) * block_cols


class PaddingMatrixBlockNDTla:
    """CATLASS ``Gemm::Kernel::PaddingMatrixBlockND<ArchTag, TensorIn, TensorOut, COMPUTE_LENGTH>``
    (``optimized_matmul_tla.hpp``): called with a vector core's resource, then with ``(tensor_dst, tensor_src)``
    (TLA tensors over GM: the padded workspace and the operand). Moves the data as the 1.x
    :class:`~catlass_py.kernel.PaddingMatrixBlockND` does (``BUFFER_NUM * COMPUTE_LENGTH * sizeof(Element) <=
    UB_SIZE`` checked there)."""

    def __init__(self, arch, element, layout_in: str, compute_length: int | None = None):
        if layout_in not in ("RowMajor", "ColumnMajor"):
            raise ConfigError(f"PaddingMatrixBlockND: LayoutIn must be RowMajor or ColumnMajor, got {layout_in}")
        self.layout_in = layout_in
        self.impl = PaddingMatrixBlockND(arch, element, RowMajor if layout_in == "RowMajor" else ColumnMajor,
                                         compute_length)
        self.element = self.impl.element

    def __call__(self, resource):
        impl = self.impl(resource)
        tag = self.layout_in

        def pad(tensor_dst, tensor_src) -> None:
            rows, cols = tensor_src.origin_shape
            ld = tensor_src.stride[0] if tag == "RowMajor" else tensor_src.stride[1]
            (br, _), (bc, _) = tensor_dst.layout.shape
            src = (RowMajor if tag == "RowMajor" else ColumnMajor)(rows, cols, ld)
            dst = (PaddingRowMajor if tag == "RowMajor" else PaddingColumnMajor)(rows, cols, br, bc)
            impl(tensor_dst.builtin, tensor_src.builtin, dst, src)

        return pad


@dataclass(frozen=True)
class OptimizedMatmulTlaArguments:
    """Host-side ``Arguments{problemShape, ptrA, layoutA, ptrB, layoutB, ptrC, layoutC, ptrWA, layoutWA, ptrWB,
    layoutWB}``: WA (WB) is A (B) itself with its own layout when it is not padded."""

    problem_shape: GemmCoord
    ptr_a: GlobalTensor
    layout_a: Layout
    ptr_b: GlobalTensor
    layout_b: Layout
    ptr_c: GlobalTensor
    layout_c: Layout
    ptr_wa: GlobalTensor
    layout_wa: Layout
    ptr_wb: GlobalTensor
    layout_wb: Layout


OptimizedMatmulTlaParams = OptimizedMatmulTlaArguments


class OptimizedMatmulTla(GemmKernel):
    """CATLASS ``OptimizedMatmulTla<BlockMmad, BlockEpilogue = void, BlockScheduler, PaddingA, PaddingB>`` (see the
    module). ``padding_a`` / ``padding_b``: a :class:`PaddingMatrixBlockNDTla` or None (``void``)."""

    Arguments = OptimizedMatmulTlaArguments
    Params = OptimizedMatmulTlaParams
    block_mmad_needs = BlockMmadRequirement(PRELOAD_TLA_CALL, reason="OptimizedMatmulTla prefetches the next block "
                                                                     "through the block's call")

    def __init__(self, block_mmad, block_epilogue, block_scheduler, padding_a=None, padding_b=None):
        super().__init__(block_mmad, block_epilogue, block_scheduler)
        tc = block_mmad.tile_copy
        for name, padding, flag, tag in (
                ("PaddingA", padding_a, getattr(tc, "is_padding_a", False), block_mmad.layout_tag_a),
                ("PaddingB", padding_b, getattr(tc, "is_padding_b", False), block_mmad.layout_tag_b)):
            if padding is not None and not isinstance(padding, PaddingMatrixBlockNDTla):
                raise ConfigError(f"{self.kernel_name()}: {name} must be a PaddingMatrixBlockNDTla or None, got "
                                  f"{padding!r}")
            if (padding is not None) != bool(flag):
                raise ConfigError(f"{self.kernel_name()}: {name} is {'set' if padding else 'void'} but the tile copy "
                                  f"bundle's IS_PADDING flag is {bool(flag)}: the BlockMmad would read the wrong layout")
            if padding is not None and padding.layout_in != tag:
                raise ConfigError(f"{self.kernel_name()}: {name} pads a {padding.layout_in} operand, the BlockMmad's is "
                                  f"{tag}")
        self.padding_a, self.padding_b = padding_a, padding_b
        if padding_a is None and padding_b is None:
            self.aiv = None

    # -- host side -------------------------------------------------------------------------------
    def can_implement(self, args) -> bool:
        """``CanImplement`` (always true in CATLASS); here the layouts: A, B, C of the problem's extents in the
        bundle's formats, WA / WB the operand's layout or its padding layout with one L1 tile per block."""
        what, mm = self.kernel_name(), self.block_mmad
        m, n, k = GemmCoord(*args.problem_shape)
        l1 = mm.l1_tile_shape
        for label, layout, element, tag, extent in (("layoutA", args.layout_a, mm.element_a, mm.layout_tag_a, (m, k)),
                                                    ("layoutB", args.layout_b, mm.element_b, mm.layout_tag_b, (k, n)),
                                                    ("layoutC", args.layout_c, mm.element_c, "RowMajor", (m, n))):
            good = isinstance(layout, Layout) and is_layout_kind(element, layout, tag)
            if not good or tuple(layout.origin_shape) != extent:
                raise ConfigError(f"{what}: {label} must be a {tag} TLA layout of {extent}, got {layout!r}")
        for label, layout, base, padding, tag, tile in (
                ("layoutWA", args.layout_wa, args.layout_a, self.padding_a, mm.layout_tag_a, (l1.m, l1.k)),
                ("layoutWB", args.layout_wb, args.layout_b, self.padding_b, mm.layout_tag_b, (l1.k, l1.n))):
            want = padding_layout(tag, *base.origin_shape, *tile) if padding is not None else base
            if not isinstance(layout, Layout) or (layout.shape, layout.stride) != (want.shape, want.stride):
                kind = "the padding layout with one L1 tile per block" if padding else "the operand layout"
                raise ConfigError(f"{what}: {label} must be {want} ({kind}), got {layout!r}")
        return True

    def to_underlying_arguments(self, args, workspace=None):
        self.can_implement(args)
        return args

    def total_blocks(self, problem_shape) -> int:
        m, n, _ = problem_shape
        return block_count(self.block_mmad.l1_tile_shape, m, n)

    # -- device side -----------------------------------------------------------------------------
    def aiv(self, ctx, params) -> None:  # noqa: F811 - None when no operand is padded (set in __init__)
        """The vector-core program (``operator()<AIV>``): the paddings, then the barrier and the flag."""
        for padding, src, layout, dst, layout_w in ((self.padding_a, params.ptr_a, params.layout_a, params.ptr_wa,
                                                     params.layout_wa),
                                                    (self.padding_b, params.ptr_b, params.layout_b, params.ptr_wb,
                                                     params.layout_wb)):
            if padding is not None:
                padding(ctx.resource)(make_tensor(dst, layout_w), make_tensor(src, layout))
        ctx.cross_core_barrier(0, Pipe.MTE3)
        ctx.cross_core_set_flag(FLAG_AIV_FINISH_PADDING, 2, Pipe.MTE3)
        ctx.pipe_barrier(Pipe.ALL)

    def aic(self, ctx, params) -> None:
        """The cube-core program (``operator()<AIC>``)."""
        if self.padding_a is not None or self.padding_b is not None:
            ctx.cross_core_wait_flag(FLAG_AIV_FINISH_PADDING)
        l1 = self.block_mmad.l1_tile_shape
        scheduler = self.block_scheduler.update(params.problem_shape, MatrixCoord(l1.m, l1.n))
        loops = scheduler.get_core_loops()
        tensor_a = make_tensor(params.ptr_wa, params.layout_wa)
        tensor_b = make_tensor(params.ptr_wb, params.layout_wb)
        tensor_c = make_tensor(params.ptr_c, params.layout_c)

        def tiles(bc, actual):
            return (get_tile(tensor_a, (bc.m * l1.m, bc.k * l1.k), (actual.m, actual.k)),
                    get_tile(tensor_b, (bc.k * l1.k, bc.n * l1.n), (actual.k, actual.n)))

        with self.block_mmad(ctx.resource) as block_mmad:
            for loop in range(ctx.block_idx, loops, ctx.block_num):
                bc = scheduler.get_block_coord(loop)
                actual = scheduler.get_actual_block_shape(bc)
                ctx.mark("block", loop=loop, m_idx=bc.m, n_idx=bc.n, rows=actual.m, cols=actual.n, row=bc.m * l1.m,
                         col=bc.n * l1.n)
                block_a, block_b = tiles(bc, actual)
                block_c = get_tile(tensor_c, (bc.m * l1.m, bc.n * l1.n), (actual.m, actual.n))
                has_next = loop + ctx.block_num < loops
                next_a = next_b = None
                next_actual = GemmCoord(0, 0, 0)
                if has_next:
                    nbc = scheduler.get_block_coord(loop + ctx.block_num)
                    next_actual = scheduler.get_actual_block_shape(nbc)
                    next_a, next_b = tiles(nbc, next_actual)
                block_mmad(block_a, block_b, block_c, next_a, next_b, actual, next_actual, loop == ctx.block_idx,
                           has_next)
            ctx.pipe_barrier(Pipe.ALL)


__all__ = ["OptimizedMatmulTla", "PaddingMatrixBlockNDTla", "padding_layout", "padding_workspace_len"]

