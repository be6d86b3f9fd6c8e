"""CATLASS ``Gemm::Kernel::StreamkMatmul`` and ``StreamkReduceAdd`` (example 37, ``gemm/kernel/streamk_matmul.hpp``).

Stream-K: of the ``Lm * Ln`` output blocks, the largest multiple of the core count is dealt whole (normal
blocks, stored straight to C by the fixpipe); the K tiles of the remaining ``(Lm*Ln) % cores`` tail blocks
are spread evenly over the cores (``StreamkGemmIdentityBlockSwizzle``). A core's K range may end inside one
tail block and continue into the next ("cross" block), so each core owns two fp32 workspace slots of
``L1.M x L1.N``: slot ``2c`` for the first (or only) part of its range and ``2c + 1`` for the head of the
next block. The vector cores then add the partial sums of every tail block and store it.

==========  ====================================================================================
AIC c       computes its stream-K range *before* its last normal block; sets flag 1 (mode 2,
            PIPE_FIX) right after the stream-K range (at the start if it has none)
AIV         waits flag 1; barrier of all vector cores (mode 0: every partial sum is stored); reduce
            the tail blocks (the AIVs of the cores that computed a block's K range share its rows)
==========  ====================================================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catlass_py.arch.memory import GlobalTensor, Resource
from catlass_py.arch.pipes import HardEvent, Pipe
from catlass_py.arch.spec import get_arch
from catlass_py.errors import ConfigError, KernelError
from catlass_py.gemm.block.capabilities import STREAMK_CALL, BlockMmadRequirement
from catlass_py.gemm.block.swizzle_splitk import StreamkBlockDec
from catlass_py.gemm.coord import GemmCoord, ceil_div, round_up
from catlass_py.kernel.gemm_kernel import GemmKernel, offset_a, offset_b, offset_c, operand_layouts
from catlass_py.kernel.reduce_add import add_slices_and_cast, check_positive_int, reduce_copies, reduce_element_types
from catlass_py.layout import RowMajor

BYTE_PER_BLK = 32
FLAG_AIV_FINISH_STORE = 0
FLAG_AIC_FINISH = 1
MIN_WORKSPACE = 2 * 1024 * 1024


class StreamkReduceAdd:
    """Assembled CATLASS ``Gemm::Kernel::StreamkReduceAdd<ArchTag, BlockScheduler, ElementAccumulator,
    ElementOut, COMPUTE_LENGTH>``: adds the stream-K partial sums of every tail block.

    For tail block b, the cores ``start = GetCoreIdx(b)`` .. ``end = GetCoreIdx(b+1)`` (plus ``end`` when b's
    tail is the head of that core's range) hold its slices; their vector cores split the block's rows into
    chunks of ``tilePerCore`` rows (``COMPUTE_LENGTH`` shared by the slices), load every slice (the first from
    the cross slot ``2*start+1`` when b starts inside core ``start``'s range), add them in order (fp32), cast
    (``CAST_NONE`` to half, ``CAST_RINT`` otherwise) and store. Check: ``COMPUTE_LENGTH * sizeof(acc) <= UB``.
    """

    def __init__(self, arch, block_scheduler, element_accumulator, element_out, compute_length: int):
        what = "StreamkReduceAdd"
        self.arch = get_arch(arch)
        self.block_scheduler = block_scheduler
        self.element_accumulator, self.element_out = reduce_element_types(what, element_accumulator, element_out)
        check_positive_int(what, "COMPUTE_LENGTH", compute_length)
        need = self.element_accumulator.nbytes(compute_length)
        if need > self.arch.ub_size:
            raise ConfigError(f"{what}: COMPUTE_LENGTH {compute_length} x {self.element_accumulator.nbytes(1)} B = "
                              f"{need} B exceeds UB_SIZE {self.arch.ub_size} (Excedding the UB space!)")
        self.compute_length = compute_length
        self.ele_num_align = BYTE_PER_BLK // self.element_out.nbytes(1)
        self.copy_in, self.copy_out = reduce_copies(self.arch, self.element_accumulator, self.element_out)

    def __call__(self, resource: Resource) -> "_StreamkReduceAddInstance":
        return _StreamkReduceAddInstance(self, resource)

    def __repr__(self) -> str:
        return (f"StreamkReduceAdd({self.element_accumulator.name} -> {self.element_out.name}, "
                f"COMPUTE_LENGTH={self.compute_length})")


class _StreamkReduceAddInstance:
    """One vector core's ``StreamkReduceAdd`` object."""

    def __init__(self, spec: StreamkReduceAdd, resource: Resource):
        self.spec = spec
        self.ctx = resource.ctx
        self.acc = resource.ub_buf.get_buffer_by_byte(spec.element_accumulator, 0, spec.compute_length)
        self.out = resource.ub_buf.get_buffer_by_byte(spec.element_out, 0, spec.compute_length)

    def __call__(self, dst: GlobalTensor, src: GlobalTensor, scheduler, layout_dst: RowMajor) -> None:
        spec, ctx = self.spec, self.ctx
        sub_num = ctx.sub_block_num
        aiv_id = ctx.block_idx
        aic_id = aiv_id // sub_num
        tm, tn = scheduler.tile_shape.m, scheduler.tile_shape.n
        align = spec.ele_num_align
        sk_blocks, normal = scheduler.get_streamk_block_num(), scheduler.get_normal_block_num()
        ctx.set_flag(HardEvent.MTE3_MTE2, 0)
        for sk in range(sk_blocks):
            head_cross = scheduler.is_cross(sk)
            tail_cross = scheduler.is_cross(sk + 1)
            start_core = scheduler.get_core_idx(sk)
            end_core = scheduler.get_core_idx(sk + 1)
            labor = (end_core - start_core) * sub_num
            if aic_id < start_core or aic_id >= end_core:
                continue
            if tail_cross:
                end_core += 1
            bc = scheduler.get_block_coord(normal + sk)
            actual = scheduler.get_actual_block_shape(bc)
            tile_num, tile_len = actual.m, actual.n
            pitch = round_up(tile_len, align)
            per_core_max = spec.compute_length // labor // pitch
            per_core = min(ceil_div(tile_num, labor), per_core_max)
            if per_core <= 0:
                raise KernelError(
                    f"StreamkReduceAdd: COMPUTE_LENGTH {spec.compute_length} cannot hold one {pitch}-element row per "
                    f"each of {labor} vector cores (the C++ would divide by zero)"
                )
            slices = end_core - start_core
            loops = ceil_div(tile_num, per_core)
            for loop in range(aiv_id - start_core * sub_num, loops, labor):
                rows = tile_num - loop * per_core if loop == loops - 1 else per_core
                count = rows * pitch
                ub_layout = RowMajor(rows, tile_len, pitch)
                gm_layout = RowMajor(rows, tile_len, tn)
                ctx.wait_flag(HardEvent.MTE3_MTE2, 0)
                if head_cross:
                    base = (start_core * 2 + 1) * tm * tn
                    spec.copy_in(self.acc, src[base + loop * per_core * tn], ub_layout, gm_layout)
                for sl in range(1 if head_cross else 0, slices):
                    base = (sl + start_core) * 2 * tm * tn
                    spec.copy_in(self.acc[count * sl], src[base + loop * per_core * tn], ub_layout, gm_layout)
                add_slices_and_cast(ctx, spec, self.acc, self.out, count, count, slices, 0)
                row = bc.m * tm + loop * per_core
                stride = layout_dst.stride[0]
                spec.copy_out(dst[row * stride + bc.n * tn], self.out, RowMajor(rows, tile_len, stride), ub_layout)
                ctx.set_flag(HardEvent.MTE3_MTE2, 0)
                ctx.mark("epilogue_tile", row=row, col=bc.n * tn, rows=rows, cols=tile_len, slices=slices,
                         streamk_block=sk, zero=False)
        ctx.wait_flag(HardEvent.MTE3_MTE2, 0)
        ctx.pipe_barrier(Pipe.ALL)


@dataclass(frozen=True)
class StreamkMatmulArguments:
    """Host-side ``Arguments{problemShape, aicCoreNum, ptrA, ptrB, ptrC}``."""

    problem_shape: GemmCoord
    aic_core_num: int
    ptr_a: GlobalTensor
    ptr_b: GlobalTensor
    ptr_c: GlobalTensor


@dataclass(frozen=True)
class StreamkMatmulParams:
    """Device-side ``Params{problemShape, ptrA, layoutA, ptrB, layoutB, ptrC, layoutC, ptrWorkspace}``."""

    problem_shape: GemmCoord
    ptr_a: GlobalTensor
    layout_a: Any
    ptr_b: GlobalTensor
    layout_b: Any
    ptr_c: GlobalTensor
    layout_c: Any
    ptr_workspace: GlobalTensor


class StreamkMatmul(GemmKernel):
    """CATLASS ``Gemm::Kernel::StreamkMatmul<BlockMmad, BlockEpilogue(void), BlockScheduler, ReduceAdd>``
    (see module doc). Assembly checks: a ``MmadAtlasA2Streamk`` BlockMmad, a stream-K scheduler, a ReduceAdd
    reading the accumulator type and writing C's type."""

    Arguments = StreamkMatmulArguments
    Params = StreamkMatmulParams
    void_epilogue_reason = "the reduction is the ReduceAdd"
    block_mmad_needs = BlockMmadRequirement(STREAMK_CALL, reason="a call computes a whole block or a stream-K range")

    def __init__(self, block_mmad, block_epilogue, block_scheduler, reduce_add: StreamkReduceAdd):
        super().__init__(block_mmad, block_epilogue, block_scheduler)
        what = self.kernel_name()
        if not isinstance(reduce_add, StreamkReduceAdd):
            raise ConfigError(f"{what}: ReduceAdd must be a StreamkReduceAdd, got {reduce_add!r}")
        if reduce_add.element_accumulator != block_mmad.element_accumulator:
            raise ConfigError(f"{what}: ReduceAdd reads {reduce_add.element_accumulator} but the partial sums are "
                              f"{block_mmad.element_accumulator}")
        if reduce_add.element_out != block_mmad.element_c:
            raise ConfigError(f"{what}: ReduceAdd writes {reduce_add.element_out} but C is {block_mmad.element_c}")
        self.reduce_add = reduce_add

    def check_block_scheduler(self, block_scheduler) -> None:
        if not hasattr(block_scheduler, "get_streamk_block_dec"):
            raise ConfigError(f"{self.kernel_name()}: BlockScheduler must be StreamkGemmIdentityBlockSwizzle, got "
                              f"{block_scheduler!r}")

    # -- host side -------------------------------------------------------------------------------
    def get_workspace_size(self, args: StreamkMatmulArguments) -> int:
        """``max(2 MiB, L1.M * L1.N * sizeof(acc) * aicCoreNum * 2)`` bytes (two slots per core)."""
        l1 = self.block_mmad.l1_tile_shape
        size = l1.m * l1.n * self.block_mmad.element_accumulator.nbytes(1) * args.aic_core_num * 2
        return max(MIN_WORKSPACE, size)

    def to_underlying_arguments(self, args: StreamkMatmulArguments, workspace: GlobalTensor) -> StreamkMatmulParams:
        """CATLASS ``ToUnderlyingArguments``."""
        m, n, k = args.problem_shape
        layout_a, layout_b, _ = operand_layouts(self.block_mmad, m, n, k)
        return StreamkMatmulParams(GemmCoord(m, n, k), args.ptr_a, layout_a, args.ptr_b, layout_b, args.ptr_c,
                                   RowMajor.make_layout(self.block_mmad.element_c, m, n), workspace)

    def scheduler(self, problem_shape, block_dim: int):
        """The stream-K scheduler of a problem on ``block_dim`` cores."""
        l1 = self.block_mmad.l1_tile_shape
        return self.block_scheduler.update(problem_shape, GemmCoord(l1.m, l1.n, l1.k), block_dim)

    # -- device side -----------------------------------------------------------------------------
    def aic(self, ctx, params: StreamkMatmulParams) -> None:
        """The cube-core program (``operator()<AIC>``)."""
        l1 = self.block_mmad.l1_tile_shape
        block_dim, block_idx = ctx.block_num, ctx.block_idx
        sched = self.scheduler(params.problem_shape, block_dim)
        core_loops = sched.get_core_loops()
        normal = sched.get_normal_block_num()
        sk_cores = core_loops - normal
        la, lb, lc = params.layout_a, params.layout_b, params.layout_c
        gm_a, gm_b, gm_c = params.ptr_a, params.ptr_b, params.ptr_c
        gm_w = params.ptr_workspace.reinterpret(self.block_mmad.element_accumulator)
        tile_mn = l1.m * l1.n

        def actual_loop(loop: int) -> int:
            """The C++ remapping: a core's stream-K range runs before its last normal block."""
            if loop == normal - block_dim + block_idx and block_idx < sk_cores and normal > 0:
                return normal + block_idx
            if loop >= normal and normal > 0:
                return normal - block_dim + block_idx
            return loop

        if block_idx >= sk_cores:
            ctx.cross_core_set_flag(FLAG_AIC_FINISH, 2, Pipe.FIX)
        dec = nxt = StreamkBlockDec()
        with self.block_mmad(ctx.resource) as block_mmad:
            for loop in range(block_idx, core_loops, block_dim):
                is_first = loop == block_idx
                dec = sched.get_streamk_block_dec(actual_loop(loop)) if is_first else nxt
                has_next = loop + block_dim < core_loops
                if has_next:
                    nxt = sched.get_streamk_block_dec(actual_loop(loop + block_dim))
                bc = dec.block_coord
                off_a, off_b, off_c = offset_a(la, bc, l1), offset_b(lb, bc, l1), offset_c(lc, bc, l1)
                off_next_a, off_next_b = offset_a(la, nxt.block_coord, l1), offset_b(lb, nxt.block_coord, l1)
                layout_w = RowMajor(dec.actual_block_shape.m, dec.actual_block_shape.n, l1.n)
                ctx.mark("block", loop=loop, m_idx=bc.m, n_idx=bc.n, row=bc.m * l1.m, col=bc.n * l1.n,
                         rows=dec.actual_block_shape.m, cols=dec.actual_block_shape.n, streamk=dec.is_streamk_block,
                         k_tile=bc.k, k=dec.actual_block_shape.k)
                block_mmad(gm_a[off_a], la, gm_b[off_b], lb, gm_c[off_c], lc, gm_w[tile_mn * 2 * block_idx], layout_w,
                           gm_a[off_next_a], gm_b[off_next_b], dec.actual_block_shape, nxt.actual_block_shape,
                           is_first, has_next and not dec.is_cross_block, dec.is_streamk_block)
                if dec.is_cross_block:
                    sbc = dec.streamk_block_coord
                    layout_w2 = RowMajor(dec.streamk_actual_block_shape.m, dec.streamk_actual_block_shape.n, l1.n)
                    ctx.mark("block_part", loop=loop, m_idx=sbc.m, n_idx=sbc.n, row=sbc.m * l1.m, col=sbc.n * l1.n,
                             rows=dec.streamk_actual_block_shape.m, cols=dec.streamk_actual_block_shape.n,
                             streamk=True, k_tile=0, k=dec.streamk_actual_block_shape.k)
                    block_mmad(gm_a[offset_a(la, sbc, l1)], la, gm_b[offset_b(lb, sbc, l1)], lb, gm_c[off_c], lc,
                               gm_w[tile_mn * (2 * block_idx + 1)], layout_w2, gm_a[off_next_a], gm_b[off_next_b],
                               dec.streamk_actual_block_shape, nxt.actual_block_shape, True, has_next,
                               dec.is_streamk_block)
                if loop == normal - block_dim + block_idx and block_idx < sk_cores and normal > 0:
                    ctx.cross_core_set_flag(FLAG_AIC_FINISH, 2, Pipe.FIX)
                if normal == 0:
                    ctx.cross_core_set_flag(FLAG_AIC_FINISH, 2, Pipe.FIX)
            ctx.pipe_barrier(Pipe.ALL)

    def aiv(self, ctx, params: StreamkMatmulParams) -> None:
        """The vector-core program (``operator()<AIV>``)."""
        ctx.cross_core_wait_flag(FLAG_AIC_FINISH)
        ctx.cross_core_barrier(0, Pipe.MTE2)
        reduce_add = self.reduce_add(ctx.resource)
        sched = self.scheduler(params.problem_shape, ctx.block_num)
        reduce_add(params.ptr_c, params.ptr_workspace.reinterpret(self.reduce_add.element_accumulator), sched,
                   params.layout_c)
        ctx.pipe_barrier(Pipe.ALL)

    def total_blocks(self, problem_shape, block_dim: int) -> int:
        """Core loops of the problem (for progress reporting)."""
        return self.scheduler(problem_shape, block_dim).get_core_loops()


__all__ = ["StreamkMatmul", "StreamkMatmulArguments", "StreamkMatmulParams", "StreamkReduceAdd"]
