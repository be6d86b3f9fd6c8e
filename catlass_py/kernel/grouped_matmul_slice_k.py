"""CATLASS ``Gemm::Kernel::GroupedMatmulSliceK`` (``gemm/kernel/grouped_matmul_slice_k.hpp``; example 05).

Grouped matmul with the K axis split by the group list (inclusive prefix sums over K): group ``g`` multiplies
columns ``[start_g, start_g + k_g)`` of A (m x K, ColumnMajor, so a group's slab is ``m * k_g`` contiguous
elements) by rows ``[start_g, start_g + k_g)`` of B (K x n, RowMajor, slab ``k_g * n``) into its own C_g
(``[G, m, n]``, slab ``m * n``).

A mix kernel: the cube cores compute the groups with ``k_g > 0`` (blocks of all such groups dealt
round-robin, as in slice-M), and every vector core walks all groups and fills the C slab of each empty group
(``k_g == 0``) with zeros through :class:`MemFill` - redundantly, every AIV of every AI core writes the same
zeros, as in CATLASS.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import HardEvent, Pipe
from catlass_py.arch.spec import get_arch
from catlass_py.errors import ConfigError
from catlass_py.gemm.coord import GemmCoord, MatrixCoord
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.kernel.gemm_kernel import GemmKernel, block_count, offset_a, offset_b, offset_c, operand_layouts
from catlass_py.kernel.grouped import RoundRobinGroups, get_value
from catlass_py.layout import ColumnMajor, RowMajor, VectorLayout
from catlass_py.numerics import dtypes as dt
from catlass_py.tile.copy_gm_ub import CopyUb2Gm
from catlass_py.tile.vector import duplicate

MAX_BURST_BYTES = 255 * 32  # CATLASS MemFill: one DataCopyPad burst moves at most 255 blocks of 32 bytes


class MemFill:
    """CATLASS ``Gemm::Kernel::MemFill<ArchTag, Element>``: fill a GM range with one value from a vector core.

    ``Duplicate`` the value over ``min(UB, 255*32 B)`` of UB once, then write the range with ``DataCopyPad``
    bursts of that size plus one tail burst. Calling the assembled object with an AIV's resource gives the
    per-core instance (the C++ constructor), which is called as ``fill(dst, element_count, value)``.
    """

    def __init__(self, arch, element):
        self.arch = get_arch(arch)
        self.element = dt.get_dtype(element)
        self.copy_ub_to_gm = CopyUb2Gm(self.arch, GemmType(self.element, VectorLayout))

    def __call__(self, resource) -> "_MemFill":
        return _MemFill(self, resource)


class _MemFill:
    def __init__(self, spec: MemFill, resource):
        self.spec = spec
        self.ctx = resource.ctx
        self.ub = resource.ub_buf.get_buffer_by_byte(spec.element, 0)

    def __call__(self, dst: GlobalTensor, element_count: int, fill_value) -> None:
        spec, ctx = self.spec, self.ctx
        max_burst = MAX_BURST_BYTES * 8 // spec.element.bits
        chunk = min(self.ub.count, max_burst)
        batches, tail = divmod(int(element_count), chunk)
        duplicate(self.ub, fill_value, chunk)
        ctx.set_flag(HardEvent.V_MTE3, 0)
        ctx.wait_flag(HardEvent.V_MTE3, 0)
        offset = 0
        layout = VectorLayout(chunk)
        for _ in range(batches):
            spec.copy_ub_to_gm(dst[offset], self.ub, layout, layout)
            offset += chunk
        if tail:
            spec.copy_ub_to_gm(dst[offset], self.ub, VectorLayout(tail), VectorLayout(tail))


@dataclass(frozen=True)
class GroupedMatmulSliceKArguments:
    """Host-side ``Arguments{problemShape, problemCount, ptrGroupList, ptrA, ptrB, ptrC}``; ``problem_shape.k``
    is the total K."""

    problem_shape: GemmCoord
    problem_count: int
    ptr_group_list: GlobalTensor
    ptr_a: GlobalTensor
    ptr_b: GlobalTensor
    ptr_c: GlobalTensor


@dataclass(frozen=True)
class GroupedMatmulSliceKParams:
    """Device-side ``Params``: layouts of A (m x K), B (K x n) and one group's C (m x n)."""

    problem_shape: GemmCoord
    problem_count: int
    ptr_group_list: GlobalTensor
    ptr_a: GlobalTensor
    layout_a: Any
    ptr_b: GlobalTensor
    layout_b: Any
    ptr_c: GlobalTensor
    layout_c: Any


