"""Block layer of the GEMM side: BlockMmad implementations and block schedulers."""

from catlass_py.gemm.block.block_mmad import BlockMmad, register_block_mmad
from catlass_py.gemm.block.mmad_pingpong import BlockMmadPingpong
from catlass_py.gemm.block.mmad_preload_async import BlockMmadPreloadAsync, BlockMmadPreloadAsyncWithCallback
from catlass_py.gemm.block.swizzle import GemmIdentityBlockSwizzle

__all__ = [
    "BlockMmad",
    "BlockMmadPingpong",
    "BlockMmadPreloadAsync",
    "BlockMmadPreloadAsyncWithCallback",
    "GemmIdentityBlockSwizzle",
    "register_block_mmad",
]
