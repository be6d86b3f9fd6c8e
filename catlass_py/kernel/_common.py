"""Pieces the AIC-only GEMM kernels share: assembly checks, scalar GM reads and the rotating block split."""

from __future__ import annotations

from catlass_py.arch.memory import GlobalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ConfigError
from catlass_py.gemm.block.mmad_pingpong_bias import BlockMmadPingpongBias
from catlass_py.gemm.block.mmad_preload import BlockMmadPreload
from catlass_py.gemm.block.swizzle import GemmIdentityBlockSwizzle

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


def get_value(ctx, gm: GlobalTensor, index: int) -> int:
    """Ascend C ``GlobalTensor::GetValue(index)``: one scalar read from GM (S pipe)."""
    value = int(gm.view(index + 1)[index])
    if ctx.bus.instructions:
        ctx.emit(Pipe.S, "GetValue", gm_reads=(gm.access(index, 1),))
    return value


def start_loop_idx(core_idx: int, core_num: int, start_core: int) -> int:
    """First block of a group that core ``core_idx`` takes when the group's block 0 goes to ``start_core``
    (CATLASS's ``startLoopIdx``): all groups' blocks form one sequence dealt round-robin over the cores."""
    return (core_idx + core_num if core_idx < start_core else core_idx) - start_core


__all__ = ["check_block_mmad", "check_no_epilogue", "check_scheduler", "get_value", "start_loop_idx"]
