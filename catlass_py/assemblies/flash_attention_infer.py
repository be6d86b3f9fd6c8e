"""CATLASS example 23 flash_attention_infer (``examples/23_flash_attention_infer/fai_kernel.cpp``): ``FAInferKernel``
with the ``MmadAtlasA2FAIQK`` / ``MmadAtlasA2FAIPV`` blocks and their masked-tail variants, the online softmax and
the rescale of the running output on the vector cores, assembled step by step like the C++.

Used by ``examples/23_flash_attention_infer.py`` and :mod:`catlass_py.ops.flash_attention_infer`.
"""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import Element, Flag, TileShape
from catlass_py.epilogue import BlockEpilogue
from catlass_py.epilogue.dispatch_policy_attention import EpilogueAtlasA2OnlineSoftmax, EpilogueAtlasA2RescaleO
from catlass_py.gemm import GemmShape, GemmType
from catlass_py.gemm.block import BlockMmad
from catlass_py.gemm.dispatch_policy_attention import (
    MmadAtlasA2FAIPV,
    MmadAtlasA2FAIQK,
    MmadAtlasA2FAITailPV,
    MmadAtlasA2FAITailQK,
)
from catlass_py.kernel.fa_infer import FAInferKernel
from catlass_py.layout import ColumnMajor, RowMajor


def assemble(arch=ATLAS_A2, *, element: Element = "float16", paged_cache: Flag = True, enable_unit_flag: Flag = False,
             l1_tile: TileShape = (128, 128, 128), l0_tile: TileShape | None = None):
    """Build ``FAInferFp16`` / ``FAInferBf16``'s kernel like the C++ (``element`` 'float16' or 'bfloat16';
    ``paged_cache`` and ``enable_unit_flag`` are the blocks' template flags, the example's ``<true, false>``;
    ``l1_tile`` / ``l0_tile`` the blocks' ``L1TileShape`` / ``L0TileShape``, None: L1's. The blocks accept only
    128 x 128 x 128, the KV and head-dimension split of the kernel: the keywords exist so that the rule is
    checked where the C++ states it)."""
    # 1. Element types and layouts: Q, P, V, O RowMajor; K ColumnMajor (K^T); S, O_tmp fp32.
    q_type = GemmType(element, RowMajor)
    k_type = GemmType(element, ColumnMajor)
    v_type = GemmType(element, RowMajor)
    s_type = GemmType("float32", RowMajor)
    p_type = GemmType(element, RowMajor)
    mask_type = GemmType(element, RowMajor)
    o_tmp_type = GemmType("float32", RowMajor)
    o_type = GemmType(element, RowMajor)
    update_type = GemmType("float32", RowMajor)
    # 2. Tiles: L1TileShape::K must be the embedding size (128); L0 = L1.
    l1_tile_shape = GemmShape(*l1_tile)
    l0_tile_shape = l1_tile_shape if l0_tile is None else GemmShape(*l0_tile)
    # 3. Q K^T and its masked-tail variant.
    block_mmad_qk = BlockMmad(MmadAtlasA2FAIQK(paged_cache, enable_unit_flag, arch=arch), l1_tile_shape,
                              l0_tile_shape, q_type, k_type, s_type)
    block_mmad_qk_tail = BlockMmad(MmadAtlasA2FAITailQK(paged_cache, enable_unit_flag, arch=arch), l1_tile_shape,
                                   l0_tile_shape, q_type, k_type, s_type)
    # 4. The online softmax of one S stack.
    epilogue_online_softmax = BlockEpilogue(EpilogueAtlasA2OnlineSoftmax(arch=arch), p_type, s_type, mask_type)
    # 5. P V and its masked-tail variant.
    block_mmad_pv = BlockMmad(MmadAtlasA2FAIPV(paged_cache, enable_unit_flag, arch=arch), l1_tile_shape,
                              l0_tile_shape, p_type, v_type, o_tmp_type)
    block_mmad_pv_tail = BlockMmad(MmadAtlasA2FAITailPV(paged_cache, enable_unit_flag, arch=arch), l1_tile_shape,
                                   l0_tile_shape, p_type, v_type, o_tmp_type)
    # 6. The rescale of the running output.
    epilogue_rescale_o = BlockEpilogue(EpilogueAtlasA2RescaleO(arch=arch), o_type, o_tmp_type, update_type)
    # 7. The kernel.
    return FAInferKernel(block_mmad_qk, block_mmad_pv, block_mmad_qk_tail, block_mmad_pv_tail, epilogue_online_softmax,
                         epilogue_rescale_o, paged_cache)


__all__ = ["assemble"]
