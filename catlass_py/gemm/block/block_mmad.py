"""Block-level MMAD: one output block of C on one cube core (CATLASS ``gemm/block/block_mmad_*.hpp``).

``BlockMmad(policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type, ...)`` assembles (and checks) the
implementation that the dispatch policy selects, like the C++ partial specialisation; calling the assembled
object with a cube core's resource builds the per-core instance (the C++ constructor).
"""

from __future__ import annotations

from catlass_py.errors import ConfigError
from catlass_py.gemm.block.mmad_pingpong import BlockMmadPingpong
from catlass_py.gemm.block.mmad_pingpong_bias import BlockMmadPingpongBias
from catlass_py.gemm.block.mmad_preload import BlockMmadPreload
from catlass_py.gemm.block.mmad_preload_async import BlockMmadPreloadAsync, BlockMmadPreloadAsyncWithCallback
from catlass_py.gemm.dispatch_policy import (
    MmadAtlasA2Pingpong,
    MmadAtlasA2PingpongBias,
    MmadAtlasA2Preload,
    MmadAtlasA2PreloadAsync,
    MmadAtlasA2PreloadAsyncWithCallback,
)

_IMPLEMENTATIONS = [
    (MmadAtlasA2PreloadAsyncWithCallback, BlockMmadPreloadAsyncWithCallback),
    (MmadAtlasA2PreloadAsync, BlockMmadPreloadAsync),
    (MmadAtlasA2Pingpong, BlockMmadPingpong),
    (MmadAtlasA2Preload, BlockMmadPreload),
    (MmadAtlasA2PingpongBias, BlockMmadPingpongBias),
]


def register_block_mmad(policy_type: type, implementation: type) -> None:
    """Add a BlockMmad implementation for a dispatch policy type (a new C++ specialisation)."""
    _IMPLEMENTATIONS.insert(0, (policy_type, implementation))


def BlockMmad(policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type, bias_type=None, tile_copy=None,
              tile_mmad=None):
    """CATLASS ``Gemm::Block::BlockMmad<DispatchPolicy, L1TileShape, L0TileShape, AType, BType, CType,
    BiasType, TileCopy, TileMmad>``: the implementation selected by ``policy``'s type, assembled and checked
    (buffer budgets, tile alignment, stage rules); :class:`ConfigError` names any rule broken."""
    for policy_type, impl in _IMPLEMENTATIONS:
        if type(policy) is policy_type:
            return impl(policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type, bias_type, tile_copy, tile_mmad)
    names = ", ".join(p.__name__ for p, _ in _IMPLEMENTATIONS)
    raise ConfigError(f"BlockMmad: no implementation for dispatch policy {policy!r} (available: {names})")
