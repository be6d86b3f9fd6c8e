"""BlockMmad for ``MmadAtlasA2FAIPV`` (CATLASS ``gemm/block/block_mmad_fai_pv_normal.hpp``): O_tmp = P V of one
stack of up to four 128-row KV blocks, accumulated in L0C and stored once (fp32, ``rowNum x embed``).

Buffers (from ``l1_buf_addr_start``): the whole P stack (``rowNum x 512``, zN) in L1, two V stages after
``4 * L1A_SIZE``; L0A/L0B alternate, the accumulator is L0C stage 0. Per KV block (``p = nkBlockIdx % 2``):

=================  ==========================================  ===============================================
step               what                                        events
=================  ==========================================  ===============================================
first block only   V of this block GM -> L1 stage ``p``          wait MTE1_MTE2[p+2], set MTE2_MTE1[p+2]
every block        V L1 -> L0B[p]                              wait MTE2_MTE1[p+2], M_MTE1[p+2]; set MTE1_MTE2[p+2]
first of the call  wait for the softmax (``softmaxReady``),     CrossCoreWaitFlag; wait MTE1_MTE2[4] and [5];
                   P (512 columns) GM -> L1                    set/wait MTE2_MTE1[4]
not the last       prefetch the next V into ``1 - p``            wait MTE1_MTE2[3-p], set MTE2_MTE1[3-p]
every block        P columns of the block L1 -> L0A[p], Mmad    wait M_MTE1[p]; MTE1_M[p] (set, wait); first:
                                                               wait FIX_M[0], [1]; after: set M_MTE1[p], [p+2]
end of the stack   fixpipe O_tmp                               set MTE1_MTE2[4], [5]; set/wait M_FIX[0];
                                                               set FIX_M[0], [1]
=================  ==========================================  ===============================================
"""

from __future__ import annotations

from catlass_py.gemm.block.attention_calls import FAI_PV
from catlass_py.arch.pipes import HardEvent
from catlass_py.gemm.block._fai_common import (
    r16,
    KV_SPLIT_SIZE,
    UNIT_BLOCK_STACK_NUM,
    FAIBlockInstance,
    FAIBlockMmadSpec,
    fai_block_shape,
)
from catlass_py.gemm.coord import GemmCoord, ceil_div, round_up
from catlass_py.layout import RowMajor, zN

LOAB_BLOCK = 1


class BlockMmadFAIPV(FAIBlockMmadSpec):
    """Assembled CATLASS ``BlockMmad<MmadAtlasA2FAIPV<PAGED_CACHE_FLAG, ENABLE_UNIT_FLAG>, L1TileShape,
    L0TileShape, PType (RowMajor), VType (RowMajor), OTmpType (float RowMajor)>``."""

    CAPABILITIES = FAI_PV

    name = "BlockMmadFAIPV"

    def __call__(self, resource, l1_buf_addr_start: int = 0) -> "FAIPVInstance":
        return FAIPVInstance(self, resource, l1_buf_addr_start)

    @property
    def l1_bytes(self) -> int:
        """L1 bytes from ``l1_buf_addr_start``: the P stack (``4 * L1A_SIZE``) and two V stages."""
        return 4 * self.l1a_tile_size + 2 * self.l1b_tile_size


