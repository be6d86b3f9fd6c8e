"""The attention BlockMmads (CATLASS examples 19 and 23), registered with :func:`~catlass_py.gemm.block.BlockMmad`
under their dispatch policies (:mod:`catlass_py.gemm.dispatch_policy_attention`)."""

from __future__ import annotations

from catlass_py.gemm.block.block_mmad import register_block_mmad
from catlass_py.gemm.block.mmad_fai_pv_head_tail import BlockMmadFAITailPV
from catlass_py.gemm.block.mmad_fai_pv_normal import BlockMmadFAIPV
from catlass_py.gemm.block.mmad_fai_qk_head_tail import BlockMmadFAITailQK
from catlass_py.gemm.block.mmad_fai_qk_normal import BlockMmadFAIQK
from catlass_py.gemm.block.mmad_mla_pv import BlockMmadMLAPV
from catlass_py.gemm.block.mmad_mla_qk import BlockMmadMLAQK
from catlass_py.gemm.dispatch_policy_attention import (
    MmadAtlasA2FAIPV,
    MmadAtlasA2FAIQK,
    MmadAtlasA2FAITailPV,
    MmadAtlasA2FAITailQK,
    MmadAtlasA2MLAPV,
    MmadAtlasA2MLAQK,
)

register_block_mmad(MmadAtlasA2FAIQK, BlockMmadFAIQK)
register_block_mmad(MmadAtlasA2FAITailQK, BlockMmadFAITailQK)
register_block_mmad(MmadAtlasA2FAIPV, BlockMmadFAIPV)
register_block_mmad(MmadAtlasA2FAITailPV, BlockMmadFAITailPV)
register_block_mmad(MmadAtlasA2MLAQK, BlockMmadMLAQK)
register_block_mmad(MmadAtlasA2MLAPV, BlockMmadMLAPV)

__all__ = ["BlockMmadFAIPV", "BlockMmadFAIQK", "BlockMmadFAITailPV", "BlockMmadFAITailQK", "BlockMmadMLAPV",
           "BlockMmadMLAQK"]
