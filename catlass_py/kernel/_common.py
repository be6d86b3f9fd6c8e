"""Pieces the GEMM kernels share: assembly checks, operand layouts and block offsets, scalar GM reads, the
rotating block split over the cores, BlockMmad calls with fixpipe callbacks, and the base of the kernels with a
void epilogue."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ConfigError
from catlass_py.gemm.block.mmad_pingpong_bias import BlockMmadPingpongBias
from catlass_py.gemm.block.mmad_preload import BlockMmadPreload
from catlass_py.gemm.block.swizzle import GemmIdentityBlockSwizzle
from catlass_py.gemm.coord import GemmCoord, ceil_div
from catlass_py.layout import RowMajor, VectorLayout
from catlass_py.numerics import dtypes as dt
from catlass_py.numerics.rounding import RoundMode

# BlockMmads whose call takes (A, layoutA, B, layoutB, C, layoutC, actualShape[, callbacks]).
_OTHER_SIGNATURE = {
    BlockMmadPreload: "OptimizedMatmul (the Preload block also takes the next block's tensors)",
    BlockMmadPingpongBias: "MatmulBias (the bias block also takes the bias tensor)",
}


def check_block_mmad(what: str, block_mmad, *, allowed=None) -> None:
    """Raise :class:`ConfigError` unless ``block_mmad`` is an assembled BlockMmad this kernel can drive."""
    if not hasattr(block_mmad, "l1_tile_shape") or not callable(block_mmad):
        raise ConfigError(f"{what}: BlockMmad must be an assembled BlockMmad (catlass_py.gemm.BlockMmad(...)), "
                          f"got {block_mmad!r}")
    if allowed is not None:
        if not isinstance(block_mmad, allowed):
            names = ", ".join(t.__name__ for t in allowed)
            raise ConfigError(f"{what}: BlockMmad must be one of {names}, got {type(block_mmad).__name__}")
        return
    for cls, kernel in _OTHER_SIGNATURE.items():
        if isinstance(block_mmad, cls):
            raise ConfigError(f"{what}: {type(block_mmad).__name__} does not fit this kernel; use {kernel}")


def check_no_epilogue(what: str, block_epilogue) -> None:
    """These kernels take ``BlockEpilogue = void`` (None)."""
    if block_epilogue is not None:
        raise ConfigError(f"{what}: BlockEpilogue must be None (CATLASS instantiates it with void), got {block_epilogue!r}")


def check_scheduler(what: str, block_scheduler) -> None:
    if not isinstance(block_scheduler, GemmIdentityBlockSwizzle):
        raise ConfigError(f"{what}: BlockScheduler must be a GemmIdentityBlockSwizzle, got {block_scheduler!r}")


def check_plain_block_call(what: str, block_mmad) -> None:
    """The kernels of this issue call a synchronous BlockMmad with the plain ``(A, layoutA, B, layoutB, C,
    layoutC, actualShape)`` argument list: among the synchronous blocks only ``MmadAtlasA2Pingpong`` has it
    (``Preload`` takes next-block tensors, ``PingpongBias`` a bias)."""
    from catlass_py.gemm.dispatch_policy import MmadAtlasA2Pingpong

    if not getattr(block_mmad, "ASYNC", False) and type(block_mmad.policy) is not MmadAtlasA2Pingpong:
        raise ConfigError(
            f"{what}: the kernel calls BlockMmad(A, layoutA, B, layoutB, C, layoutC, actualShape); among the "
            f"synchronous blocks only MmadAtlasA2Pingpong takes that, got {type(block_mmad.policy).__name__}"
        )


def operand_layouts(block_mmad, m: int, n: int, k: int) -> tuple:
    """``MakeLayout`` of A (m x k), B (k x n) and C (m x n) in the BlockMmad's operand layouts (the
    ``ToUnderlyingArguments`` of most kernels)."""
    mm = block_mmad
    return (mm.a_type.layout.make_layout(mm.element_a, m, k), mm.b_type.layout.make_layout(mm.element_b, k, n),
            mm.c_type.layout.make_layout(mm.element_c, m, n))


def offset_a(layout_a, block_coord, l1) -> int:
    """Where block ``block_coord``'s A panel starts: ``layoutA.GetOffset(blockCoord.GetCoordMK() *
    L1TileShape::ToCoordMK())``."""
    return layout_a.offset(block_coord.m * l1.m, block_coord.k * l1.k)


def offset_b(layout_b, block_coord, l1) -> int:
    """Where block ``block_coord``'s B panel starts (``GetCoordKN``)."""
    return layout_b.offset(block_coord.k * l1.k, block_coord.n * l1.n)


def offset_c(layout_c, block_coord, l1) -> int:
    """Where block ``block_coord`` of C starts (``GetCoordMN``)."""
    return layout_c.offset(block_coord.m * l1.m, block_coord.n * l1.n)


def block_count(l1, m: int, n: int) -> int:
    """``L1.M x L1.N`` blocks of an m x n C (what the identity swizzle's ``GetCoreLoops`` returns)."""
    return ceil_div(m, l1.m) * ceil_div(n, l1.n)


