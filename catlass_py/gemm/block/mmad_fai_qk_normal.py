"""BlockMmad for ``MmadAtlasA2FAIQK`` (CATLASS ``gemm/block/block_mmad_fai_qk_normal.hpp``): S = Q K^T of one
stack of up to four 128-column KV blocks, for the unmasked part of a flash-attention row block.

Buffers (from ``l1_buf_addr_start``): Q (``L1.M x L1.K``) in L1, two K stages after it; L0A stage 0 holds Q for
the whole stack, L0B and the two 128-column halves of L0C alternate. Per (KV block, head-dimension piece):

=================  ==========================================  ===============================================
step               what                                        events
=================  ==========================================  ===============================================
first block only   K of this block GM -> L1 stage ``p``          wait MTE1_MTE2[p], set MTE2_MTE1[p]
not the last       prefetch the next block's K into ``1 - p``    wait MTE1_MTE2[1-p], set MTE2_MTE1[1-p]
first of a stack   Q L1 -> L0A[0]                              wait M_MTE1[0] and [1]
every block        K L1 -> L0B[p], then Mmad into L0C half       wait MTE2_MTE1[p], M_MTE1[p+2]; set MTE1_MTE2[p];
                   ``block % 2``                               MTE1_M[p] (set, wait); first of a pair: wait
                                                               FIX_M[0], [1]; after: set M_MTE1[p+2]
end of a stack     -                                           set M_MTE1[0], [1]
end of a pair      fixpipe both halves of L0C to S (ldm 512)     set/wait M_FIX[p], set FIX_M[0], [1]
=================  ==========================================  ===============================================

``p = nkBlockIdx % 2`` counts (KV block, piece) steps across calls of one task.
"""

from __future__ import annotations

from catlass_py.gemm.block.attention_calls import FAI_QK
from catlass_py.arch.pipes import HardEvent
from catlass_py.gemm.block._fai_common import (
    r16,
    BLOCK_SIZE,
    KV_SPLIT_SIZE,
    UNIT_BLOCK_STACK_NUM,
    FAIBlockInstance,
    FAIBlockMmadSpec,
    fai_block_shape,
)
from catlass_py.gemm.coord import GemmCoord, ceil_div, round_up
from catlass_py.layout import ColumnMajor, RowMajor, zN
from catlass_py.tile.ascendc_copy import Nd2NzParams, data_copy_nd2nz
from catlass_py.tile.copy_gm_to_l1 import STRIDE_LIMIT


class BlockMmadFAIQK(FAIBlockMmadSpec):
    """Assembled CATLASS ``BlockMmad<MmadAtlasA2FAIQK<PAGED_CACHE_FLAG, ENABLE_UNIT_FLAG>, L1TileShape,
    L0TileShape, QType (RowMajor), KType (ColumnMajor), SType (float RowMajor)>``.

    Checks beyond :class:`FAIBlockMmadSpec`: L0C holds two ``L1.M x 128`` fp32 halves
    (``L1TileShape::M * 256 * sizeof(float) <= L0C_SIZE``)."""

    CAPABILITIES = FAI_QK

    name = "BlockMmadFAIQK"
    B_LAYOUT = ColumnMajor

    def __init__(self, policy, *args):
        super().__init__(policy, *args)
        what = self.describe_short(policy)
        self._budget(what, "L0C (two 128-column halves)", self.l1_tile_shape.m * 2 * KV_SPLIT_SIZE * 4,
                     self.arch.l0c_size, "L1TileShape::M * 256 * sizeof(float) <= L0C_SIZE")

    def __call__(self, resource, l1_buf_addr_start: int = 0) -> "FAIQKInstance":
        return FAIQKInstance(self, resource, l1_buf_addr_start)


