"""GEMM side of CATLASS: coordinates, operand types, dispatch policies, BlockMmad, block schedulers."""

from catlass_py.gemm.block import (
    BlockMmad,
    BlockMmadPingpong,
    BlockMmadPreloadAsync,
    BlockMmadPreloadAsyncWithCallback,
    GemmIdentityBlockSwizzle,
)
from catlass_py.gemm.coord import GemmCoord, GemmShape, MatrixCoord, MatrixShape, ceil_div, round_down, round_up
from catlass_py.gemm.dispatch_policy import (
    MmadAtlasA2Pingpong,
    MmadAtlasA2Preload,
    MmadAtlasA2PreloadAsync,
    MmadAtlasA2PreloadAsyncWithCallback,
    MmadBase,
)
from catlass_py.gemm.gemm_type import GemmType

__all__ = [
    "BlockMmad",
    "BlockMmadPingpong",
    "BlockMmadPreloadAsync",
    "BlockMmadPreloadAsyncWithCallback",
    "GemmCoord",
    "GemmIdentityBlockSwizzle",
    "GemmShape",
    "GemmType",
    "MatrixCoord",
    "MatrixShape",
    "MmadAtlasA2Pingpong",
    "MmadAtlasA2Preload",
    "MmadAtlasA2PreloadAsync",
    "MmadAtlasA2PreloadAsyncWithCallback",
    "MmadBase",
    "ceil_div",
    "round_down",
    "round_up",
]
