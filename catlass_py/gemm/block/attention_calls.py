"""Call signatures of the attention BlockMmads (CATLASS examples 19 and 23), for their ``CAPABILITIES`` and the
requirements of :class:`~catlass_py.kernel.fa_infer.FAInferKernel` and :class:`~catlass_py.kernel.mla.MLAKernel`.

The argument lists are the C++ ``operator()`` parameters of ``block_mmad_fai_qk_normal.hpp``,
``block_mmad_fai_qk_head_tail.hpp``, ``block_mmad_fai_pv_normal.hpp``, ``block_mmad_fai_pv_head_tail.hpp``,
``block_mmad_mla_qk.hpp`` and ``block_mmad_mla_pv.hpp``. Every one of these blocks is synchronous: its fixpipe
store has run when the call returns.
"""

from __future__ import annotations

from catlass_py.gemm.block.capabilities import BlockMmadCall, BlockMmadCapabilities

FAI_QK_CALL = BlockMmadCall(
    "fai_qk", "(gA, gB, gC, gBlockTable, layoutA, layoutB, actualOriShape, nIdx, nLoop, blockSize, kvSeqlen, strideKV)")
FAI_TAIL_QK_CALL = BlockMmadCall(
    "fai_tail_qk", "(gA, gB, gC, gBlockTable, layoutA, layoutB, actualOriShape, nIdx, nLoop, blockSize, kvSeqlen, "
                   "strideKV, maskTailS, preloadFlag)")
FAI_PV_CALL = BlockMmadCall(
    "fai_pv", "(gA, gB, gC, gBlockTable, layoutA, layoutB, actualOriShape, nIdx, nLoop, blockSize, kvSeqlen, "
              "strideKV, softmaxReady)")
FAI_TAIL_PV_CALL = BlockMmadCall(
    "fai_tail_pv", "(gA, gB, gC, gBlockTable, layoutA, layoutB, actualOriShape, nIdx, nLoop, blockSize, kvSeqlen, "
                   "strideKV, softmaxReady, maskTailS, preloadFlag)")
MLA_QK_CALL = BlockMmadCall(
    "mla_qk", "(gA, gARope, gB, gBRope, gC, layoutA, layoutARope, layoutB, layoutBRope, layoutC, actualShape, "
              "qShapeSingleNd, qHeads, nIdx, pingpongIdx)")
MLA_PV_CALL = BlockMmadCall(
    "mla_pv", "(gA, gC, layoutA, layoutB, layoutC, actualShape, nIdx, pingpongIdx, softmaxReady)")

FAI_QK = BlockMmadCapabilities(FAI_QK_CALL)
FAI_TAIL_QK = BlockMmadCapabilities(FAI_TAIL_QK_CALL)
FAI_PV = BlockMmadCapabilities(FAI_PV_CALL)
FAI_TAIL_PV = BlockMmadCapabilities(FAI_TAIL_PV_CALL)
MLA_QK = BlockMmadCapabilities(MLA_QK_CALL)
MLA_PV = BlockMmadCapabilities(MLA_PV_CALL)

__all__ = ["FAI_PV", "FAI_PV_CALL", "FAI_QK", "FAI_QK_CALL", "FAI_TAIL_PV", "FAI_TAIL_PV_CALL", "FAI_TAIL_QK",
           "FAI_TAIL_QK_CALL", "MLA_PV", "MLA_PV_CALL", "MLA_QK", "MLA_QK_CALL"]