def load_q(block, g_a, layout_a, row_num: int, single_group_heads: int, q_heads: int) -> None:
    """CATLASS ``loadQGM``: the ``row_num = tokens x heads`` rows of Q into L1 (zN), heads outermost: the
    ``ndNum`` overload of ``CopyGmToL1`` puts token ``t`` of head ``h`` at row ``h * tokens + t``; then
    MTE2_MTE1[3] set and waited."""
    spec, ctx = block.spec, block.ctx
    ea = spec.element_a
    embed = layout_a.cols
    row_num_round = round_up(row_num, spec.l1_a_align.m_aligned)
    tokens = row_num // single_group_heads
    layout_single = layout_a.get_tile_layout(single_group_heads, embed)
    src_nd_stride = q_heads * embed
    params = Nd2NzParams(nd_num=tokens, n_value=layout_single.rows, d_value=layout_single.cols,
                         src_nd_matrix_stride=src_nd_stride, src_d_value=layout_single.stride[0],
                         dst_nz_c0_stride=row_num_round, dst_nz_n_stride=tokens, dst_nz_matrix_stride=BLOCK_SIZE)
    if src_nd_stride < STRIDE_LIMIT:
        data_copy_nd2nz(block.l1a, g_a, params)
    else:  # one DMA per source matrix, each one C0 row further down
        one = Nd2NzParams(1, params.n_value, params.d_value, 0, params.src_d_value, params.dst_nz_c0_stride,
                          params.dst_nz_n_stride, 0)
        for i in range(tokens):
            data_copy_nd2nz(block.l1a[i * ea.c0], g_a[i * src_nd_stride], one)
    ctx.set_flag(HardEvent.MTE2_MTE1, 3)
    ctx.wait_flag(HardEvent.MTE2_MTE1, 3)


