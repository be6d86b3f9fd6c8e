"""Dispatch policies of CATLASS's attention BlockMmads (``include/catlass/gemm/dispatch_policy.hpp``):
flash attention inference (example 23: ``MmadAtlasA2FAIQK``, ``MmadAtlasA2FAITailQK``, ``MmadAtlasA2FAIPV``,
``MmadAtlasA2FAITailPV``) and multi-head latent attention (example 19: ``MmadAtlasA2MLAQK``,
``MmadAtlasA2MLAPV``). All are synchronous 2-stage blocks on Atlas A2; each selects its BlockMmad in
:mod:`catlass_py.gemm.block`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from catlass_py.gemm.dispatch_policy import MmadBase, _check_bool


@dataclass(frozen=True)
class _FAIPolicy(MmadBase):
    paged_cache: bool = False
    enable_unit_flag: bool = False
    STAGES: ClassVar[int] = 2

    def __post_init__(self):
        super().__post_init__()
        _check_bool("paged_cache", self.paged_cache)
        _check_bool("enable_unit_flag", self.enable_unit_flag)


@dataclass(frozen=True)
class MmadAtlasA2FAIQK(_FAIPolicy):
    """CATLASS ``MmadAtlasA2FAIQK<PAGED_CACHE_FLAG, ENABLE_UNIT_FLAG>``: S = Q K^T over up to four KV blocks of
    128 (one stack of 512 columns), the Q tile resident in L0A, K double-buffered in L1/L0B (example 23:
    ``<true, false>``)."""


@dataclass(frozen=True)
class MmadAtlasA2FAITailQK(_FAIPolicy):
    """CATLASS ``MmadAtlasA2FAITailQK<PAGED_CACHE_FLAG, ENABLE_UNIT_FLAG>``: the QK^T of the masked (diagonal)
    stack, which may start inside a KV block (``maskTailS``); one fixpipe per KV block."""


@dataclass(frozen=True)
class MmadAtlasA2FAIPV(_FAIPolicy):
    """CATLASS ``MmadAtlasA2FAIPV<PAGED_CACHE_FLAG, ENABLE_UNIT_FLAG>``: O_tmp = P V over one stack; waits for
    the softmax (``softmaxReady``) before loading P."""


@dataclass(frozen=True)
class MmadAtlasA2FAITailPV(_FAIPolicy):
    """CATLASS ``MmadAtlasA2FAITailPV<PAGED_CACHE_FLAG, ENABLE_UNIT_FLAG>``: the P V of the masked stack."""


@dataclass(frozen=True)
class MmadAtlasA2MLAQK(MmadBase):
    """CATLASS ``MmadAtlasA2MLAQK`` (example 19): S = [Q, Q_rope] [K, K_rope]^T of one paged KV block, K kept
    in L1 for the PV of the same block."""

    STAGES: ClassVar[int] = 2


@dataclass(frozen=True)
class MmadAtlasA2MLAPV(MmadBase):
    """CATLASS ``MmadAtlasA2MLAPV`` (example 19): O_tmp = P V with V the K block resident in L1."""

    STAGES: ClassVar[int] = 2


__all__ = [
    "MmadAtlasA2FAIPV",
    "MmadAtlasA2FAIQK",
    "MmadAtlasA2FAITailPV",
    "MmadAtlasA2FAITailQK",
    "MmadAtlasA2MLAPV",
    "MmadAtlasA2MLAQK",
]
