"""Block layer of the GEMM side: BlockMmad implementations and block schedulers."""

from catlass_py.gemm.block.block_mmad import BlockMmad, register_block_mmad
from catlass_py.gemm.block.mmad_pingpong import BlockMmadPingpong
from catlass_py.gemm.block.mmad_pingpong_bias import BlockMmadPingpongBias
from catlass_py.gemm.block.mmad_preload import BlockMmadPreload
from catlass_py.gemm.block.mmad_preload_async import BlockMmadPreloadAsync, BlockMmadPreloadAsyncWithCallback
from catlass_py.gemm.block.mmad_single_core_splitk import BlockMmadSingleCoreSplitk
from catlass_py.gemm.block.mmad_streamk import BlockMmadStreamk
from catlass_py.gemm.block.swizzle import GemmIdentityBlockSwizzle
from catlass_py.gemm.block.swizzle_splitk import (
    SingleCoreSplitkGemmIdentityBlockSwizzle,
    SplitkGemmIdentityBlockSwizzle,
    StreamkBlockDec,
    StreamkGemmIdentityBlockSwizzle,
)
from catlass_py.gemm.dispatch_policy import MmadAtlasA2SingleCoreSplitk, MmadAtlasA2Streamk

register_block_mmad(MmadAtlasA2SingleCoreSplitk, BlockMmadSingleCoreSplitk)
register_block_mmad(MmadAtlasA2Streamk, BlockMmadStreamk)

__all__ = [
    "BlockMmad",
    "BlockMmadPingpong",
    "BlockMmadPingpongBias",
    "BlockMmadPreload",
    "BlockMmadPreloadAsync",
    "BlockMmadPreloadAsyncWithCallback",
    "BlockMmadSingleCoreSplitk",
    "BlockMmadStreamk",
    "GemmIdentityBlockSwizzle",
    "SingleCoreSplitkGemmIdentityBlockSwizzle",
    "SplitkGemmIdentityBlockSwizzle",
    "StreamkBlockDec",
    "StreamkGemmIdentityBlockSwizzle",
    "register_block_mmad",
]
