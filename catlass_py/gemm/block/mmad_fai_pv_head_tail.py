"""BlockMmad for ``MmadAtlasA2FAITailPV`` (CATLASS ``gemm/block/block_mmad_fai_pv_head_tail.hpp``): O_tmp = P V
of the masked (diagonal) stack, whose first KV block may start ``maskTailS`` rows in.

Differences from :mod:`catlass_py.gemm.block.mmad_fai_pv_normal`: P is loaded one KV block at a time
(``rowNum x kActual`` at column ``gPOffset`` of the P workspace, into L1 stage ``p``: wait MTE1_MTE2[p+4],
set/wait MTE2_MTE1[5], set MTE1_MTE2[p+4] after its L1 -> L0A copy), L0A and L0B are single buffers guarded by
M_MTE1[0..1] and [2..3], and the softmax wait is the first block's only cross-core step.
"""

from __future__ import annotations

from catlass_py.gemm.block.attention_calls import FAI_TAIL_PV
from catlass_py.arch.pipes import HardEvent
from catlass_py.gemm.block._fai_common import r16, UNIT_BLOCK_STACK_NUM, FAIBlockInstance, FAIBlockMmadSpec, fai_block_shape
from catlass_py.gemm.block.mmad_fai_pv_normal import LOAB_BLOCK
from catlass_py.gemm.coord import GemmCoord, ceil_div, round_up
from catlass_py.layout import RowMajor, zN


class BlockMmadFAITailPV(FAIBlockMmadSpec):
    """Assembled CATLASS ``BlockMmad<MmadAtlasA2FAITailPV<PAGED_CACHE_FLAG, ENABLE_UNIT_FLAG>, ...>`` (operand
    types as :class:`~catlass_py.gemm.block.mmad_fai_pv_normal.BlockMmadFAIPV`)."""

    CAPABILITIES = FAI_TAIL_PV

    name = "BlockMmadFAITailPV"

    def __call__(self, resource, l1_buf_addr_start: int = 0) -> "FAITailPVInstance":
        return FAITailPVInstance(self, resource, l1_buf_addr_start)


