"""Block-level MMAD: one output block of C on one cube core (CATLASS ``gemm/block/block_mmad_*.hpp``).

``BlockMmad(policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type, ...)`` assembles (and checks) the
implementation that the dispatch policy selects, like the C++ partial specialisation; calling the assembled
object with a cube core's resource builds the per-core instance (the C++ constructor).

This module is the one registry of BlockMmad implementations (:func:`register_block_mmad` adds one). Each
implementation declares its :class:`~catlass_py.gemm.block.capabilities.BlockMmadCapabilities`; kernels check
them at assembly with :func:`check_block_mmad`, whose error lists the registered policies that would fit.
"""

from __future__ import annotations

from catlass_py.errors import ConfigError
from catlass_py.gemm.block.capabilities import (
    BlockMmadCapabilities,
    BlockMmadRequirement,
)
from catlass_py.gemm.block.mmad_fai_pv_head_tail import BlockMmadFAITailPV
from catlass_py.gemm.block.mmad_fai_pv_normal import BlockMmadFAIPV
from catlass_py.gemm.block.mmad_fai_qk_head_tail import BlockMmadFAITailQK
from catlass_py.gemm.block.mmad_fai_qk_normal import BlockMmadFAIQK
from catlass_py.gemm.block.mmad_mla_pv import BlockMmadMLAPV
from catlass_py.gemm.block.mmad_mla_qk import BlockMmadMLAQK
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
from catlass_py.gemm.dispatch_policy import (
    MmadAtlasA2Pingpong,
    MmadAtlasA2PingpongBias,
    MmadAtlasA2Preload,
    MmadAtlasA2PreloadAsync,
    MmadAtlasA2PreloadAsyncWithCallback,
    MmadAtlasA2SingleCoreSplitk,
    MmadAtlasA2Streamk,
    MmadFullLoadA,
    MmadPingpong,
    MmadPingpongTlaV2,
    SparseMatmulMultiBlockOnKAxis,
)
from catlass_py.gemm.dispatch_policy_attention import (
    MmadAtlasA2FAIPV,
    MmadAtlasA2FAIQK,
    MmadAtlasA2FAITailPV,
    MmadAtlasA2FAITailQK,
    MmadAtlasA2MLAPV,
    MmadAtlasA2MLAQK,
)

_IMPLEMENTATIONS = [
    (MmadAtlasA2PreloadAsyncWithCallback, BlockMmadPreloadAsyncWithCallback),
    (MmadAtlasA2PreloadAsync, BlockMmadPreloadAsync),
    (MmadAtlasA2Pingpong, BlockMmadPingpong),
    (MmadAtlasA2Preload, BlockMmadPreload),
    (MmadAtlasA2PingpongBias, BlockMmadPingpongBias),
    (MmadAtlasA2SingleCoreSplitk, BlockMmadSingleCoreSplitk),
    (MmadAtlasA2Streamk, BlockMmadStreamk),
    # attention (examples 19 and 23)
    (MmadAtlasA2FAIQK, BlockMmadFAIQK),
    (MmadAtlasA2FAITailQK, BlockMmadFAITailQK),
    (MmadAtlasA2FAIPV, BlockMmadFAIPV),
    (MmadAtlasA2FAITailPV, BlockMmadFAITailPV),
    (MmadAtlasA2MLAQK, BlockMmadMLAQK),
    (MmadAtlasA2MLAPV, BlockMmadMLAPV),
]


#: the ``BlockMmadTla`` specialisations (TLA tensors in, CATLASS ``gemm/block/block_mmad_*_tla.hpp``)
_TLA_IMPLEMENTATIONS = [
    (MmadPingpong, BlockMmadPingpongTla),
    (MmadPingpongTlaV2, BlockMmadPingpongTlaV2),
    (MmadFullLoadA, BlockMmadFullLoadATla),
    (MmadAtlasA2Preload, BlockMmadPreloadTla),
]

#: the blocks with their own template name (``BlockMmadSparseTla``, example 41), assembled directly
_OTHER_IMPLEMENTATIONS = [
    (SparseMatmulMultiBlockOnKAxis, BlockMmadSparseTla),
]


def register_block_mmad(policy_type: type, implementation: type) -> None:
    """Add a BlockMmad implementation for a dispatch policy type (a new C++ specialisation). The implementation
    declares ``CAPABILITIES`` (a :class:`BlockMmadCapabilities`): what kernels can do with it."""
    if not isinstance(getattr(implementation, "CAPABILITIES", None), BlockMmadCapabilities):
        raise ConfigError(f"register_block_mmad: {implementation.__name__} must declare CAPABILITIES, a "
                          f"BlockMmadCapabilities (its call signature, asynchronous or not, its callbacks)")
    _IMPLEMENTATIONS.insert(0, (policy_type, implementation))


def registered_block_mmads() -> list[tuple[type, type]]:
    """(dispatch policy type, BlockMmad implementation) pairs, most recently registered first."""
    return list(_IMPLEMENTATIONS)


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


def BlockMmadTla(policy, l1_tile_shape, l0_tile_shape, element_a, element_b, element_c, element_bias=None,
                 tile_copy=None, tile_mmad=None):
    """CATLASS ``Gemm::Block::BlockMmadTla<DispatchPolicy, L1TileShape, L0TileShape, ElementA, ElementB, ElementC,
    ElementBias, TileCopy, TileMmad>`` (``gemm/block/block_mmad.hpp``): the TLA block ``policy``'s type selects,
    assembled and checked. ``tile_copy`` is a :class:`~catlass_py.tile.copy_tla.PackedTileCopyTla` (it carries the
    operands' layout tags; default: all RowMajor, CATLASS's default)."""
    for policy_type, impl in _TLA_IMPLEMENTATIONS:
        if type(policy) is policy_type:
            return impl(policy, l1_tile_shape, l0_tile_shape, element_a, element_b, element_c, element_bias,
                        tile_copy, tile_mmad)
    names = ", ".join(p.__name__ for p, _ in _TLA_IMPLEMENTATIONS)
    raise ConfigError(f"BlockMmadTla: no implementation for dispatch policy {policy!r} (available: {names})")


def check_block_mmad(what: str, block_mmad, requirement: BlockMmadRequirement) -> BlockMmadCapabilities:
    """Raise :class:`ConfigError` unless ``block_mmad`` is an assembled BlockMmad whose capabilities meet the
    kernel's ``requirement``; the message names the policy, what the kernel needs and the registered policies
    that fit. Returns the block's capabilities."""
    capabilities = getattr(type(block_mmad), "CAPABILITIES", None)
    if not isinstance(capabilities, BlockMmadCapabilities) or not hasattr(block_mmad, "policy"):
        raise ConfigError(f"{what}: BlockMmad must be an assembled BlockMmad (catlass_py.gemm.block.BlockMmad(...)), "
                          f"got {block_mmad!r}")
    if requirement.accepts(capabilities):
        return capabilities
    fit = [p.__name__ for p, impl in _IMPLEMENTATIONS + _TLA_IMPLEMENTATIONS + _OTHER_IMPLEMENTATIONS if requirement.accepts(impl.CAPABILITIES)]
    hint = (f"only {fit[0]} fits" if len(fit) == 1 else f"policies that fit: {', '.join(fit)}" if fit
            else "no registered policy fits")
    raise ConfigError(f"{what}: {type(block_mmad.policy).__name__}'s BlockMmad is {capabilities}, but the kernel "
                      f"needs {requirement}; {hint}")


__all__ = ["BlockMmad", "BlockMmadTla", "check_block_mmad", "register_block_mmad", "registered_block_mmads"]
