"""CATLASS ``Gemm::Kernel::SplitkMatmul`` and ``SplitkReduceAdd`` (example 09, ``gemm/kernel/splitk_matmul.hpp``).

Split-K across cores: the K tiles of every (m, n) block are dealt to ``splitk_factor`` slices
(``SplitkGemmIdentityBlockSwizzle``), and the ``Lm * Ln * factor`` block tasks go round robin over the cube
cores. Slice s of the result is stored (fp32, by the fixpipe) into slice s of a workspace of
``factor * m * n`` elements. When every cube core is done, every vector core reduces a range of the
``m * n`` elements over the slices and casts to the output type:

========  ===============================================================================
AIC       all its block tasks; then set flag 0 (mode 2, PIPE_FIX)
AIV       wait flag 0; barrier with every vector core (mode 0: all AICs are done); reduce
========  ===============================================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catlass_py.arch.context import EVENT_ID_COUNT as EVENT_IDS
from catlass_py.arch.memory import GlobalTensor, Resource
from catlass_py.arch.pipes import HardEvent, Pipe
from catlass_py.arch.spec import get_arch
from catlass_py.errors import ConfigError
from catlass_py.gemm.block.capabilities import PLAIN_CALL, BlockMmadRequirement
from catlass_py.gemm.coord import GemmCoord, ceil_div, round_up
from catlass_py.kernel.gemm_kernel import GemmKernel, block_count, offset_a, offset_b, offset_c, operand_layouts
from catlass_py.kernel.reduce_add import add_slices_and_cast, check_positive_int, reduce_copies, reduce_element_types
from catlass_py.layout import RowMajor

BYTE_PER_BLK = 32
BYTE_PER_VECTOR_FRACTAL = 256
FLAG_AIC_FINISH = 0


class SplitkReduceAdd:
    """Assembled CATLASS ``Gemm::Kernel::SplitkReduceAdd<ArchTag, ElementAccumulator, ElementOut, STAGES,
    COMPUTE_LENGTH>``: the vector-core reduction of split-K partial sums.

    Every vector core takes ranges of ``task`` elements (a multiple of 64 fp32 = one vector repeat, at most
    ``COMPUTE_LENGTH / factor``), loads the range of every slice into UB (slice pitch rounded to 32 bytes of
    the output type), adds the slices in order (fp32), casts (``CAST_NONE`` to half, ``CAST_RINT``
    otherwise) in place and stores. Check: ``STAGES * COMPUTE_LENGTH * sizeof(acc) <= UB_SIZE``.
    """

    def __init__(self, arch, element_accumulator, element_out, stages: int, compute_length: int):
        what = "SplitkReduceAdd"
        self.arch = get_arch(arch)
        self.element_accumulator, self.element_out = reduce_element_types(what, element_accumulator, element_out)
        check_positive_int(what, "STAGES", stages)
        check_positive_int(what, "COMPUTE_LENGTH", compute_length)
        if stages > EVENT_IDS:
            raise ConfigError(f"{what}: {stages} stages need {stages} event ids; the hardware has {EVENT_IDS}")
        need = stages * compute_length * self.element_accumulator.nbytes(1)
        if need > self.arch.ub_size:
            raise ConfigError(f"{what}: STAGES {stages} x COMPUTE_LENGTH {compute_length} x "
                              f"{self.element_accumulator.nbytes(1)} B = {need} B exceeds UB_SIZE {self.arch.ub_size} "
                              f"(Excedding the UB space!)")
        if self.element_accumulator.nbytes(compute_length) % BYTE_PER_BLK:
            raise ConfigError(f"{what}: COMPUTE_LENGTH {compute_length} does not fill whole 32-byte blocks, so the "
                              f"next stage's buffer would be misaligned")
        self.stages = stages
        self.compute_length = compute_length
        self.ele_per_vector_block = BYTE_PER_VECTOR_FRACTAL // self.element_accumulator.nbytes(1)
        self.ele_num_align = BYTE_PER_BLK // self.element_out.nbytes(1)
        self.copy_in, self.copy_out = reduce_copies(self.arch, self.element_accumulator, self.element_out)

    def task_per_aiv(self, element_count: int, splitk_factor: int, aiv_num: int) -> int:
        """Elements per reduction task, as the C++ computes it (0 when COMPUTE_LENGTH is too small)."""
        vb = self.ele_per_vector_block
        task = (element_count // aiv_num + vb - 1) // vb * vb
        if task == 0:
            task = vb
        task_max = self.compute_length // splitk_factor // vb * vb
        return min(task, task_max)

    def __call__(self, resource: Resource) -> "_SplitkReduceAddInstance":
        return _SplitkReduceAddInstance(self, resource)

    def __repr__(self) -> str:
        return (f"SplitkReduceAdd({self.element_accumulator.name} -> {self.element_out.name}, STAGES={self.stages}, "
                f"COMPUTE_LENGTH={self.compute_length})")


class _SplitkReduceAddInstance:
    """One vector core's ``SplitkReduceAdd`` object."""

    def __init__(self, spec: SplitkReduceAdd, resource: Resource):
        self.spec = spec
        self.ctx = resource.ctx
        ub = resource.ub_buf
        step = spec.element_accumulator.nbytes(spec.compute_length)
        self.acc = [ub.get_buffer_by_byte(spec.element_accumulator, i * step, spec.compute_length)
                    for i in range(spec.stages)]
        self.out = [ub.get_buffer_by_byte(spec.element_out, i * step, spec.compute_length) for i in range(spec.stages)]
        self.buffer_index = 0

    def __call__(self, dst: GlobalTensor, src: GlobalTensor, element_count: int, splitk_factor: int) -> None:
        """Reduce ``splitk_factor`` slices of ``element_count`` accumulators at ``src`` into ``dst``."""
        spec, ctx = self.spec, self.ctx
        for i in range(spec.stages):
            ctx.set_flag(HardEvent.MTE3_MTE2, i)
        aiv_num = ctx.block_num * ctx.sub_block_num
        task = spec.task_per_aiv(element_count, splitk_factor, aiv_num)
        if task <= 0:
            raise ConfigError(
                f"SplitkReduceAdd: COMPUTE_LENGTH {spec.compute_length} cannot hold one {spec.ele_per_vector_block}-"
                f"element vector repeat for each of {splitk_factor} split-K slices"
            )
        loops = ceil_div(element_count, task)
        for loop in range(ctx.block_idx, loops, aiv_num):
            length = element_count - loop * task if loop == loops - 1 else task
            s = self.buffer_index
            pitch = round_up(length, spec.ele_num_align)
            ctx.wait_flag(HardEvent.MTE3_MTE2, s)
            spec.copy_in(self.acc[s], src[loop * task], RowMajor(splitk_factor, length, pitch),
                         RowMajor(splitk_factor, length, element_count))
            add_slices_and_cast(ctx, spec, self.acc[s], self.out[s], pitch, length, splitk_factor, s)
            # One burst of ``length`` elements (a 1-row UB layout: its pitch only has to be whole blocks).
            spec.copy_out(dst[loop * task], self.out[s], RowMajor(1, length), RowMajor(1, length, pitch))
            ctx.set_flag(HardEvent.MTE3_MTE2, s)
            ctx.mark("epilogue_tile", offset=loop * task, count=length, slices=splitk_factor)
            self.buffer_index = (s + 1) % spec.stages
        for i in range(spec.stages):
            ctx.wait_flag(HardEvent.MTE3_MTE2, i)


