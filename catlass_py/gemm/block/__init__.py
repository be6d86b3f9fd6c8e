"""Block layer of the GEMM side (CATLASS ``Gemm::Block``): BlockMmad implementations, their capabilities, and the
block schedulers."""

from catlass_py.gemm.block.block_mmad import (
    BlockMmad,
    BlockMmadTla,
    check_block_mmad,
    register_block_mmad,
    registered_block_mmads,
)
from catlass_py.gemm.block.block_mmad_instance import (
    BlockMmadInstance,
    PingpongStagesInstance,
)
from catlass_py.gemm.block.block_mmad_spec import BlockMmadSpec
from catlass_py.gemm.block.capabilities import (
    BIAS_CALL,
    FULL_LOAD_A_CALL,
    PLAIN_CALL,
    PRELOAD_CALL,
    PRELOAD_TLA_CALL,
    SINGLE_CORE_SPLITK_CALL,
    SPARSE_TLA_CALL,
    STREAMK_CALL,
    TLA_CALL,
    TLA_V2_CALL,
    BlockMmadCall,
    BlockMmadCapabilities,
    BlockMmadRequirement,
)
from catlass_py.gemm.block.mmad_pingpong import BlockMmadPingpong
from catlass_py.gemm.block.mmad_pingpong_bias import BlockMmadPingpongBias
from catlass_py.gemm.block.mmad_full_load_a_tla import BlockMmadFullLoadATla
from catlass_py.gemm.block.mmad_pingpong_tla import BlockMmadPingpongTla
from catlass_py.gemm.block.mmad_pingpong_tla_v2 import BlockMmadPingpongTlaV2
from catlass_py.gemm.block.mmad_preload import BlockMmadPreload
from catlass_py.gemm.block.mmad_preload_tla import BlockMmadPreloadTla
from catlass_py.gemm.block.mmad_preload_async import (
    BlockMmadPreloadAsync,
    BlockMmadPreloadAsyncWithCallback,
)
from catlass_py.gemm.block.mmad_single_core_splitk import BlockMmadSingleCoreSplitk
from catlass_py.gemm.block.mmad_sparse_tla import BlockMmadSparseTla
from catlass_py.gemm.block.mmad_streamk import BlockMmadStreamk
from catlass_py.gemm.block.scheduler_iterate_k import BlockSchedulerIterateK, MatmulShape
from catlass_py.gemm.block.swizzle import GemmIdentityBlockSwizzle
from catlass_py.gemm.block.swizzle_full_load import GemmIdentityBlockSwizzleL1FullLoad
from catlass_py.gemm.block.swizzle_splitk import (
    SingleCoreSplitkGemmIdentityBlockSwizzle,
    SplitkGemmIdentityBlockSwizzle,
    StreamkBlockDec,
    StreamkGemmIdentityBlockSwizzle,
)

__all__ = [
    "BIAS_CALL",
    "FULL_LOAD_A_CALL",
    "PLAIN_CALL",
    "PRELOAD_CALL",
    "PRELOAD_TLA_CALL",
    "SINGLE_CORE_SPLITK_CALL",
    "SPARSE_TLA_CALL",
    "STREAMK_CALL",
    "TLA_CALL",
    "TLA_V2_CALL",
    "BlockMmad",
    "BlockMmadTla",
    "BlockMmadCall",
    "BlockMmadCapabilities",
    "BlockMmadFullLoadATla",
    "BlockMmadInstance",
    "BlockMmadPingpong",
    "BlockMmadPingpongBias",
    "BlockMmadPingpongTla",
    "BlockMmadPingpongTlaV2",
    "BlockMmadPreload",
    "BlockMmadPreloadTla",
    "BlockMmadPreloadAsync",
    "BlockMmadPreloadAsyncWithCallback",
    "BlockMmadRequirement",
    "BlockMmadSpec",
    "BlockMmadSingleCoreSplitk",
    "BlockMmadSparseTla",
    "BlockSchedulerIterateK",
    "BlockMmadStreamk",
    "GemmIdentityBlockSwizzle",
    "GemmIdentityBlockSwizzleL1FullLoad",
    "MatmulShape",
    "PingpongStagesInstance",
    "SingleCoreSplitkGemmIdentityBlockSwizzle",
    "SplitkGemmIdentityBlockSwizzle",
    "StreamkBlockDec",
    "StreamkGemmIdentityBlockSwizzle",
    "check_block_mmad",
    "register_block_mmad",
    "registered_block_mmads",
]
