"""GEMM side of CATLASS (``Catlass::Gemm``): coordinates, operand types, type selectors and dispatch policies.

This package is what the tile layer builds on, so it does not import its block layer: BlockMmad and the block
schedulers are in :mod:`catlass_py.gemm.block` (``Gemm::Block``), which imports the tile layer.
"""

from catlass_py.gemm.coord import (
    GemmCoord,
    GemmShape,
    MatrixCoord,
    MatrixShape,
    ceil_div,
    round_down,
    round_up,
)
from catlass_py.gemm.dispatch_policy import (
    MmadAtlasA2Pingpong,
    MmadAtlasA2PingpongBias,
    MmadAtlasA2Preload,
    MmadAtlasA2PreloadAsync,
    MmadAtlasA2PreloadAsyncWithCallback,
    MmadAtlasA2SingleCoreSplitk,
    MmadAtlasA2Streamk,
    MmadBase,
    MmadFullLoadA,
    MmadPingpong,
    MmadPingpongTlaV2,
    SparseMatmulMultiBlockOnKAxis,
)
from catlass_py.gemm.gemm_type import GemmType

__all__ = [
    "GemmCoord",
    "GemmShape",
    "GemmType",
    "MatrixCoord",
    "MatrixShape",
    "MmadAtlasA2Pingpong",
    "MmadAtlasA2PingpongBias",
    "MmadAtlasA2Preload",
    "MmadAtlasA2PreloadAsync",
    "MmadAtlasA2PreloadAsyncWithCallback",
    "MmadAtlasA2SingleCoreSplitk",
    "MmadAtlasA2Streamk",
    "MmadBase",
    "MmadFullLoadA",
    "MmadPingpong",
    "MmadPingpongTlaV2",
    "SparseMatmulMultiBlockOnKAxis",
    "ceil_div",
    "round_down",
    "round_up",
]
