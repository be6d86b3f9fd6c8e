"""CATLASS example 19 mla (``examples/19_mla/mla_kernel.cpp``, the generic ``MLA<T>`` kernel): ``MLAKernel`` with the
``MmadAtlasA2MLAQK`` / ``MmadAtlasA2MLAPV`` blocks, the MLA softmax, the rescale of the running output and the
flash-decoding combine on the vector cores, assembled step by step like the C++. (With 128 heads ``mla.cpp``
launches its TP1 / AMLA kernels instead; they are not assembled here.)

Used by ``examples/19_mla.py`` and :mod:`catlass_py.ops.mla`.
"""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.settings import Count, Element, TileShape
from catlass_py.epilogue import BlockEpilogue
from catlass_py.epilogue.dispatch_policy_attention import (
    EpilogueAtlasA2MLAFDRescaleO,
    EpilogueAtlasA2MLARescaleO,
    EpilogueAtlasA2MLASoftmax,
)
from catlass_py.gemm import GemmShape, GemmType
from catlass_py.gemm.block import BlockMmad
from catlass_py.gemm.dispatch_policy_attention import MmadAtlasA2MLAPV, MmadAtlasA2MLAQK
from catlass_py.kernel.mla import MLAKernel
from catlass_py.layout import ColumnMajor, RowMajor


def assemble(arch=ATLAS_A2, *, element: Element = "float16", compute_ele_num: Count = 6144,
             l1_tile: TileShape = (128, 128, 576), l0_tile: TileShape | None = None):
    """Build ``MLA<Dtype>``'s kernel like the C++ (``element`` 'float16' or 'bfloat16'; ``compute_ele_num`` the
    flash-decoding epilogue's ``COMPUTE_ELE_NUM``; ``l1_tile`` / ``l0_tile`` the blocks' ``L1TileShape`` /
    ``L0TileShape``, None: L1's. The blocks accept only 128 x 128 x 576, the 512 + 64 head dimensions: the
    keywords exist so that the rule is checked where the C++ states it)."""
    # 1. Types: Q, P, V, O RowMajor; K ColumnMajor (K^T); S, O_tmp, the update and lse fp32.
    q_type = GemmType(element, RowMajor)
    k_type = GemmType(element, ColumnMajor)
    v_type = GemmType(element, RowMajor)
    s_type = GemmType("float32", RowMajor)
    p_type = GemmType(element, RowMajor)
    mask_type = GemmType(element, RowMajor)
    o_tmp_type = GemmType("float32", RowMajor)
    o_type = GemmType(element, RowMajor)
    update_type = GemmType("float32", RowMajor)
    # 2. Tiles: L1TileShape::K is the 512 + 64 head dimensions; L0 = L1.
    l1_tile_shape = GemmShape(*l1_tile)
    l0_tile_shape = l1_tile_shape if l0_tile is None else GemmShape(*l0_tile)
    # 3. [Q, Q_rope] [K, K_rope]^T.
    block_mmad_qk = BlockMmad(MmadAtlasA2MLAQK(arch=arch), l1_tile_shape, l0_tile_shape, q_type, k_type, s_type)
    # 4. Online softmax of one S tile.
    epilogue_mla_softmax = BlockEpilogue(EpilogueAtlasA2MLASoftmax(arch=arch), p_type, s_type, mask_type)
    # 5. P V with V resident in L1.
    block_mmad_pv = BlockMmad(MmadAtlasA2MLAPV(arch=arch), l1_tile_shape, l0_tile_shape, p_type, v_type, o_tmp_type)
    # 6. The running-output rescale.
    epilogue_mla_rescale_o = BlockEpilogue(EpilogueAtlasA2MLARescaleO(arch=arch), o_type, update_type, o_tmp_type)
    # 7. The flash-decoding combine (COMPUTE_ELE_NUM 6144).
    l_type = GemmType("float32", RowMajor)
    epilogue_mla_fd_rescale_o = BlockEpilogue(EpilogueAtlasA2MLAFDRescaleO(compute_ele_num, arch=arch), o_type,
                                              l_type)
    # 8. The kernel.
    return MLAKernel(block_mmad_qk, block_mmad_pv, epilogue_mla_softmax, epilogue_mla_rescale_o,
                     epilogue_mla_fd_rescale_o)


__all__ = ["assemble"]