@dataclass(frozen=True)
class SplitkMatmulArguments:
    """Host-side ``Arguments{problemShape, aicCoreNum, workspaceElementSize, ptrA, ptrB, ptrC}``."""

    problem_shape: GemmCoord
    aic_core_num: int
    workspace_element_size: int
    ptr_a: GlobalTensor
    ptr_b: GlobalTensor
    ptr_c: GlobalTensor


@dataclass(frozen=True)
class SplitkMatmulParams:
    """Device-side ``Params{problemShape, ptrA, layoutA, ptrB, layoutB, ptrC, layoutC, ptrWorkspace,
    splitkFactor}``."""

    problem_shape: GemmCoord
    ptr_a: GlobalTensor
    layout_a: Any
    ptr_b: GlobalTensor
    layout_b: Any
    ptr_c: GlobalTensor
    layout_c: Any
    ptr_workspace: GlobalTensor
    splitk_factor: int


class SplitkMatmul(GemmKernel):
    """CATLASS ``Gemm::Kernel::SplitkMatmul<BlockMmad, BlockEpilogue(void), BlockScheduler, ReduceAdd>``
    (see module doc). Assembly checks: synchronous BlockMmad storing the accumulator type (fp32), a
    ``SplitkGemmIdentityBlockSwizzle``-like scheduler, a ReduceAdd from that accumulator type."""

    Arguments = SplitkMatmulArguments
    Params = SplitkMatmulParams
    void_epilogue_reason = "the reduction is the ReduceAdd"
    block_mmad_needs = BlockMmadRequirement(PLAIN_CALL, asynchronous=False,
                                            reason="the AIC signals the vector cores after its last call")

    def __init__(self, block_mmad, block_epilogue, block_scheduler, reduce_add: SplitkReduceAdd):
        super().__init__(block_mmad, block_epilogue, block_scheduler)
        what = self.kernel_name()
        if not isinstance(reduce_add, SplitkReduceAdd):
            raise ConfigError(f"{what}: ReduceAdd must be a SplitkReduceAdd, got {reduce_add!r}")
        if block_mmad.element_c != reduce_add.element_accumulator:
            raise ConfigError(f"{what}: the BlockMmad stores {block_mmad.element_c} partial sums but ReduceAdd reads "
                              f"{reduce_add.element_accumulator}")
        if block_mmad.arch != reduce_add.arch:
            raise ConfigError(f"{what}: BlockMmad targets {block_mmad.arch.name}, ReduceAdd {reduce_add.arch.name}")
        self.reduce_add = reduce_add

    def check_block_scheduler(self, block_scheduler) -> None:
        if not hasattr(block_scheduler, "get_splitk_slice_idx"):
            raise ConfigError(f"{self.kernel_name()}: BlockScheduler must be a split-K scheduler "
                              f"(SplitkGemmIdentityBlockSwizzle)")

    # -- host side -------------------------------------------------------------------------------
    def get_splitk_factor(self, m: int, n: int, k: int, aic_core_num: int) -> int:
        """CATLASS ``GetSplitkFactor``: split K when there are fewer (m, n) blocks than cores, at most 2/4/8/16
        slices for k <= 1024/2048/4096/beyond, never more slices than K tiles, and at least 2 (4) slices
        for k > 8192 (32768)."""
        l1 = self.block_mmad.l1_tile_shape
        if k <= 1024:
            max_factor = 2
        elif k <= 2048:
            max_factor = 4
        elif k <= 4096:
            max_factor = 8
        else:
            max_factor = 16
        base = block_count(l1, m, n)
        factor = min(aic_core_num // base, max_factor)
        factor = max(factor, 1)
        if base < aic_core_num:
            while (factor + 1 <= max_factor
                   and ceil_div(base * factor, aic_core_num) >= ceil_div(base, aic_core_num) * factor):
                factor += 1
        factor = min(factor, ceil_div(k, l1.k))
        if k > 8192:
            factor = max(factor, 2)
        if k > 32768:
            factor = max(factor, 4)
        return factor

    def get_workspace_size(self, args: SplitkMatmulArguments) -> int:
        """``workspaceElementSize * m * n * splitkFactor`` bytes."""
        m, n, k = args.problem_shape
        return args.workspace_element_size * m * n * self.get_splitk_factor(m, n, k, args.aic_core_num)

    def to_underlying_arguments(self, args: SplitkMatmulArguments, workspace: GlobalTensor) -> SplitkMatmulParams:
        """CATLASS ``ToUnderlyingArguments``: layouts and the split factor."""
        m, n, k = args.problem_shape
        layout_a, layout_b, _ = operand_layouts(self.block_mmad, m, n, k)
        return SplitkMatmulParams(
            GemmCoord(m, n, k), args.ptr_a, layout_a, args.ptr_b, layout_b,
            args.ptr_c, RowMajor.make_layout(self.block_mmad.element_c, m, n), workspace,
            self.get_splitk_factor(m, n, k, args.aic_core_num),
        )

    # -- device side -----------------------------------------------------------------------------
    def _scheduler(self, params):
        l1 = self.block_mmad.l1_tile_shape
        return self.block_scheduler.update(params.problem_shape, GemmCoord(l1.m, l1.n, l1.k), params.splitk_factor)

    def aic(self, ctx, params: SplitkMatmulParams) -> None:
        """The cube-core program (``operator()<AIC>``)."""
        l1 = self.block_mmad.l1_tile_shape
        scheduler = self._scheduler(params)
        core_loops = scheduler.get_core_loops()
        m, n, _ = params.problem_shape
        gm_c = params.ptr_workspace.reinterpret(self.block_mmad.element_c)
        with self.block_mmad(ctx.resource) as block_mmad:
            for loop in range(ctx.block_idx, core_loops, ctx.block_num):
                bc = scheduler.get_block_coord(loop)
                sl = scheduler.get_splitk_slice_idx(loop)
                actual = scheduler.get_actual_block_shape(bc, sl)
                off_a, off_b = offset_a(params.layout_a, bc, l1), offset_b(params.layout_b, bc, l1)
                off_c = offset_c(params.layout_c, bc, l1) + m * n * sl
                ctx.mark("block", loop=loop, m_idx=bc.m, n_idx=bc.n, k_idx=bc.k, slice=sl, row=bc.m * l1.m,
                         col=bc.n * l1.n, rows=actual.m, cols=actual.n, k=actual.k)
                block_mmad(params.ptr_a[off_a], params.layout_a, params.ptr_b[off_b], params.layout_b,
                           gm_c[off_c], params.layout_c, actual)
            ctx.cross_core_set_flag(FLAG_AIC_FINISH, 2, Pipe.FIX)
            ctx.pipe_barrier(Pipe.ALL)

    def aiv(self, ctx, params: SplitkMatmulParams) -> None:
        """The vector-core program (``operator()<AIV>``)."""
        ctx.cross_core_wait_flag(FLAG_AIC_FINISH)
        ctx.cross_core_barrier(0, Pipe.MTE3)
        m, n, _ = params.problem_shape
        reduce_add = self.reduce_add(ctx.resource)
        reduce_add(params.ptr_c, params.ptr_workspace.reinterpret(self.reduce_add.element_accumulator), m * n,
                   params.splitk_factor)
        ctx.pipe_barrier(Pipe.ALL)

    def total_blocks(self, problem_shape, aic_core_num: int) -> int:
        """Block tasks of the problem (for progress reporting)."""
        l1 = self.block_mmad.l1_tile_shape
        m, n, k = problem_shape
        return block_count(l1, m, n) * self.get_splitk_factor(m, n, k, aic_core_num)


__all__ = ["SplitkMatmul", "SplitkMatmulArguments", "SplitkMatmulParams", "SplitkReduceAdd"]