class GroupedMatmulSliceK(GemmKernel):
    """CATLASS ``GroupedMatmulSliceK<BlockMmad, BlockEpilogue = void, BlockScheduler, ElementGroupList>``:
    ``C_g = A[:, K_g] @ B[K_g, :]`` for each K slice of the group list; the vector cores zero the C of
    empty slices. LayoutA must be ColumnMajor and LayoutB RowMajor (the group offsets ``m * k_g`` and
    ``k_g * n`` assume contiguous slabs)."""

    Arguments = GroupedMatmulSliceKArguments
    Params = GroupedMatmulSliceKParams

    def __init__(self, block_mmad, block_epilogue, block_scheduler, element_group_list="int64"):
        super().__init__(block_mmad, block_epilogue, block_scheduler)
        what = type(self).__name__
        if block_mmad.a_type.layout is not ColumnMajor or block_mmad.b_type.layout is not RowMajor:
            raise ConfigError(
                f"{what}: LayoutA must be ColumnMajor and LayoutB RowMajor (groups advance A by m * k_g and B by "
                f"k_g * n elements), got {block_mmad.a_type.layout.__name__} and {block_mmad.b_type.layout.__name__}")
        egl = dt.get_dtype(element_group_list)
        if egl.kind not in ("int", "uint"):
            raise ConfigError(f"{what}: ElementGroupList must be an integer type, got {egl}")
        self.element_group_list = egl
        self.mem_fill = MemFill(self.arch, block_mmad.element_c)  # MemFill0 = MemFill<ArchTag, ElementC>

    def to_underlying_arguments(self, args: GroupedMatmulSliceKArguments, workspace=None) -> GroupedMatmulSliceKParams:
        """``MakeLayout`` of A (m x K), B (K x n) and C (m x n, one group)."""
        m, n, k = args.problem_shape
        layout_a, layout_b, layout_c = operand_layouts(self.block_mmad, m, n, k)
        return GroupedMatmulSliceKParams(GemmCoord(m, n, k), int(args.problem_count), args.ptr_group_list,
                                         args.ptr_a, layout_a, args.ptr_b, layout_b, args.ptr_c, layout_c)

    def total_blocks(self, group_list, m: int, n: int) -> int:
        """Blocks of all non-empty groups (progress reporting)."""
        l1 = self.block_mmad.l1_tile_shape
        prev, total = 0, 0
        for v in group_list:
            if int(v) != prev:
                total += block_count(l1, m, n)
            prev = int(v)
        return total

    @staticmethod
    def _current_k(ctx, gl, g: int) -> int:
        value = get_value(ctx, gl, g)
        return value if g == 0 else value - get_value(ctx, gl, g - 1)

    def aic(self, ctx, params: GroupedMatmulSliceKParams) -> None:
        """The cube-core program (``operator()<AIC>``): the non-empty groups."""
        l1 = self.block_mmad.l1_tile_shape
        m, n = params.problem_shape.m, params.problem_shape.n
        deal = RoundRobinGroups(ctx.block_idx, ctx.block_num)
        off_a = off_b = off_c = 0
        with self.block_mmad(ctx.resource) as block_mmad:
            for g in range(params.problem_count):
                k_g = self._current_k(ctx, params.ptr_group_list, g)
                if k_g == 0:
                    off_a += m * k_g
                    off_b += k_g * n
                    off_c += m * n
                    continue
                shape = GemmCoord(m, n, k_g)
                layout_a = params.layout_a.get_tile_layout(m, k_g)
                layout_b = params.layout_b.get_tile_layout(k_g, n)
                layout_c = params.layout_c
                scheduler = self.block_scheduler.update(shape, MatrixCoord(l1.m, l1.n))
                for loop in deal.loops(scheduler.get_core_loops()):
                    bc = scheduler.get_block_coord(loop)
                    actual = scheduler.get_actual_block_shape(bc)
                    oa, ob, oc = offset_a(layout_a, bc, l1), offset_b(layout_b, bc, l1), offset_c(layout_c, bc, l1)
                    ctx.mark("block", group=g, loop=loop, m_idx=bc.m, n_idx=bc.n, rows=actual.m, cols=actual.n,
                             row=bc.m * l1.m, col=bc.n * l1.n)
                    block_mmad(params.ptr_a[off_a + oa], layout_a, params.ptr_b[off_b + ob], layout_b,
                               params.ptr_c[off_c + oc], layout_c, actual)
                off_a += m * k_g
                off_b += k_g * n
                off_c += m * n
            block_mmad.synchronize_block()
            ctx.pipe_barrier(Pipe.ALL)

    def aiv(self, ctx, params: GroupedMatmulSliceKParams) -> None:
        """The vector-core program (``operator()<AIV>``): zero the C of every empty group."""
        fill = self.mem_fill(ctx.resource)
        m, n = params.problem_shape.m, params.problem_shape.n
        off_c = 0
        for g in range(params.problem_count):
            k_g = self._current_k(ctx, params.ptr_group_list, g)
            if k_g == 0:
                ctx.mark("zero_fill", group=g, elements=m * n)
                fill(params.ptr_c[off_c], m * n, 0)
            off_c += m * n
        ctx.pipe_barrier(Pipe.ALL)