class FAIPVInstance(FAIBlockInstance):
    """One cube core's :class:`BlockMmadFAIPV`."""

    def __init__(self, spec: BlockMmadFAIPV, resource, l1_buf_addr_start: int = 0):
        self.spec = spec
        self.ctx = resource.ctx
        ea, eb = spec.element_a, spec.element_b
        self.l1a = resource.l1_buf.get_buffer_by_byte(ea, l1_buf_addr_start)
        self.l0a = [resource.l0a_buf.get_buffer_by_byte(ea, spec.l0a_pingpong_size * i) for i in range(2)]
        self.l0b = [resource.l0b_buf.get_buffer_by_byte(eb, spec.l0b_pingpong_size * i) for i in range(2)]
        self.l0c = [resource.l0c_buf.get_buffer_by_byte(spec.element_accumulator, spec.l0c_pingpong_size * i)
                    for i in range(2)]
        self.l1b = [resource.l1_buf.get_buffer_by_byte(eb, l1_buf_addr_start + spec.l1a_tile_size * 4
                                                       + spec.l1b_tile_size * i) for i in range(2)]

    def __call__(self, g_a, g_b, g_c, g_block_table, layout_a, layout_b, actual_ori_shape, n_idx: int, n_loop: int,
                 block_size: int, kv_seqlen: int, stride_kv: int, softmax_flag) -> None:
        """O_tmp = P V for KV blocks ``n_idx .. n_idx + 3`` (those below ``n_loop``)."""
        embed = GemmCoord(*actual_ori_shape).n
        k_loop = ceil_div(embed, self.spec.l1_tile_shape.k)
        row_num = layout_a.rows
        shape = GemmCoord(row_num, 0, 0)
        nk_block_loop = (n_loop + LOAB_BLOCK - 1) // LOAB_BLOCK * k_loop
        nk_next = (n_idx + LOAB_BLOCK - 1) // LOAB_BLOCK * k_loop + 1
        unit = k_loop * UNIT_BLOCK_STACK_NUM
        for k_idx in range(k_loop):
            bsi = 0
            while bsi < UNIT_BLOCK_STACK_NUM and n_idx + bsi < n_loop:
                now = n_idx + bsi
                k_next = (nk_next % unit) // (UNIT_BLOCK_STACK_NUM // LOAB_BLOCK)
                n_next = (nk_next % unit) % (UNIT_BLOCK_STACK_NUM // LOAB_BLOCK) + nk_next // unit * UNIT_BLOCK_STACK_NUM
                actual = fai_block_shape(shape, now, k_idx, n_loop, k_loop, kv_seqlen, embed, now == n_idx, 0, pv=True)
                actual_next = fai_block_shape(shape, n_next, k_next, n_loop, k_loop, kv_seqlen, embed, now == n_idx, 0,
                                              pv=True)
                b_offset = self.get_kv_offset(g_block_table, now, k_idx, n_loop, k_loop, stride_kv, block_size)
                b_next_offset = self.get_kv_offset(g_block_table, n_next, k_next, n_loop, k_loop, stride_kv, block_size)
                first_itr = bsi == 0
                end_itr = bsi + LOAB_BLOCK > UNIT_BLOCK_STACK_NUM - 1 or now + LOAB_BLOCK > n_loop - 1
                init_mmad = bsi == 0
                pv_cv_itr = first_itr and k_idx == 0
                layout_o = RowMajor(row_num, embed, embed)
                self.compute_pv(g_a, g_b, b_offset, g_c, b_next_offset, layout_a, layout_b, layout_o, actual, actual_next,
                                bsi, nk_next, nk_block_loop, first_itr, end_itr, init_mmad, pv_cv_itr, softmax_flag)
                nk_next += 1
                bsi += LOAB_BLOCK

    def compute_pv(self, g_a, g_b, b_offset, g_c, b_next_offset, layout_a, layout_b, layout_c, actual, actual_next,
                   now_idx: int, nk_idx: int, nk_loop: int, first_itr: bool, end_itr: bool, init_mmad: bool,
                   pv_cv_itr: bool, softmax_flag, preload_flag: bool = False) -> None:
        """CATLASS ``computePV`` (module docstring table)."""
        spec, ctx = self.spec, self.ctx
        copy = spec.tile_copy
        ea, eb = spec.element_a, spec.element_b
        m_actual, n_actual, k_actual = actual
        m_round = round_up(m_actual, spec.l1_a_align.m_aligned)
        layout_a_l1 = spec.layout_a_in_l1.make_layout(ea, r16(m_round), r16(512))
        layout_a_l0 = spec.layout_a_in_l0.make_layout(ea, m_round, k_actual)
        layout_b_l1 = spec.layout_b_in_l1.make_layout(eb, r16(k_actual), r16(n_actual))
        layout_b_l0 = spec.layout_b_in_l0.make_layout(eb, k_actual, n_actual)
        p = nk_idx % 2
        if nk_idx == 1 or preload_flag:
            ctx.wait_flag(HardEvent.MTE1_MTE2, p + 2)
            copy.copy_gm_to_l1_b(self.l1b[p], g_b[b_offset], layout_b_l1, layout_b.get_tile_layout(k_actual, n_actual))
            ctx.set_flag(HardEvent.MTE2_MTE1, p + 2)
        ctx.wait_flag(HardEvent.MTE2_MTE1, p + 2)
        ctx.wait_flag(HardEvent.M_MTE1, p + 2)
        copy.copy_l1_to_l0b(self.l0b[p], self.l1b[p], layout_b_l0, layout_b_l1)
        ctx.set_flag(HardEvent.MTE1_MTE2, p + 2)
        if pv_cv_itr:
            ctx.cross_core_wait_flag(softmax_flag)
            ctx.wait_flag(HardEvent.MTE1_MTE2, 4)
            ctx.wait_flag(HardEvent.MTE1_MTE2, 5)
            copy.copy_gm_to_l1_a(self.l1a, g_a, layout_a_l1, layout_a.get_tile_layout(m_actual, 512))
            ctx.set_flag(HardEvent.MTE2_MTE1, 4)
            ctx.wait_flag(HardEvent.MTE2_MTE1, 4)
        if nk_idx != nk_loop:
            n_next, k_next = actual_next.n, actual_next.k
            ctx.wait_flag(HardEvent.MTE1_MTE2, 1 - p + 2)
            copy.copy_gm_to_l1_b(self.l1b[1 - p], g_b[b_next_offset], spec.layout_b_in_l1.make_layout(eb, r16(k_next), r16(n_next)),
                                 layout_b.get_tile_layout(k_next, n_next))
            ctx.set_flag(HardEvent.MTE2_MTE1, 1 - p + 2)
        ctx.wait_flag(HardEvent.M_MTE1, p)
        copy.copy_l1_to_l0a(self.l0a[p], self.l1a[m_round * KV_SPLIT_SIZE * now_idx], layout_a_l0, layout_a_l1)
        ctx.set_flag(HardEvent.MTE1_M, p)
        ctx.wait_flag(HardEvent.MTE1_M, p)
        unit_flag = 0
        if not spec.policy.enable_unit_flag:
            if first_itr:
                ctx.wait_flag(HardEvent.FIX_M, 0)
                ctx.wait_flag(HardEvent.FIX_M, 1)
        else:
            unit_flag = 0b11 if end_itr else 0b10
        spec.tile_mmad(self.l0c[0], self.l0a[p], self.l0b[p], m_round, n_actual, k_actual, init_mmad, unit_flag)
        ctx.set_flag(HardEvent.M_MTE1, p)
        ctx.set_flag(HardEvent.M_MTE1, p + 2)
        layout_l0c = zN.make_layout_in_l0c(m_actual, max(n_actual, layout_c.cols))
        if end_itr:
            ctx.set_flag(HardEvent.MTE1_MTE2, 4)
            ctx.set_flag(HardEvent.MTE1_MTE2, 5)
            if not spec.policy.enable_unit_flag:
                ctx.set_flag(HardEvent.M_FIX, 0)
                ctx.wait_flag(HardEvent.M_FIX, 0)
                copy.copy_l0c_to_gm(g_c, self.l0c[0], layout_c, layout_l0c)
                ctx.set_flag(HardEvent.FIX_M, 0)
                ctx.set_flag(HardEvent.FIX_M, 1)
            else:
                copy.copy_l0c_to_gm(g_c, self.l0c[0], layout_c, layout_l0c, 0b11)


__all__ = ["BlockMmadFAIPV", "FAIPVInstance", "LOAB_BLOCK"]
