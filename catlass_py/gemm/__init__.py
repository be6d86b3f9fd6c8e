"""GEMM side of CATLASS: coordinates, operand types, dispatch policies, BlockMmad, block schedulers."""

from catlass_py.gemm.block import (
    BlockMmad,
    BlockMmadPingpong,
    BlockMmadPingpongBias,
    BlockMmadPreload,
    BlockMmadPreloadAsync,
    BlockMmadPreloadAsyncWithCallback,
    BlockMmadSingleCoreSplitk,
    BlockMmadStreamk,
    GemmIdentityBlockSwizzle,
    SingleCoreSplitkGemmIdentityBlockSwizzle,
    SplitkGemmIdentityBlockSwizzle,
    StreamkGemmIdentityBlockSwizzle,
)
from catlass_py.gemm.coord import GemmCoord, GemmShape, MatrixCoord, MatrixShape, ceil_div, round_down, round_up
from catlass_py.gemm.dispatch_policy import (
    MmadAtlasA2Pingpong,
    MmadAtlasA2PingpongBias,
    MmadAtlasA2Preload,
    MmadAtlasA2PreloadAsync,
    MmadAtlasA2PreloadAsyncWithCallback,
    MmadAtlasA2SingleCoreSplitk,
    MmadAtlasA2Streamk,
    MmadBase,
)
from catlass_py.gemm.gemm_type import GemmType

__all__ = [
    "BlockMmad",
    "BlockMmadPingpong",
    "BlockMmadPingpongBias",
    "BlockMmadPreload",
    "BlockMmadPreloadAsync",
    "BlockMmadPreloadAsyncWithCallback",
    "BlockMmadSingleCoreSplitk",
    "BlockMmadStreamk",
    "GemmCoord",
    "GemmIdentityBlockSwizzle",
    "GemmShape",
    "GemmType",
    "MatrixCoord",
    "MatrixShape",
    "SingleCoreSplitkGemmIdentityBlockSwizzle",
    "SplitkGemmIdentityBlockSwizzle",
    "StreamkGemmIdentityBlockSwizzle",
    "MmadAtlasA2Pingpong",
    "MmadAtlasA2PingpongBias",
    "MmadAtlasA2Preload",
    "MmadAtlasA2PreloadAsync",
    "MmadAtlasA2PreloadAsyncWithCallback",
    "MmadAtlasA2SingleCoreSplitk",
    "MmadAtlasA2Streamk",
    "MmadBase",
    "ceil_div",
    "round_down",
    "round_up",
]
