"""CATLASS ``Gemm::Kernel::GroupedMatmulSliceM`` (``gemm/kernel/grouped_matmul_slice_m.hpp``; example 02).

Grouped matmul with A split along M: group ``g`` multiplies rows ``[start_g, start_g + m_g)`` of A (m x k)
by its own B_g (k x n; the groups' B matrices lie back to back, ``k*n`` elements apart) into the same rows of
C (m x n). The group list holds inclusive prefix sums of the ``m_g`` (CATLASS's default) or, with
``group_list_segmented=True`` (the ``CATLASS_EXPERIMENTAL_GROUPLIST_SEGMENTED`` build), the ``m_g``
themselves. AIC-only; rows of C past the last group are not written.

Block split: the blocks of all groups form one sequence (group by group, scheduler order inside a group)
dealt round-robin over the cube cores: group g's block 0 goes to core ``startCoreIdx``, which then advances
by the group's block count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ConfigError
from catlass_py.gemm.coord import GemmCoord, MatrixCoord
from catlass_py.kernel.gemm_kernel import GemmKernel, block_count, offset_a, offset_b, offset_c, operand_layouts
from catlass_py.kernel.grouped import RoundRobinGroups, get_value
from catlass_py.layout import RowMajor
from catlass_py.numerics import dtypes as dt


@dataclass(frozen=True)
class GroupedMatmulSliceMArguments:
    """Host-side ``Arguments{problemShape, problemCount, ptrGroupList, ptrA, ptrB, ptrC}``."""

    problem_shape: GemmCoord
    problem_count: int
    ptr_group_list: GlobalTensor
    ptr_a: GlobalTensor
    ptr_b: GlobalTensor
    ptr_c: GlobalTensor


@dataclass(frozen=True)
class GroupedMatmulSliceMParams:
    """Device-side ``Params``: full-problem layouts (A m x k, one group's B k x n, C m x n)."""

    problem_shape: GemmCoord
    problem_count: int
    ptr_group_list: GlobalTensor
    ptr_a: GlobalTensor
    layout_a: Any
    ptr_b: GlobalTensor
    layout_b: Any
    ptr_c: GlobalTensor
    layout_c: Any


def group_sizes(values, segmented: bool) -> list[int]:
    """Group sizes from a group list (prefix sums, or sizes when ``segmented``)."""
    vals = [int(v) for v in values]
    if segmented:
        return vals
    return [v - (vals[i - 1] if i else 0) for i, v in enumerate(vals)]


class GroupedMatmulSliceM(GemmKernel):
    """CATLASS ``GroupedMatmulSliceM<BlockMmad, BlockEpilogue = void, BlockScheduler, ElementGroupList>``:
    per group ``C[rows_g] = A[rows_g] @ B_g``, A sliced along M by the group list. AIC only; takes any BlockMmad
    with the (A, B, C, shape) call, and drains an async one with ``SynchronizeBlock`` at the end."""

    Arguments = GroupedMatmulSliceMArguments
    Params = GroupedMatmulSliceMParams

    def __init__(self, block_mmad, block_epilogue, block_scheduler, element_group_list="int64", *,
                 group_list_segmented: bool = False):
        super().__init__(block_mmad, block_epilogue, block_scheduler)
        what = type(self).__name__
        egl = dt.get_dtype(element_group_list)
        if egl.kind not in ("int", "uint"):
            raise ConfigError(f"{what}: ElementGroupList must be an integer type, got {egl}")
        if block_mmad.a_type.layout is not RowMajor:
            # The group offset m_g * k (CATLASS's gmGroupOffsetA) is only right when A's rows are contiguous.
            raise ConfigError(f"{what}: LayoutA must be RowMajor (groups advance A by m_g * k elements), got "
                              f"{block_mmad.a_type.layout.__name__}")
        if not isinstance(group_list_segmented, bool):
            raise ConfigError(f"{what}: group_list_segmented must be a bool, got {group_list_segmented!r}")
        self.element_group_list = egl
        self.group_list_segmented = group_list_segmented

    def to_underlying_arguments(self, args: GroupedMatmulSliceMArguments, workspace=None) -> GroupedMatmulSliceMParams:
        """``MakeLayout`` of A (m x k), B (k x n, one group) and C (m x n)."""
        m, n, k = args.problem_shape
        layout_a, layout_b, layout_c = operand_layouts(self.block_mmad, m, n, k)
        return GroupedMatmulSliceMParams(GemmCoord(m, n, k), int(args.problem_count), args.ptr_group_list,
                                         args.ptr_a, layout_a, args.ptr_b, layout_b, args.ptr_c, layout_c)

    def total_blocks(self, group_list, n: int) -> int:
        """Blocks of all groups (progress reporting)."""
        l1 = self.block_mmad.l1_tile_shape
        return sum(block_count(l1, mg, n) for mg in group_sizes(group_list, self.group_list_segmented))

    def _current_m(self, ctx, gl, g: int) -> int:
        if self.group_list_segmented:
            return get_value(ctx, gl, g)
        value = get_value(ctx, gl, g)
        return value if g == 0 else value - get_value(ctx, gl, g - 1)

    def aic(self, ctx, params: GroupedMatmulSliceMParams) -> None:
        """The cube-core program (``operator()<AIC>``)."""
        l1 = self.block_mmad.l1_tile_shape
        n, k = params.problem_shape.n, params.problem_shape.k
        deal = RoundRobinGroups(ctx.block_idx, ctx.block_num)
        off_a = off_b = off_c = 0
        row = 0
        with self.block_mmad(ctx.resource) as block_mmad:
            for g in range(params.problem_count):
                m_g = self._current_m(ctx, params.ptr_group_list, g)
                shape = GemmCoord(m_g, n, k)
                layout_a = params.layout_a.get_tile_layout(m_g, k)
                layout_b = params.layout_b
                layout_c = params.layout_c.get_tile_layout(m_g, n)
                scheduler = self.block_scheduler.update(shape, MatrixCoord(l1.m, l1.n))
                core_loops = scheduler.get_core_loops()
                gm_b = params.ptr_b[off_b]  # (L2 cache hint "disable" for one-block-row groups: timing only)
                for loop in deal.loops(core_loops):
                    bc = scheduler.get_block_coord(loop)
                    actual = scheduler.get_actual_block_shape(bc)
                    oa, ob, oc = offset_a(layout_a, bc, l1), offset_b(layout_b, bc, l1), offset_c(layout_c, bc, l1)
                    ctx.mark("block", group=g, loop=loop, m_idx=bc.m, n_idx=bc.n, rows=actual.m, cols=actual.n,
                             row=row + bc.m * l1.m, col=bc.n * l1.n)
                    block_mmad(params.ptr_a[off_a + oa], layout_a, gm_b[ob], layout_b, params.ptr_c[off_c + oc],
                               layout_c, actual)
                off_a += m_g * k
                off_b += k * n
                off_c += m_g * n
                row += m_g
            block_mmad.synchronize_block()
            ctx.pipe_barrier(Pipe.ALL)