class FAIQKInstance(FAIBlockInstance):
    """One cube core's :class:`BlockMmadFAIQK` (the constructed C++ object)."""

    def __init__(self, spec: BlockMmadFAIQK, resource, l1_buf_addr_start: int = 0):
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
        """CATLASS ``loadQGM`` (see :func:`load_q`)."""
        load_q(self, g_a, layout_a, row_num, single_group_heads, q_heads)

    def __call__(self, g_a, g_b, g_c, g_block_table, layout_a, layout_b, actual_ori_shape, n_idx: int, n_loop: int,
                 block_size: int, kv_seqlen: int, stride_kv: int) -> None:
        """S[:, stack] = Q K^T for KV blocks ``n_idx .. n_idx + 3`` (those below ``n_loop``)."""
        row_num, _, embed = GemmCoord(*actual_ori_shape)
        l1k = self.spec.l1_tile_shape.k
        k_loop = ceil_div(embed, l1k)
        nk_block_loop = n_loop * k_loop
        nk_next = n_idx * k_loop + 1
        stack_tile = 0
        shape = GemmCoord(row_num, 0, 0)
        bsi = 0
        while bsi < UNIT_BLOCK_STACK_NUM and n_idx + bsi < n_loop:
            for k_idx in range(k_loop):
                now = n_idx + bsi
                n_next, k_next = nk_next // k_loop, nk_next % k_loop
                g_c_offset = bsi // 2 * 2 * KV_SPLIT_SIZE
                actual = fai_block_shape(shape, now, k_idx, n_loop, k_loop, kv_seqlen, embed, now == n_idx, 0, pv=False)
                actual_next = fai_block_shape(shape, n_next, k_next, n_loop, k_loop, kv_seqlen, embed, n_next == n_idx,
                                              0, pv=False)
                b_offset = self.get_kv_offset(g_block_table, now, k_idx, n_loop, k_loop, stride_kv, block_size)
                b_next_offset = self.get_kv_offset(g_block_table, n_next, k_next, n_loop, k_loop, stride_kv, block_size)
                first_itr = bsi % 2 == 0 and k_idx == 0
                end_itr = (bsi % 2 == 1 or now == n_loop - 1) and k_idx == k_loop - 1
                first_q_itr = bsi == 0
                end_q_itr = (now == n_loop - 1 or bsi == UNIT_BLOCK_STACK_NUM - 1) and k_idx == k_loop - 1
                init_mmad = k_idx == 0
                stack_tile += actual.n
                layout_s = RowMajor(row_num, stack_tile, 512)
                self.compute_qk(g_a, g_b, b_offset, g_c[g_c_offset], b_next_offset, layout_a, layout_b, layout_s, actual,
                                actual_next, bsi, nk_next, nk_block_loop, first_itr, end_itr, init_mmad, first_q_itr,
                                end_q_itr)
                nk_next += 1
                if end_itr:
                    stack_tile = 0
            bsi += 1

    def compute_qk(self, g_a, g_b, b_offset, g_c, b_next_offset, layout_a, layout_b, layout_c, actual, actual_next,
                   now_idx: int, nk_idx: int, nk_loop: int, first_itr: bool, end_itr: bool, init_mmad: bool,
                   first_q_itr: bool, end_q_itr: bool) -> None:
        """CATLASS ``computeQK``: one (KV block, head piece) step (module docstring table). The K pointers are
        formed only when loaded (the C++ forms them eagerly, also for the unused block past the end)."""
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
        loc_pp = now_idx % 2
        p = nk_idx % 2
        if nk_idx == 1:
            ctx.wait_flag(HardEvent.MTE1_MTE2, p)
            copy.copy_gm_to_l1_b(self.l1b[p], g_b[b_offset], layout_b_l1, layout_b.get_tile_layout(k_actual, n_actual))
            ctx.set_flag(HardEvent.MTE2_MTE1, p)
        if nk_idx != nk_loop:
            n_next, k_next = actual_next.n, actual_next.k
            ctx.wait_flag(HardEvent.MTE1_MTE2, 1 - p)
            copy.copy_gm_to_l1_b(self.l1b[1 - p], g_b[b_next_offset], spec.layout_b_in_l1.make_layout(eb, r16(k_next), r16(n_next)),
                                 layout_b.get_tile_layout(k_next, n_next))
            ctx.set_flag(HardEvent.MTE2_MTE1, 1 - p)
        if first_q_itr:
            ctx.wait_flag(HardEvent.M_MTE1, 0)
            ctx.wait_flag(HardEvent.M_MTE1, 1)
            copy.copy_l1_to_l0a(self.l0a[0], self.l1a, layout_a_l0, layout_a_l1)
        ctx.wait_flag(HardEvent.MTE2_MTE1, p)
        ctx.wait_flag(HardEvent.M_MTE1, p + 2)
        copy.copy_l1_to_l0b(self.l0b[p], self.l1b[p], layout_b_l0, layout_b_l1)
        ctx.set_flag(HardEvent.MTE1_MTE2, p)
        ctx.set_flag(HardEvent.MTE1_M, p)
        ctx.wait_flag(HardEvent.MTE1_M, p)
        unit_flag = 0
        if not spec.policy.enable_unit_flag:
            if first_itr:
                ctx.wait_flag(HardEvent.FIX_M, 0)
                ctx.wait_flag(HardEvent.FIX_M, 1)
        else:
            unit_flag = 0b11
        spec.tile_mmad(self.l0c[loc_pp * m_round * KV_SPLIT_SIZE], self.l0a[0], self.l0b[p], m_round, n_actual, k_actual,
                       init_mmad, unit_flag)
        if end_q_itr:
            ctx.set_flag(HardEvent.M_MTE1, 0)
            ctx.set_flag(HardEvent.M_MTE1, 1)
        ctx.set_flag(HardEvent.M_MTE1, p + 2)
        # The fixpipe reads layout_c's columns from L0C with the panel stride of an (m_actual x 256) zN tile.
        layout_l0c = zN.make_layout_in_l0c(m_actual, max(2 * KV_SPLIT_SIZE, layout_c.cols))
        if end_itr:
            if not spec.policy.enable_unit_flag:
                ctx.set_flag(HardEvent.M_FIX, p)
                ctx.wait_flag(HardEvent.M_FIX, p)
                copy.copy_l0c_to_gm(g_c, self.l0c, layout_c, layout_l0c)
                ctx.set_flag(HardEvent.FIX_M, 0)
                ctx.set_flag(HardEvent.FIX_M, 1)
            else:
                copy.copy_l0c_to_gm(g_c, self.l0c, layout_c, layout_l0c, unit_flag)


__all__ = ["BlockMmadFAIQK", "FAIQKInstance", "load_q"]