class FAITailPVInstance(FAIBlockInstance):
    """One cube core's :class:`BlockMmadFAITailPV`."""

    def __init__(self, spec: BlockMmadFAITailPV, resource, l1_buf_addr_start: int = 0):
        self.spec = spec
        self.ctx = resource.ctx
        ea, eb = spec.element_a, spec.element_b
        self.l0a = resource.l0a_buf.get_buffer_by_byte(ea, 0)
        self.l0b = resource.l0b_buf.get_buffer_by_byte(eb, 0)
        self.l1a = [resource.l1_buf.get_buffer_by_byte(ea, l1_buf_addr_start + spec.l1a_tile_size * LOAB_BLOCK * i)
                    for i in range(2)]
        self.l0c = [resource.l0c_buf.get_buffer_by_byte(spec.element_accumulator, spec.l0c_pingpong_size * i)
                    for i in range(2)]
        self.l1b = [resource.l1_buf.get_buffer_by_byte(eb, l1_buf_addr_start + spec.l1a_tile_size * 4
                                                       + spec.l1b_tile_size * i) for i in range(2)]

    def __call__(self, g_a, g_b, g_c, g_block_table, layout_a, layout_b, actual_ori_shape, n_idx: int, n_loop: int,
                 block_size: int, kv_seqlen: int, stride_kv: int, softmax_flag, mask_tail_s: int,
                 preload_flag: bool) -> None:
        """O_tmp = P V for KV columns ``n_idx * 128 + mask_tail_s`` up to ``kv_seqlen``."""
        embed = GemmCoord(*actual_ori_shape).n
        k_loop = ceil_div(embed, self.spec.l1_tile_shape.k)
        row_num = layout_a.rows
        shape = GemmCoord(row_num, 0, 0)
        nk_block_loop = (n_loop + LOAB_BLOCK - 1) // LOAB_BLOCK * k_loop
        nk_next = (n_idx + LOAB_BLOCK - 1) // LOAB_BLOCK * k_loop + 1
        unit = k_loop * UNIT_BLOCK_STACK_NUM
        for k_idx in range(k_loop):
            now_mask_tail = mask_tail_s
            p_offset = 0
            bsi = 0
            while bsi < UNIT_BLOCK_STACK_NUM and n_idx + bsi < n_loop:
                now = n_idx + bsi
                k_next = (nk_next % unit) // (UNIT_BLOCK_STACK_NUM // LOAB_BLOCK)
                n_next = (nk_next % unit) % (UNIT_BLOCK_STACK_NUM // LOAB_BLOCK) + nk_next // unit * UNIT_BLOCK_STACK_NUM
                start = mask_tail_s if now == n_idx else 0
                start_next = mask_tail_s if n_next == n_idx else 0
                actual = fai_block_shape(shape, now, k_idx, n_loop, k_loop, kv_seqlen, embed, now == n_idx,
                                         now_mask_tail, pv=True)
                actual_next = fai_block_shape(shape, n_next, k_next, n_loop, k_loop, kv_seqlen, embed, n_next == n_idx,
                                              now_mask_tail, pv=True)
                b_offset = self.get_kv_offset(g_block_table, now, k_idx, n_loop, k_loop, stride_kv, block_size, start)
                b_next_offset = self.get_kv_offset(g_block_table, n_next, k_next, n_loop, k_loop, stride_kv, block_size,
                                                   start_next)
                first_itr = bsi == 0
                end_itr = bsi + LOAB_BLOCK > UNIT_BLOCK_STACK_NUM - 1 or now + LOAB_BLOCK > n_loop - 1
                init_mmad = bsi == 0
                pv_cv_itr = first_itr and k_idx == 0
                layout_o = RowMajor(row_num, embed, embed)
                self.compute_pv(g_a[p_offset], g_b, b_offset, g_c, b_next_offset, layout_a, layout_b, layout_o, actual,
                                actual_next, now, nk_next, nk_block_loop, first_itr, end_itr, init_mmad, pv_cv_itr,
                                softmax_flag, preload_flag)
                p_offset += actual.k
                nk_next += 1
                now_mask_tail = 0
                preload_flag = False
                bsi += LOAB_BLOCK

    def compute_pv(self, g_a, g_b, b_offset, g_c, b_next_offset, layout_a, layout_b, layout_c, actual, actual_next,
                   now_idx: int, nk_idx: int, nk_loop: int, first_itr: bool, end_itr: bool, init_mmad: bool,
                   pv_cv_itr: bool, softmax_flag, preload_flag: bool = False) -> None:
        """CATLASS ``computePV`` of the tail block (module docstring)."""
        spec, ctx = self.spec, self.ctx
        copy = spec.tile_copy
        ea, eb = spec.element_a, spec.element_b
        m_actual, n_actual, k_actual = actual
        m_round = round_up(m_actual, spec.l1_a_align.m_aligned)
        layout_a_l1 = spec.layout_a_in_l1.make_layout(ea, r16(m_round), r16(k_actual))
        layout_a_l0 = spec.layout_a_in_l0.make_layout(ea, m_round, k_actual)
        layout_b_l1 = spec.layout_b_in_l1.make_layout(eb, r16(k_actual), r16(n_actual))
        layout_b_l0 = spec.layout_b_in_l0.make_layout(eb, k_actual, n_actual)
        p = nk_idx % 2
        if nk_idx == 1 or preload_flag:
            ctx.wait_flag(HardEvent.MTE1_MTE2, p + 2)
            copy.copy_gm_to_l1_b(self.l1b[p], g_b[b_offset], layout_b_l1, layout_b.get_tile_layout(k_actual, n_actual))
            ctx.set_flag(HardEvent.MTE2_MTE1, p + 2)
        ctx.wait_flag(HardEvent.MTE2_MTE1, p + 2)
        ctx.wait_flag(HardEvent.M_MTE1, 2)
        ctx.wait_flag(HardEvent.M_MTE1, 3)
        copy.copy_l1_to_l0b(self.l0b, self.l1b[p], layout_b_l0, layout_b_l1)
        ctx.set_flag(HardEvent.MTE1_MTE2, p + 2)
        if pv_cv_itr:
            ctx.cross_core_wait_flag(softmax_flag)
        ctx.wait_flag(HardEvent.MTE1_MTE2, p + 4)
        copy.copy_gm_to_l1_a(self.l1a[p], g_a, layout_a_l1, layout_a.get_tile_layout(m_actual, k_actual))
        ctx.set_flag(HardEvent.MTE2_MTE1, 5)
        if nk_idx != nk_loop:
            n_next, k_next = actual_next.n, actual_next.k
            ctx.wait_flag(HardEvent.MTE1_MTE2, 1 - p + 2)
            copy.copy_gm_to_l1_b(self.l1b[1 - p], g_b[b_next_offset], spec.layout_b_in_l1.make_layout(eb, r16(k_next), r16(n_next)),
                                 layout_b.get_tile_layout(k_next, n_next))
            ctx.set_flag(HardEvent.MTE2_MTE1, 1 - p + 2)
        ctx.wait_flag(HardEvent.MTE2_MTE1, 5)
        ctx.wait_flag(HardEvent.M_MTE1, 0)
        ctx.wait_flag(HardEvent.M_MTE1, 1)
        copy.copy_l1_to_l0a(self.l0a, self.l1a[p], layout_a_l0, layout_a_l1)
        ctx.set_flag(HardEvent.MTE1_MTE2, p + 4)
        ctx.set_flag(HardEvent.MTE1_M, p)
        ctx.wait_flag(HardEvent.MTE1_M, p)
        unit_flag = 0
        if not spec.policy.enable_unit_flag:
            if first_itr:
                ctx.wait_flag(HardEvent.FIX_M, 0)
                ctx.wait_flag(HardEvent.FIX_M, 1)
        else:
            unit_flag = 0b11 if end_itr else 0b10
        spec.tile_mmad(self.l0c[0], self.l0a, self.l0b, m_round, n_actual, k_actual, init_mmad, unit_flag)
        ctx.set_flag(HardEvent.M_MTE1, 0)
        ctx.set_flag(HardEvent.M_MTE1, 1)
        ctx.set_flag(HardEvent.M_MTE1, 2)
        ctx.set_flag(HardEvent.M_MTE1, 3)
        layout_l0c = zN.make_layout_in_l0c(m_actual, max(n_actual, layout_c.cols))
        if end_itr:
            if not spec.policy.enable_unit_flag:
                ctx.set_flag(HardEvent.M_FIX, 0)
                ctx.wait_flag(HardEvent.M_FIX, 0)
                copy.copy_l0c_to_gm(g_c, self.l0c[0], layout_c, layout_l0c)
                ctx.set_flag(HardEvent.FIX_M, 0)
                ctx.set_flag(HardEvent.FIX_M, 1)
            else:
                copy.copy_l0c_to_gm(g_c, self.l0c[0], layout_c, layout_l0c, 0b11)


__all__ = ["BlockMmadFAITailPV", "FAITailPVInstance"]
