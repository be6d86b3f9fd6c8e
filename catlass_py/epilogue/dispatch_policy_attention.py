"""Epilogue dispatch policies of CATLASS's attention kernels (``include/catlass/epilogue/dispatch_policy.hpp``):
flash attention inference (example 23: ``EpilogueAtlasA2OnlineSoftmax``, ``EpilogueAtlasA2RescaleO``) and
multi-head latent attention (example 19: ``EpilogueAtlasA2MLASoftmax``, ``EpilogueAtlasA2MLARescaleO``,
``EpilogueAtlasA2MLAFDRescaleO<COMPUTE_ELE_NUM>``). The ``ArchTag`` is the keyword-only ``arch`` field (an Atlas A2
spec, ``ATLAS_A2`` by default), as on the other policies."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.errors import ConfigError
from catlass_py.gemm.dispatch_policy import check_arch_tag


@dataclass(frozen=True)
class _AttentionEpiloguePolicy:
    arch: ArchSpec = field(default=ATLAS_A2, kw_only=True, repr=False)

    def __post_init__(self):
        check_arch_tag(type(self).__name__, self.arch)


@dataclass(frozen=True)
class EpilogueAtlasA2OnlineSoftmax(_AttentionEpiloguePolicy):
    """CATLASS ``EpilogueAtlasA2OnlineSoftmax``: the online softmax of one S stack of flash attention inference
    (``block_epilogue_online_softmax_no_mask.hpp``; with and without the causal mask)."""


@dataclass(frozen=True)
class EpilogueAtlasA2RescaleO(_AttentionEpiloguePolicy):
    """CATLASS ``EpilogueAtlasA2RescaleO``: the running output update ``O = O * exp(m_old - m_new) + O_tmp`` and
    the final ``O / l`` of flash attention inference (``block_epilogue_rescale_o_no_split_row.hpp``)."""


@dataclass(frozen=True)
class EpilogueAtlasA2MLASoftmax(_AttentionEpiloguePolicy):
    """CATLASS ``EpilogueAtlasA2MLASoftmax`` (``block_epilogue_mla_softmax.hpp``)."""


@dataclass(frozen=True)
class EpilogueAtlasA2MLARescaleO(_AttentionEpiloguePolicy):
    """CATLASS ``EpilogueAtlasA2MLARescaleO`` (``block_epilogue_mla_rescale_o.hpp``)."""


@dataclass(frozen=True)
class EpilogueAtlasA2MLAFDRescaleO(_AttentionEpiloguePolicy):
    """CATLASS ``EpilogueAtlasA2MLAFDRescaleO<COMPUTE_ELE_NUM>`` (``block_epilogue_mla_fd_rescale_o.hpp``): the
    flash-decoding combine of the partial outputs of a KV sequence split over cores."""

    compute_ele_num: int = 6144
    KV_SPLIT_MAX: ClassVar[int] = 64
    HEADS_PROCESS_MAX: ClassVar[int] = 16

    def __post_init__(self):
        super().__post_init__()
        n = self.compute_ele_num
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
            raise ConfigError(f"EpilogueAtlasA2MLAFDRescaleO: COMPUTE_ELE_NUM must be a positive int, got {n!r}")


__all__ = [
    "EpilogueAtlasA2MLAFDRescaleO",
    "EpilogueAtlasA2MLARescaleO",
    "EpilogueAtlasA2MLASoftmax",
    "EpilogueAtlasA2OnlineSoftmax",
    "EpilogueAtlasA2RescaleO",
]
