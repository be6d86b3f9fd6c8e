"""BlockMmad for ``MmadAtlasA2MLAPV`` (CATLASS ``gemm/block/block_mmad_mla_pv.hpp``): O_tmp = P V of one KV block
for multi-head latent attention (example 19), with V the first 512 columns of the K stage the QK block left in L1
(the nZ image of K^T is the zN image of K).

Per call, four 128-column pieces of the head dimension (``p = (pingpongIdx - 1) % 2``, the K stage of this
block; L0C stage ``locPingPongIdx % 2``, advanced per piece):

=============  ================================================================  ==========================================
step           what                                                              events
=============  ================================================================  ==========================================
every piece    V piece L1 -> L0B[(e + 1) % 2]                                     wait M_MTE1[l0b+2]; last: set MTE1_MTE2[p]
first piece    wait for the softmax, P GM -> L1, P L1 -> L0A[p]                   CrossCoreWaitFlag ``softmaxReady``; wait
                                                                                 MTE1_MTE2[7]; MTE2_MTE1[7] (set, wait); wait
                                                                                 M_MTE1[p]; set MTE1_MTE2[7]
every piece    Mmad into L0C, fixpipe the ``rowNumRound x 128`` piece of O_tmp     MTE1_M[l0b] (set, wait); wait FIX_M[c];
                                                                                 set M_MTE1[l0b+2] (last: also M_MTE1[p]);
                                                                                 M_FIX[c] (set, wait); set FIX_M[c]
=============  ================================================================  ==========================================
"""

from __future__ import annotations

from catlass_py.gemm.block.attention_calls import MLA_PV
from catlass_py.arch.pipes import HardEvent
from catlass_py.gemm.block._fai_common import r16
from catlass_py.gemm.block.mmad_mla_qk import EMBED_SPLIT_SIZE, MLABlockMmadSpec
from catlass_py.gemm.coord import GemmCoord, round_up
from catlass_py.layout import zN

EMBED_SPLIT_LOOP_V = 4


class BlockMmadMLAPV(MLABlockMmadSpec):
    """Assembled CATLASS ``BlockMmad<MmadAtlasA2MLAPV, L1TileShape, L0TileShape, PType (RowMajor), VType
    (RowMajor), OTmpType (float RowMajor)>``."""

    CAPABILITIES = MLA_PV

    name = "BlockMmadMLAPV"

    def __call__(self, resource, l1_buf_addr_start: int = 0) -> "MLAPVInstance":
        return MLAPVInstance(self, resource, l1_buf_addr_start)


class MLAPVInstance:
    """One cube core's :class:`BlockMmadMLAPV`."""

    def __init__(self, spec: BlockMmadMLAPV, resource, l1_buf_addr_start: int = 0):
        self.spec = spec
        self.ctx = resource.ctx
        ea, eb, acc = spec.element_a, spec.element_b, spec.element_accumulator
        self.l1a = resource.l1_buf.get_buffer_by_byte(ea, l1_buf_addr_start + spec.l1a_tile_size + spec.l1b_tile_size * 2)
        self.l1b = [resource.l1_buf.get_buffer_by_byte(eb, l1_buf_addr_start + spec.l1a_tile_size + spec.l1b_tile_size * i)
                    for i in range(2)]
        self.l0a = [resource.l0a_buf.get_buffer_by_byte(ea, spec.l0a_pingpong_size * i) for i in range(2)]
        self.l0b = [resource.l0b_buf.get_buffer_by_byte(eb, spec.l0b_pingpong_size * i) for i in range(2)]
        self.l0c = [resource.l0c_buf.get_buffer_by_byte(acc, spec.l0c_pingpong_size * i) for i in range(2)]
        self.loc_pingpong_idx = 0

    def __call__(self, g_a, g_c, layout_a, layout_b, layout_c, actual_shape, n_idx: int, pingpong_idx: int,
                 softmax_ready) -> None:
        """O_tmp = P V (module docstring); the C++ ``locPingPongIdx`` reference is this object's counter."""
        spec, ctx = self.spec, self.ctx
        copy = spec.tile_copy
        ea, eb = spec.element_a, spec.element_b
        row_num, embed, v_seq_tile = GemmCoord(*actual_shape)
        split = EMBED_SPLIT_SIZE
        row_round = round_up(row_num, spec.l1_a_align.m_aligned)
        split_round = round_up(split, spec.l1_b_align.n_aligned)
        v_round = round_up(v_seq_tile, spec.l1_b_align.k_aligned)
        p = (pingpong_idx - 1) % 2
        layout_v_l1 = spec.layout_b_in_l1.make_layout(eb, r16(v_seq_tile), r16(embed))
        for e in range(EMBED_SPLIT_LOOP_V):
            c = self.loc_pingpong_idx % 2
            b = (e + 1) % 2
            ctx.wait_flag(HardEvent.M_MTE1, b + 2)
            copy.copy_l1_to_l0b(self.l0b[b], self.l1b[p][e * v_round * EMBED_SPLIT_SIZE],
                                spec.layout_b_in_l0.make_layout(eb, v_seq_tile, split), layout_v_l1)
            if e == EMBED_SPLIT_LOOP_V - 1:
                ctx.set_flag(HardEvent.MTE1_MTE2, p)
            if e == 0:
                layout_p_l1 = spec.layout_a_in_l1.make_layout(ea, r16(row_num), r16(v_seq_tile))
                ctx.cross_core_wait_flag(softmax_ready)
                ctx.wait_flag(HardEvent.MTE1_MTE2, 7)
                copy.copy_gm_to_l1_a(self.l1a, g_a, layout_p_l1, layout_a)
                ctx.set_flag(HardEvent.MTE2_MTE1, 7)
                ctx.wait_flag(HardEvent.MTE2_MTE1, 7)
                ctx.wait_flag(HardEvent.M_MTE1, p)
                copy.copy_l1_to_l0a(self.l0a[p], self.l1a, spec.layout_a_in_l0.make_layout(ea, row_num, v_seq_tile),
                                    layout_p_l1)
                ctx.set_flag(HardEvent.MTE1_MTE2, 7)
            ctx.set_flag(HardEvent.MTE1_M, b)
            ctx.wait_flag(HardEvent.MTE1_M, b)
            ctx.wait_flag(HardEvent.FIX_M, c)
            spec.tile_mmad(self.l0c[c], self.l0a[p], self.l0b[b], row_round, split, v_seq_tile)
            ctx.set_flag(HardEvent.M_MTE1, b + 2)
            if e == EMBED_SPLIT_LOOP_V - 1:
                ctx.set_flag(HardEvent.M_MTE1, p)
            ctx.set_flag(HardEvent.M_FIX, c)
            ctx.wait_flag(HardEvent.M_FIX, c)
            layout_piece = layout_c.get_tile_layout(row_round, split_round)
            copy.copy_l0c_to_gm(g_c[e * split_round], self.l0c[c], layout_piece,
                                zN.make_layout_in_l0c(row_round, split_round))
            ctx.set_flag(HardEvent.FIX_M, c)
            self.loc_pingpong_idx += 1


__all__ = ["BlockMmadMLAPV", "MLAPVInstance"]