def cast_mode(element_out) -> RoundMode:
    """How CATLASS's vector cores cast fp32 results to the output type: ``CAST_NONE`` to half, ``CAST_RINT`` to
    anything else."""
    return RoundMode.NONE if element_out == dt.FLOAT16 else RoundMode.RINT


def get_value(ctx, gm: GlobalTensor, index: int) -> int:
    """Ascend C ``GlobalTensor::GetValue(index)``: one scalar read from GM (S pipe)."""
    value = int(gm.view(index + 1)[index])
    if ctx.bus.instructions:
        ctx.emit(Pipe.S, "GetValue", gm_reads=(gm.access(index, 1),))
    return value


def group_size(ctx, group_list: GlobalTensor, g: int, prefix: int) -> tuple[int, int]:
    """Size of group ``g`` of a prefix-sum group list (one ``groupList.GetValue(g)``) given the previous
    group's prefix, and the new prefix."""
    value = get_value(ctx, group_list, g)
    return value - prefix, value


def dequant_layouts(block_epilogue, m: int, n: int) -> tuple:
    """Layouts of the per-token-dequant operands: per-channel scale [n], per-token scale [m], D [m, n]."""
    return VectorLayout(n), VectorLayout(m), RowMajor.make_layout(block_epilogue.d_type.element, m, n)


def start_loop_idx(core_idx: int, core_num: int, start_core: int) -> int:
    """First block of a group that core ``core_idx`` takes when the group's block 0 goes to ``start_core``
    (CATLASS's ``startLoopIdx``): all groups' blocks form one sequence dealt round-robin over the cores."""
    return (core_idx + core_num if core_idx < start_core else core_idx) - start_core


@dataclass(frozen=True)
class GroupedPerTokenDequantParams:
    """Device-side ``Params`` of the grouped per-token-dequant kernels: CATLASS's
    ``GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace::Params`` (example 10) and the full-workspace
    ``GroupedMatmulSlice{M,K}PerTokenDequant::Params`` (examples 07, 11) have the same fields: pointers with
    the layouts ``ToUnderlyingArguments`` builds, and the GM workspace."""

    problem_shape: GemmCoord
    problem_count: int
    ptr_group_list: GlobalTensor
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


class RoundRobinGroups:
    """The blocks of all groups as one sequence dealt round robin over the cores (CATLASS's ``startCoreIdx``):
    block 0 of a group goes to the core after the one that took the previous group's last block."""

    def __init__(self, core_idx: int, core_num: int):
        self.core_idx, self.core_num = core_idx, core_num
        self.start_core = 0

    def loops(self, core_loops: int) -> range:
        """This core's block indices in a group of ``core_loops`` blocks; the next call deals the next group."""
        loops = range(start_loop_idx(self.core_idx, self.core_num, self.start_core), core_loops, self.core_num)
        self.start_core = (self.start_core + core_loops) % self.core_num
        return loops


def call_block_mmad(block_mmad, is_async: bool, args: tuple, callbacks: tuple) -> None:
    """Call a BlockMmad with ``args`` and the callbacks the kernel runs around each block's fixpipe.

    ``callbacks`` is what an async BlockMmad takes after ``args`` (PreloadAsyncWithCallback: before and after the
    fixpipe; PreloadAsync: after): it runs them itself when it stores the block, in a later call. A synchronous
    BlockMmad has stored the block when it returns, so the kernel runs the "before" callbacks (those not None)
    before the call and the last one after it."""
    if is_async:
        block_mmad(*args, *callbacks)
        return
    *before, after = callbacks
    for callback in before:
        if callback is not None:
            callback()
    block_mmad(*args)
    after()


class MatmulKernelBase:
    """What the kernels ``<BlockMmad, BlockEpilogue = void, BlockScheduler = GemmIdentityBlockSwizzle>`` share
    (BasicMatmul, BatchedMatmul, MatmulBias, GroupedMatmul, GroupedMatmulSliceM/K, OptimizedMatmul): the
    assembly checks, ``CanImplement`` and the workspace (none), unless a kernel says otherwise."""

    aiv = None  # the C++ AIV operator() is empty: no vector cores launch
    block_mmad_types = None  # the BlockMmad implementations the kernel drives (None: any with the plain call)

    def __init__(self, block_mmad, block_epilogue, block_scheduler):
        what = type(self).__name__
        check_block_mmad(what, block_mmad, allowed=self.block_mmad_types)
        check_no_epilogue(what, block_epilogue)
        check_scheduler(what, block_scheduler)
        self.block_mmad = block_mmad
        self.block_scheduler = block_scheduler
        self.arch = block_mmad.arch

    @staticmethod
    def can_implement(args) -> bool:
        """CATLASS ``CanImplement``: always true (the ops layer validates user input)."""
        return True

    @staticmethod
    def get_workspace_size(args) -> int:
        """No workspace."""
        return 0


__all__ = [
    "MatmulKernelBase",
    "RoundRobinGroups",
    "block_count",
    "call_block_mmad",
    "cast_mode",
    "check_block_mmad",
    "check_no_epilogue",
    "check_plain_block_call",
    "check_scheduler",
    "dequant_layouts",
    "get_value",
    "group_size",
    "offset_a",
    "offset_b",
    "offset_c",
    "operand_layouts",
    "start_loop_idx",
]
