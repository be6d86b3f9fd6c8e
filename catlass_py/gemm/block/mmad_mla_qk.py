"""BlockMmad for ``MmadAtlasA2MLAQK`` (CATLASS ``gemm/block/block_mmad_mla_qk.hpp``): S = [Q, Q_rope] [K, K_rope]^T
of one paged KV block (``kSeqTile <= 128`` tokens) for multi-head latent attention (example 19).

Buffers (from ``l1_buf_addr_start``): [Q | Q_rope] (``L1.M x L1.K``, zN, the rope columns after the 512 nope
columns) in L1, then two [K | K_rope] stages (nZ); L0A, L0B and L0C each two stages. Per call:

================  ============================================================  ===========================================
step              what                                                          events
================  ============================================================  ===========================================
first KV block    Q and Q_rope GM -> L1 (``ndNum`` copies: token ``t`` of head     MTE2_MTE1[0] (set, wait)
(``nIdx == 0``)   ``h`` at row ``h * tokens + t``)
every block       K GM -> L1 stage ``p``, K_rope after it                        wait MTE1_MTE2[p], [p+2]; set MTE2_MTE1[p],
                                                                                [p+2]
five K pieces     (128, 128, 128, 128, 64 columns): Q piece -> L0A[e % 2], K     wait M_MTE1[e%2], [e%2+2]; MTE1_M[e%2],
                  piece -> L0B[e % 2], Mmad into L0C[p] (first piece starts it)  [e%2+2]; first: wait MTE2_MTE1[p], FIX_M[p];
                                                                                last: wait MTE2_MTE1[p+2], set MTE1_MTE2[p+2];
                                                                                after: set M_MTE1[e%2], [e%2+2]
end               fixpipe S (``rowNumRound x kSeqTileRound``) to the workspace   M_FIX[p] (set, wait); set FIX_M[p]
================  ============================================================  ===========================================

``p = pingpongIdx % 2``. The K stage stays in L1 for the PV block of the same KV block, which reads its first
512 columns as V and then frees it (MTE1_MTE2[p]).
"""

from __future__ import annotations

from catlass_py.gemm.block.attention_calls import MLA_QK
from catlass_py.arch.pipes import HardEvent
from catlass_py.errors import ConfigError
from catlass_py.gemm.block.block_mmad_spec import BlockMmadSpec
from catlass_py.gemm.block._fai_common import BLOCK_SIZE, r16
from catlass_py.gemm.coord import GemmCoord, MatrixCoord, round_up
from catlass_py.layout import ColumnMajor, RowMajor, zN
from catlass_py.numerics import dtypes as dt
from catlass_py.tile.ascendc_copy import Nd2NzParams, data_copy_nd2nz
from catlass_py.tile.copy_gm_to_l1 import STRIDE_LIMIT

EMBED_SPLIT_SIZE = 128
EMBED_SPLIT_LOOP = 5


class MLABlockMmadSpec(BlockMmadSpec):
    """Assembly checks of the MLA blocks: fp16 or bf16 operands, fp32 RowMajor C, L1 tiles of ``(128, 128, 576)``
    (one KV block of 128 tokens; 512 + 64 head dimensions), L1 holding [Q | Q_rope], two K stages and P
    (``L1A_SIZE + 2 * L1B_SIZE + L1.M * L1.N * sizeof(ElementA) <= L1_SIZE``)."""

    A_LAYOUT = RowMajor
    B_LAYOUT = RowMajor

    def __init__(self, policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type, bias_type=None, tile_copy=None,
                 tile_mmad=None):
        super().__init__(policy, l1_tile_shape, l0_tile_shape, a_type, b_type, c_type, bias_type, tile_copy, tile_mmad)
        what = self.describe_short(policy)
        if bias_type is not None:
            raise ConfigError(f"{what}: the attention blocks take no bias (BiasType = void)")
        if self.element_a != self.element_b or self.element_a not in (dt.FLOAT16, dt.BFLOAT16):
            raise ConfigError(f"{what}: ElementA and ElementB must both be half or both bfloat16, got "
                              f"{self.element_a} and {self.element_b}")
        if self.element_c != dt.FLOAT32:
            raise ConfigError(f"{what}: ElementC must be float, got {self.element_c}")
        if a_type.layout is not self.A_LAYOUT or b_type.layout is not self.B_LAYOUT:
            raise ConfigError(f"{what}: layouts must be A {self.A_LAYOUT.__name__}, B {self.B_LAYOUT.__name__}; got "
                              f"{a_type.layout.__name__}, {b_type.layout.__name__}")
        if tuple(self.l1_tile_shape) != (128, 128, 576):
            raise ConfigError(f"{what}: L1TileShape must be (128, 128, 576) (L1TileShape::K is the 512 + 64 head "
                              f"dimensions), got {tuple(self.l1_tile_shape)}")
        if tuple(self.l0_tile_shape) != tuple(self.l1_tile_shape):
            raise ConfigError(f"{what}: L0TileShape must equal L1TileShape (the MLA blocks cut their own "
                              f"128-wide L0 pieces from the L1 tile), got L1 {tuple(self.l1_tile_shape)}, "
                              f"L0 {tuple(self.l0_tile_shape)}")
        arch = self.arch
        stages = policy.STAGES
        self.l0a_pingpong_size = arch.l0a_size // stages
        self.l0b_pingpong_size = arch.l0b_size // stages
        self.l0c_pingpong_size = arch.l0c_size // stages
        need = self.l1a_tile_size + 2 * self.l1b_tile_size + self.element_a.nbytes(self.l1_tile_shape.m * self.l1_tile_shape.n)
        self._budget(what, "L1 ([Q | Q_rope], two K stages, P)", need, arch.l1_size,
                     "L1A_SIZE + 2 * L1B_SIZE + L1.M * L1.N * sizeof(ElementA) <= L1_SIZE")
        self._budget(what, "L0A piece", self.element_a.nbytes(self.l1_tile_shape.m * EMBED_SPLIT_SIZE),
                     self.l0a_pingpong_size, "L1TileShape::M * 128 * sizeof(ElementA) <= L0A_SIZE / STAGES")
        self._budget(what, "L0C stage", 4 * self.l1_tile_shape.m * self.l1_tile_shape.n, self.l0c_pingpong_size,
                     "L1TileShape::M * L1TileShape::N * sizeof(float) <= L0C_SIZE / STAGES")


