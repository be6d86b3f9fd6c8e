"""BlockMmad for ``MmadAtlasA2FAITailQK`` (CATLASS ``gemm/block/block_mmad_fai_qk_head_tail.hpp``): S = Q K^T of
the masked (diagonal) stack of a flash-attention row block: the last ``qSBlockSize`` KV columns, which may start
``maskTailS`` columns into a KV block.

Differences from :mod:`catlass_py.gemm.block.mmad_fai_qk_normal`: every KV block loads Q into its own L0A stage
(wait/set M_MTE1[p]), accumulates into the L0C half ``p`` and is stored on its own (FIX_M[p], M_FIX[p]) at
column ``stackTile`` of S, the running sum of the previous blocks' widths; the fixpipe's column count is that
running sum, so it also copies the L0C columns after the block's own (S columns nobody reads). The first block
loads its own K when ``preloadFlag`` is set and starts ``maskTailS`` rows into its KV block.
"""

from __future__ import annotations

from catlass_py.gemm.block.attention_calls import FAI_TAIL_QK
from catlass_py.arch.pipes import HardEvent
from catlass_py.gemm.block._fai_common import (
    r16,
    KV_SPLIT_SIZE,
    UNIT_BLOCK_STACK_NUM,
    FAIBlockInstance,
    FAIBlockMmadSpec,
    fai_block_shape,
)
from catlass_py.gemm.block.mmad_fai_qk_normal import load_q
from catlass_py.gemm.coord import GemmCoord, ceil_div, round_up
from catlass_py.layout import ColumnMajor, RowMajor, zN


class BlockMmadFAITailQK(FAIBlockMmadSpec):
    """Assembled CATLASS ``BlockMmad<MmadAtlasA2FAITailQK<PAGED_CACHE_FLAG, ENABLE_UNIT_FLAG>, ...>`` (same
    operand types and checks as :class:`~catlass_py.gemm.block.mmad_fai_qk_normal.BlockMmadFAIQK`)."""

    CAPABILITIES = FAI_TAIL_QK

    name = "BlockMmadFAITailQK"
    B_LAYOUT = ColumnMajor

    def __init__(self, policy, *args):
        super().__init__(policy, *args)
        what = self.describe_short(policy)
        self._budget(what, "L0C (two 128-column halves)", self.l1_tile_shape.m * 2 * KV_SPLIT_SIZE * 4,
                     self.arch.l0c_size, "L1TileShape::M * 256 * sizeof(float) <= L0C_SIZE")

    def __call__(self, resource, l1_buf_addr_start: int = 0) -> "FAITailQKInstance":
        return FAITailQKInstance(self, resource, l1_buf_addr_start)


