"""CATLASS ``Gemm::Kernel::BasicMatmulTla`` (``gemm/kernel/basic_matmul_tla.hpp``; example 13): C = A @ B on TLA
tensors.

AIC-only, the walk of :class:`~catlass_py.kernel.BasicMatmul`: block ``i`` of the scheduler goes to cube core
``i % blockNum``. The host passes TLA layouts of A, B and C (``tla::MakeLayout<Element, LayoutTag>``,
:func:`catlass_py.tla.make_layout_tag`); the cube core wraps the GM pointers in TLA tensors and hands the
BlockMmadTla each block's tiles (``GetTile`` at the block's element coordinate, the tail blocks clipped by their
origin shape).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ConfigError
from catlass_py.gemm.block.capabilities import TLA_CALL, BlockMmadRequirement
from catlass_py.gemm.coord import GemmCoord, MatrixCoord
from catlass_py.kernel.gemm_kernel import GemmKernel, block_count
from catlass_py.tile.copy_tla import is_layout_kind, make_tensor
from catlass_py.tla import Layout, get_tile, make_layout_tag


@dataclass(frozen=True)
class BasicMatmulTlaArguments:
    """Host-side ``Arguments{problemShape, ptrA, layoutA, ptrB, layoutB, ptrC, layoutC}`` (TLA layouts)."""

    problem_shape: GemmCoord
    ptr_a: GlobalTensor
    layout_a: Layout
    ptr_b: GlobalTensor
    layout_b: Layout
    ptr_c: GlobalTensor
    layout_c: Layout


@dataclass(frozen=True)
class BasicMatmulTlaParams:
    """Device-side ``Params`` (the arguments as they are)."""

    problem_shape: GemmCoord
    ptr_a: GlobalTensor
    layout_a: Any
    ptr_b: GlobalTensor
    layout_b: Any
    ptr_c: GlobalTensor
    layout_c: Any


def operand_layouts_tla(block_mmad, m: int, n: int, k: int) -> tuple[Layout, Layout, Layout]:
    """``tla::MakeLayout<Element, LayoutTag>`` of A (m x k), B (k x n) and C (m x n) in the layout tags of the
    BlockMmadTla's tile copy bundle (what the C++ examples build on the host)."""
    mm = block_mmad
    return (make_layout_tag(mm.element_a, mm.layout_tag_a, m, k), make_layout_tag(mm.element_b, mm.layout_tag_b, k, n),
            make_layout_tag(mm.element_c, mm.layout_tag_c, m, n))


def check_operand_layouts(kernel: str, block_mmad, layouts, shape) -> None:
    """The host layouts must have the BlockMmadTla's formats (CATLASS: ``LayoutA`` etc. are types of the bundle, so
    another layout does not compile) and cover the problem's extents."""
    m, n, k = shape
    for label, layout, element, tag, extent in (
        ("layoutA", layouts[0], block_mmad.element_a, block_mmad.layout_tag_a, (m, k)),
        ("layoutB", layouts[1], block_mmad.element_b, block_mmad.layout_tag_b, (k, n)),
        ("layoutC", layouts[2], block_mmad.element_c, block_mmad.layout_tag_c, (m, n)),
    ):
        if not isinstance(layout, Layout) or not is_layout_kind(element, layout, tag):
            raise ConfigError(f"{kernel}: {label} must be a TLA {tag} layout of {element} (tla.make_layout_tag), "
                              f"got {layout!r}")
        if tuple(layout.origin_shape) != extent:
            raise ConfigError(f"{kernel}: {label} has origin shape {tuple(layout.origin_shape)}, the problem needs "
                              f"{extent}")


class BasicMatmulTla(GemmKernel):
    """CATLASS ``BasicMatmulTla<BlockMmad, BlockEpilogue = void, BlockScheduler>``: C = A @ B with a BlockMmadTla
    (TLA call: the block's tensors of A, B, C and its actual shape). AIC only."""

    Arguments = BasicMatmulTlaArguments
    Params = BasicMatmulTlaParams
    block_mmad_needs = BlockMmadRequirement(TLA_CALL, reason="BasicMatmulTla hands the block TLA tensors")

    # -- host side -------------------------------------------------------------------------------
    def can_implement(self, args: BasicMatmulTlaArguments) -> bool:
        """``CanImplement`` (always true in CATLASS); here also the layouts' formats and extents."""
        check_operand_layouts(self.kernel_name(), self.block_mmad, (args.layout_a, args.layout_b, args.layout_c),
                              GemmCoord(*args.problem_shape))
        return True

    def to_underlying_arguments(self, args: BasicMatmulTlaArguments, workspace=None) -> BasicMatmulTlaParams:
        self.can_implement(args)
        return BasicMatmulTlaParams(GemmCoord(*args.problem_shape), args.ptr_a, args.layout_a, args.ptr_b,
                                    args.layout_b, args.ptr_c, args.layout_c)

    def total_blocks(self, problem_shape) -> int:
        m, n, _ = problem_shape
        return block_count(self.block_mmad.l1_tile_shape, m, n)

    # -- device side -----------------------------------------------------------------------------
    def aic(self, ctx, params: BasicMatmulTlaParams) -> None:
        """The cube-core program (``operator()<AIC>``)."""
        l1 = self.block_mmad.l1_tile_shape
        scheduler = self.block_scheduler.update(params.problem_shape, MatrixCoord(l1.m, l1.n))
        tensor_a = make_tensor(params.ptr_a, params.layout_a)
        tensor_b = make_tensor(params.ptr_b, params.layout_b)
        tensor_c = make_tensor(params.ptr_c, params.layout_c)
        with self.block_mmad(ctx.resource) as block_mmad:
            for loop in range(ctx.block_idx, scheduler.get_core_loops(), ctx.block_num):
                bc = scheduler.get_block_coord(loop)
                actual = scheduler.get_actual_block_shape(bc)
                row, col, kk = bc.m * l1.m, bc.n * l1.n, bc.k * l1.k
                ctx.mark("block", loop=loop, m_idx=bc.m, n_idx=bc.n, rows=actual.m, cols=actual.n, row=row, col=col)
                block_a = get_tile(tensor_a, (row, kk), (actual.m, actual.k))
                block_b = get_tile(tensor_b, (kk, col), (actual.k, actual.n))
                block_c = get_tile(tensor_c, (row, col), (actual.m, actual.n))
                block_mmad(block_a, block_b, block_c, actual)
            ctx.pipe_barrier(Pipe.ALL)


__all__ = ["BasicMatmulTla", "check_operand_layouts", "operand_layouts_tla"]
