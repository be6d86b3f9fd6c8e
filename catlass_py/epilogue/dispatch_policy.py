"""Epilogue dispatch policies (CATLASS ``include/catlass/epilogue/dispatch_policy.hpp``).

The ``ArchTag`` is the keyword-only ``arch`` field, as on the GEMM policies (an Atlas A2 spec, ``ATLAS_A2`` by
default)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.errors import ConfigError
from catlass_py.gemm.dispatch_policy import check_arch_tag
from catlass_py.integers import is_int


@dataclass(frozen=True)
class EpilogueAtlasA2PerTokenDequant:
    """CATLASS ``EpilogueAtlasA2PerTokenDequant<UB_STAGES>``: int32 C -> fp32, times a per-channel scale and a
    per-token scale, -> fp16/bf16 D, with ``ub_stages`` UB buffers per input so that loading tile t+1
    overlaps computing tile t."""

    ub_stages: int = 2
    arch: ArchSpec = field(default=ATLAS_A2, kw_only=True, repr=False)

    def __post_init__(self):
        check_arch_tag(type(self).__name__, self.arch)
        if not is_int(self.ub_stages) or self.ub_stages < 1:
            raise ConfigError(f"{type(self).__name__}: ub_stages must be an int >= 1, got {self.ub_stages!r}")
        object.__setattr__(self, "ub_stages", int(self.ub_stages))


@dataclass(frozen=True)
class EpilogueAtlasA2PerTokenDequantTla(EpilogueAtlasA2PerTokenDequant):
    """CATLASS ``EpilogueAtlasA2PerTokenDequantTla<UB_STAGES>``: the per-token dequant on TLA tensors (examples 42,
    44, 52; ``epilogue/block/block_epilogue_per_token_dequant_tla.hpp``)."""


@dataclass(frozen=True)
class EpilogueAtlasA2ElemWiseOneSource:
    """CATLASS ``EpilogueAtlasA2ElemWiseOneSource``: ``D = op(C, X)`` element-wise on the vector cores with one
    extra source X (example 03, ``D = C + X``); three UB operands (C, X, D)."""

    OPERANDS_NUM: ClassVar[int] = 3
    arch: ArchSpec = field(default=ATLAS_A2, kw_only=True, repr=False)

    def __post_init__(self):
        check_arch_tag(type(self).__name__, self.arch)


@dataclass(frozen=True)
class EpilogueAtlasA2ElemWiseNoSource:
    """CATLASS ``EpilogueAtlasA2ElemWiseNoSource``: ``D = cast(op(C))`` element-wise on the vector cores
    (examples 27/28, GELU/SiLU); two UB operands (C, D) plus a compute buffer when D's type differs."""

    OPERANDS_NUM: ClassVar[int] = 2
    arch: ArchSpec = field(default=ATLAS_A2, kw_only=True, repr=False)

    def __post_init__(self):
        check_arch_tag(type(self).__name__, self.arch)