def load_rows(block, l1_dst, g_src, layout_src, row_num: int, single_heads: int, q_heads: int) -> None:
    """The ``ndNum`` overload of ``CopyGmToL1`` as the MLA blocks call it: ``tokens = row_num / heads`` matrices
    of ``heads`` rows, token ``t`` of head ``h`` at L1 row ``h * tokens + t``."""
    ea = block.spec.element_a
    cols = layout_src.cols
    tokens = row_num // single_heads
    rows_round = round_up(row_num, BLOCK_SIZE)
    stride = q_heads * cols
    params = Nd2NzParams(tokens, single_heads, cols, stride, layout_src.stride[0], rows_round, tokens, BLOCK_SIZE)
    if stride < STRIDE_LIMIT:
        data_copy_nd2nz(l1_dst, g_src, params)
    else:
        one = Nd2NzParams(1, single_heads, cols, 0, layout_src.stride[0], rows_round, tokens, 0)
        for i in range(tokens):
            data_copy_nd2nz(l1_dst[i * ea.c0], g_src[i * stride], one)


class BlockMmadMLAQK(MLABlockMmadSpec):
    """Assembled CATLASS ``BlockMmad<MmadAtlasA2MLAQK, L1TileShape, L0TileShape, QType (RowMajor), KType
    (ColumnMajor), SType (float RowMajor)>``."""

    CAPABILITIES = MLA_QK

    name = "BlockMmadMLAQK"
    B_LAYOUT = ColumnMajor

    def __call__(self, resource, l1_buf_addr_start: int = 0) -> "MLAQKInstance":
        return MLAQKInstance(self, resource, l1_buf_addr_start)


