"""``BlockEpilogue(policy, ...)``: assemble the epilogue implementation a dispatch policy selects."""

from __future__ import annotations

from catlass_py.epilogue.block.per_token_dequant import BlockEpiloguePerTokenDequant
from catlass_py.epilogue.dispatch_policy import EpilogueAtlasA2PerTokenDequant
from catlass_py.errors import ConfigError

_IMPLEMENTATIONS = [(EpilogueAtlasA2PerTokenDequant, BlockEpiloguePerTokenDequant)]


def register_block_epilogue(policy_type: type, implementation: type) -> None:
    """Add a BlockEpilogue implementation for an epilogue dispatch policy type."""
    _IMPLEMENTATIONS.insert(0, (policy_type, implementation))


def BlockEpilogue(policy, *args, **kwargs):
    """CATLASS ``Epilogue::Block::BlockEpilogue<DispatchPolicy, ...>``: the implementation selected by the
    policy's type, assembled and checked; the remaining arguments are that implementation's template
    parameters in C++ order."""
    for policy_type, impl in _IMPLEMENTATIONS:
        if type(policy) is policy_type:
            return impl(policy, *args, **kwargs)
    raise ConfigError(f"BlockEpilogue: no implementation for epilogue policy {policy!r}")