class FAITailQKInstance(FAIBlockInstance):
    """One cube core's :class:`BlockMmadFAITailQK`. It shares Q's L1 buffer with the normal QK block built at
    the same address."""

    def __init__(self, spec: BlockMmadFAITailQK, resource, l1_buf_addr_start: int = 0):
        self.spec = spec
        self.ctx = resource.ctx
        ea, eb = spec.element_a, spec.element_b
        self.l1a = resource.l1_buf.get_buffer_by_byte(ea, l1_buf_addr_start)
        self.l1b = [resource.l1_buf.get_buffer_by_byte(eb, l1_buf_addr_start + spec.l1a_tile_size + spec.l1b_tile_size * i)
                    for i in range(2)]
        self.l0a = [resource.l0a_buf.get_buffer_by_byte(ea, spec.l0a_pingpong_size * i) for i in range(2)]
        self.l0b = [resource.l0b_buf.get_buffer_by_byte(eb, spec.l0b_pingpong_size * i) for i in range(2)]
        self.l0c = resource.l0c_buf.get_buffer_by_byte(spec.element_accumulator, 0)

    def load_q_gm(self, g_a, layout_a, row_num: int, single_group_heads: int, q_heads: int) -> None:
        """CATLASS ``loadQGM`` (the same as the normal block's)."""
        load_q(self, g_a, layout_a, row_num, single_group_heads, q_heads)

    def __call__(self, g_a, g_b, g_c, g_block_table, layout_a, layout_b, actual_ori_shape, n_idx: int, n_loop: int,
                 block_size: int, kv_seqlen: int, stride_kv: int, mask_tail_s: int, preload_flag: bool) -> None:
        """S = Q K^T for KV columns ``n_idx * 128 + mask_tail_s`` up to ``kv_seqlen`` (at most four blocks)."""
        row_num, _, embed = GemmCoord(*actual_ori_shape)
        k_loop = ceil_div(embed, self.spec.l1_tile_shape.k)
        nk_block_loop = n_loop * k_loop
        nk_next = n_idx * k_loop + 1
        stack_tile = 0
        shape = GemmCoord(row_num, 0, 0)
        bsi = 0
        while bsi < UNIT_BLOCK_STACK_NUM and n_idx + bsi < n_loop:
            for k_idx in range(k_loop):
                now = n_idx + bsi
                n_next, k_next = nk_next // k_loop, nk_next % k_loop
                g_c_offset = stack_tile
                start = mask_tail_s if now == n_idx else 0
                start_next = mask_tail_s if n_next == n_idx else 0
                actual = fai_block_shape(shape, now, k_idx, n_loop, k_loop, kv_seqlen, embed, now == n_idx,
                                         mask_tail_s, pv=False)
                actual_next = fai_block_shape(shape, n_next, k_next, n_loop, k_loop, kv_seqlen, embed,
                                              n_next == n_idx, mask_tail_s, pv=False)
                b_offset = self.get_kv_offset(g_block_table, now, k_idx, n_loop, k_loop, stride_kv, block_size, start)
                b_next_offset = self.get_kv_offset(g_block_table, n_next, k_next, n_loop, k_loop, stride_kv, block_size,
                                                   start_next)
                first_itr = k_idx == 0
                end_itr = k_idx == k_loop - 1
                first_q_itr = bsi == 0
                end_q_itr = (now == n_loop - 1 or bsi == UNIT_BLOCK_STACK_NUM - 1) and k_idx == k_loop - 1
                init_mmad = k_idx == 0
                stack_tile += actual.n
                layout_s = RowMajor(row_num, stack_tile, 512)
                self.compute_qk(g_a, g_b, b_offset, g_c[g_c_offset], b_next_offset, layout_a, layout_b, layout_s, actual,
                                actual_next, bsi, nk_next, nk_block_loop, first_itr, end_itr, init_mmad, first_q_itr,
                                end_q_itr, preload_flag)
                nk_next += 1
                preload_flag = False
            mask_tail_s = 0
            bsi += 1

    def compute_qk(self, g_a, g_b, b_offset, g_c, b_next_offset, layout_a, layout_b, layout_c, actual, actual_next,
                   now_idx: int, nk_idx: int, nk_loop: int, first_itr: bool, end_itr: bool, init_mmad: bool,
                   first_q_itr: bool, end_q_itr: bool, preload_flag: bool) -> None:
        """CATLASS ``computeQK`` of the tail block (module docstring)."""
        spec, ctx = self.spec, self.ctx
        copy = spec.tile_copy
        ea, eb = spec.element_a, spec.element_b
        m_actual, n_actual, k_actual = actual
        m_round = round_up(m_actual, spec.l1_a_align.m_aligned)
        n_round = round_up(n_actual, spec.l1_a_align.m_aligned)
        layout_a_l1 = spec.layout_a_in_l1.make_layout(ea, r16(m_round), r16(k_actual))
        layout_a_l0 = spec.layout_a_in_l0.make_layout(ea, m_round, k_actual)
        layout_b_l1 = spec.layout_b_in_l1.make_layout(eb, r16(k_actual), r16(n_actual))
        layout_b_l0 = spec.layout_b_in_l0.make_layout(eb, k_actual, n_round)
        loc_pp = nk_idx % 2
        p = nk_idx % 2
        if preload_flag:
            ctx.wait_flag(HardEvent.MTE1_MTE2, p)
            copy.copy_gm_to_l1_b(self.l1b[p], g_b[b_offset], layout_b_l1, layout_b.get_tile_layout(k_actual, n_actual))
            ctx.set_flag(HardEvent.MTE2_MTE1, p)
        if nk_idx != nk_loop:
            n_next, k_next = actual_next.n, actual_next.k
            ctx.wait_flag(HardEvent.MTE1_MTE2, 1 - p)
            copy.copy_gm_to_l1_b(self.l1b[1 - p], g_b[b_next_offset], spec.layout_b_in_l1.make_layout(eb, r16(k_next), r16(n_next)),
                                 layout_b.get_tile_layout(k_next, n_next))
            ctx.set_flag(HardEvent.MTE2_MTE1, 1 - p)
        ctx.wait_flag(HardEvent.M_MTE1, p)
        copy.copy_l1_to_l0a(self.l0a[p], self.l1a, layout_a_l0, layout_a_l1)
        ctx.wait_flag(HardEvent.MTE2_MTE1, p)
        ctx.wait_flag(HardEvent.M_MTE1, p + 2)
        copy.copy_l1_to_l0b(self.l0b[p], self.l1b[p], layout_b_l0, layout_b_l1)
        ctx.set_flag(HardEvent.MTE1_MTE2, p)
        ctx.set_flag(HardEvent.MTE1_M, p)
        ctx.wait_flag(HardEvent.MTE1_M, p)
        unit_flag = 0
        if not spec.policy.enable_unit_flag:
            if first_itr:
                ctx.wait_flag(HardEvent.FIX_M, loc_pp)
        else:
            unit_flag = 0b11
        l0c = self.l0c[loc_pp * m_round * KV_SPLIT_SIZE]
        spec.tile_mmad(l0c, self.l0a[p], self.l0b[p], m_round, n_actual, k_actual, init_mmad, unit_flag)
        ctx.set_flag(HardEvent.M_MTE1, p)
        ctx.set_flag(HardEvent.M_MTE1, p + 2)
        # nSize of the fixpipe is layout_c's (cumulative) width; srcStride is the m_actual tile's panel stride.
        layout_l0c = zN.make_layout_in_l0c(m_actual, max(n_actual, layout_c.cols))
        if end_itr:
            if not spec.policy.enable_unit_flag:
                ctx.set_flag(HardEvent.M_FIX, loc_pp)
                ctx.wait_flag(HardEvent.M_FIX, loc_pp)
                copy.copy_l0c_to_gm(g_c, l0c, layout_c, layout_l0c)
                ctx.set_flag(HardEvent.FIX_M, loc_pp)
            else:
                copy.copy_l0c_to_gm(g_c, l0c, layout_c, layout_l0c, unit_flag)


__all__ = ["BlockMmadFAITailQK", "FAITailQKInstance"]