class MLAQKInstance:
    """One cube core's :class:`BlockMmadMLAQK`."""

    def __init__(self, spec: BlockMmadMLAQK, resource, l1_buf_addr_start: int = 0):
        self.spec = spec
        self.ctx = resource.ctx
        ea, eb, acc = spec.element_a, spec.element_b, spec.element_accumulator
        self.l1a = resource.l1_buf.get_buffer_by_byte(ea, l1_buf_addr_start)
        self.l1b = [resource.l1_buf.get_buffer_by_byte(eb, l1_buf_addr_start + spec.l1a_tile_size + spec.l1b_tile_size * i)
                    for i in range(2)]
        self.l0a = [resource.l0a_buf.get_buffer_by_byte(ea, spec.l0a_pingpong_size * i) for i in range(2)]
        self.l0b = [resource.l0b_buf.get_buffer_by_byte(eb, spec.l0b_pingpong_size * i) for i in range(2)]
        self.l0c = [resource.l0c_buf.get_buffer_by_byte(acc, spec.l0c_pingpong_size * i) for i in range(2)]

    def __call__(self, g_a, g_a_rope, g_b, g_b_rope, g_c, layout_a, layout_a_rope, layout_b, layout_b_rope, layout_c,
                 actual_shape, q_shape_single_nd, q_heads: int, n_idx: int, pingpong_idx: int) -> None:
        """S = [Q, Q_rope] [K, K_rope]^T of one KV block (module docstring)."""
        spec, ctx = self.spec, self.ctx
        copy = spec.tile_copy
        ea, eb = spec.element_a, spec.element_b
        row_num, k_seq_tile, embed_cat = GemmCoord(*actual_shape)
        embed, embed_rope = layout_b.rows, layout_b_rope.rows
        cur_heads = MatrixCoord(*q_shape_single_nd).row
        k_round = round_up(k_seq_tile, spec.l1_b_align.n_aligned)
        row_round = round_up(row_num, spec.l1_a_align.m_aligned)
        p = pingpong_idx % 2
        if n_idx == 0:
            load_rows(self, self.l1a, g_a, layout_a.get_tile_layout(cur_heads, embed), row_num, cur_heads, q_heads)
            load_rows(self, self.l1a[row_round * embed], g_a_rope, layout_a_rope.get_tile_layout(cur_heads, embed_rope),
                      row_num, cur_heads, q_heads)
            ctx.set_flag(HardEvent.MTE2_MTE1, 0)
            ctx.wait_flag(HardEvent.MTE2_MTE1, 0)
        ctx.wait_flag(HardEvent.MTE1_MTE2, p)
        copy.copy_gm_to_l1_b(self.l1b[p], g_b, spec.layout_b_in_l1.make_layout(eb, r16(embed), r16(k_seq_tile)), layout_b)
        ctx.set_flag(HardEvent.MTE2_MTE1, p)
        ctx.wait_flag(HardEvent.MTE1_MTE2, p + 2)
        copy.copy_gm_to_l1_b(self.l1b[p][k_round * embed],
                             g_b_rope, spec.layout_b_in_l1.make_layout(eb, r16(embed_rope), r16(k_seq_tile)), layout_b_rope)
        ctx.set_flag(HardEvent.MTE2_MTE1, p + 2)
        layout_a_l1 = spec.layout_a_in_l1.make_layout(ea, r16(row_num), r16(embed_cat))
        layout_b_l1 = spec.layout_b_in_l1.make_layout(eb, r16(embed_cat), r16(k_seq_tile))
        split = EMBED_SPLIT_SIZE
        for e in range(EMBED_SPLIT_LOOP):
            q = e % 2
            if e == EMBED_SPLIT_LOOP - 1:
                split = embed_rope
            ctx.wait_flag(HardEvent.M_MTE1, q)
            copy.copy_l1_to_l0a(self.l0a[q], self.l1a[e * row_round * EMBED_SPLIT_SIZE],
                                spec.layout_a_in_l0.make_layout(ea, row_num, split), layout_a_l1)
            ctx.set_flag(HardEvent.MTE1_M, q)
            if e == 0:
                ctx.wait_flag(HardEvent.MTE2_MTE1, p)
            elif e == EMBED_SPLIT_LOOP - 1:
                ctx.wait_flag(HardEvent.MTE2_MTE1, p + 2)
            ctx.wait_flag(HardEvent.M_MTE1, q + 2)
            copy.copy_l1_to_l0b(self.l0b[q], self.l1b[p][e * k_round * EMBED_SPLIT_SIZE],
                                spec.layout_b_in_l0.make_layout(eb, split, k_seq_tile), layout_b_l1)
            if e == EMBED_SPLIT_LOOP - 1:
                ctx.set_flag(HardEvent.MTE1_MTE2, p + 2)
            ctx.set_flag(HardEvent.MTE1_M, q + 2)
            ctx.wait_flag(HardEvent.MTE1_M, q)
            ctx.wait_flag(HardEvent.MTE1_M, q + 2)
            if e == 0:
                ctx.wait_flag(HardEvent.FIX_M, p)
            spec.tile_mmad(self.l0c[p], self.l0a[q], self.l0b[q], row_round, k_seq_tile, split, e == 0)
            ctx.set_flag(HardEvent.M_MTE1, q)
            ctx.set_flag(HardEvent.M_MTE1, q + 2)
        ctx.set_flag(HardEvent.M_FIX, p)
        ctx.wait_flag(HardEvent.M_FIX, p)
        layout_l0c = zN.make_layout_in_l0c(max(row_num, layout_c.rows), max(k_seq_tile, layout_c.cols))
        copy.copy_l0c_to_gm(g_c, self.l0c[p], layout_c, layout_l0c)
        ctx.set_flag(HardEvent.FIX_M, p)


__all__ = ["BlockMmadMLAQK", "MLABlockMmadSpec", "MLAQKInstance", "load_rows"]
