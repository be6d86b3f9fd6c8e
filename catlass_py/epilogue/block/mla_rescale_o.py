"""BlockEpilogue for ``EpilogueAtlasA2MLARescaleO`` (CATLASS ``epilogue/block/block_epilogue_mla_rescale_o.hpp``): the
running output of multi-head latent attention, updated per KV block.

Each vector core takes its heads' rows (as the softmax) in cycles of ``ROW_WISE_CYCLE_TILE = 8`` rows. With
more than one cycle (``needRowLoop``) the running output lives in the GM update workspace between KV blocks,
double-buffered in UB by ``oPingPangFlag``; with one it stays in UB. Per cycle, fp32 on PIPE_V:

======================  =========================================================================  ========================
step                    instructions                                                               events
======================  =========================================================================  ========================
load O_tmp (MTE2)       ``DataCopy`` into LO (not the first block)                                  wait V_MTE2[o]; MTE2_V[0]
first cycle             ``Exp`` of dm, ``gl = gl * dm + ll`` (first block: ``gl = ll``)            wait MTE3_MTE2[o+4]
``go = go*dm + lo``     ``Brcb`` of dm, (row loop: the running O GM -> UB), ``Mul`` per 64         MTE2_V[0] (set, wait)
                        columns, ``Add`` (first block: GO = O_tmp)
-                       -                                                                          set V_MTE2[o]
last block              ``Brcb`` of gl, ``Div`` per 64 columns; without flash decoding ``Cast``    V_MTE3[0] (set, wait)
                        and ``DataCopyPad`` rows to O; with it ``Ln`` (lse = ln gl + gm),          V_MTE3[2], MTE3_V[4],
                        ``DataCopyPad`` of lse and the fp32 partial O to the flash-decoding        MTE3_MTE2[1] (set, wait);
                        workspaces                                                                 once per task buffer:
                                                                                                   set MTE3_V[task+2]
not last, row loop      store the running O (MTE3)                                                 V_MTE3[5] (set, wait)
-                       -                                                                          set MTE3_MTE2[o+4]
======================  =========================================================================  ========================

The GM update workspace ``g_update`` is this vector core's own: the kernel passes each vector core its half of
the AI core's region, and a cycle's rows sit at their offset within the vector core's rows. (CATLASS passes the
whole region to both and offsets by the rows' place in the task's row order; two consecutive tasks with other
head splits then give a vector core rows the other one may still be reading from the previous task, a race
between the two vector cores.)

UB map (bytes): LO 64 Ki, DM/LL/GL/HM/GM at 96 Ki + (6, 9, 15, 1, 13) * 512 (shared with the softmax, which
writes dm, ll and gm), GO 128 Ki, TV 160 Ki.
"""

from __future__ import annotations

from catlass_py.arch.memory import Resource
from catlass_py.arch.pipes import HardEvent, Pipe
from catlass_py.epilogue.block._attention_common import FLOAT_BLOCK_SIZE, FLOAT_VECTOR_SIZE, reset_vector_mask, set_mask
from catlass_py.epilogue.block.mla_softmax import UB_UINT8_BLOCK_SIZE_MLA, UB_UINT8_LINE_SIZE
from catlass_py.epilogue.dispatch_policy_attention import EpilogueAtlasA2MLARescaleO
from catlass_py.errors import ConfigError
from catlass_py.gemm.coord import GemmCoord, ceil_div
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.layout import RowMajor
from catlass_py.numerics import dtypes as dt
from catlass_py.numerics.rounding import RoundMode
from catlass_py.tile import ascendc_vector as vec
from catlass_py.tile.ascendc_copy import (
    DataCopyExtParams,
    data_copy_gm_to_ub,
    data_copy_pad_ub_to_gm,
    data_copy_ub_to_gm,
)
from catlass_py.tile.ascendc_vector import BinaryRepeatParams, BrcbRepeatParams, DataCopyParams, UnaryRepeatParams

ROW_WISE_CYCLE_TILE = 8
HALF_DM_UB_SIZE = 128
HALF_LL_UB_SIZE = 256
HALF_ELENUM_PER_BLK = 16
FLOAT_ELENUM_PER_VECCALC = 64

_ROW8 = BinaryRepeatParams(1, 1, 1, 8, 8, 8)


class BlockEpilogueMLARescaleO:
    """Assembled CATLASS ``BlockEpilogue<EpilogueAtlasA2MLARescaleO, OutputType (O), UpdateType, InputType
    (O_tmp)>``; calling it with a vector core's resource and ``kvSplitCoreNum`` builds the per-core object."""

    def __init__(self, policy: EpilogueAtlasA2MLARescaleO, output_type: GemmType, update_type: GemmType,
                 input_type: GemmType):
        what = "BlockEpilogue<EpilogueAtlasA2MLARescaleO>"
        if not isinstance(policy, EpilogueAtlasA2MLARescaleO):
            raise ConfigError(f"{what}: policy must be EpilogueAtlasA2MLARescaleO, got {policy!r}")
        for name, t in (("OutputType", output_type), ("UpdateType", update_type), ("InputType", input_type)):
            if not isinstance(t, GemmType) or t.layout is not RowMajor:
                raise ConfigError(f"{what}: {name} must be a RowMajor GemmType, got {t!r}")
        if output_type.element not in (dt.FLOAT16, dt.BFLOAT16):
            raise ConfigError(f"{what}: O must be half or bfloat16, got {output_type.element}")
        if update_type.element != dt.FLOAT32 or input_type.element != dt.FLOAT32:
            raise ConfigError(f"{what}: the update and O_tmp types must be float, got {update_type.element}, "
                              f"{input_type.element}")
        self.policy = policy
        self.arch = policy.arch
        self.output_type, self.update_type, self.input_type = output_type, update_type, input_type

    @property
    def element_output(self):
        return self.output_type.element

    def __call__(self, resource: Resource, kv_split_core_num: int) -> "MLARescaleOInstance":
        return MLARescaleOInstance(self, resource, kv_split_core_num)


class MLARescaleOInstance:
    """One vector core's :class:`BlockEpilogueMLARescaleO`."""

    def __init__(self, spec: BlockEpilogueMLARescaleO, resource: Resource, kv_split_core_num: int):
        self.spec = spec
        self.ctx = resource.ctx
        self.kv_split_core_num = kv_split_core_num
        self.o_pp = 0
        ub = resource.ub_buf
        f32 = dt.FLOAT32
        base = 6 * UB_UINT8_BLOCK_SIZE_MLA
        self.lo = ub.get_buffer_by_byte(f32, 4 * UB_UINT8_BLOCK_SIZE_MLA)
        self.dm = ub.get_buffer_by_byte(f32, base + 6 * UB_UINT8_LINE_SIZE)
        self.ll = ub.get_buffer_by_byte(f32, base + 9 * UB_UINT8_LINE_SIZE)
        self.gl = ub.get_buffer_by_byte(f32, base + 15 * UB_UINT8_LINE_SIZE)
        self.tv = ub.get_buffer_by_byte(f32, 10 * UB_UINT8_BLOCK_SIZE_MLA)
        self.go32 = ub.get_buffer_by_byte(f32, 8 * UB_UINT8_BLOCK_SIZE_MLA)
        self.go16 = ub.get_buffer_by_byte(spec.element_output, 8 * UB_UINT8_BLOCK_SIZE_MLA)
        self.hm = ub.get_buffer_by_byte(f32, base + UB_UINT8_LINE_SIZE)
        self.gm = [ub.get_buffer_by_byte(f32, base + 13 * UB_UINT8_LINE_SIZE),
                   ub.get_buffer_by_byte(f32, base + 14 * UB_UINT8_LINE_SIZE)]

    def _per_row(self, op, o_off: int, rows: int, embed: int, embed_round: int) -> None:
        ctx = self.ctx
        params = BinaryRepeatParams(1, 1, 0, embed_round // FLOAT_BLOCK_SIZE, embed_round // FLOAT_BLOCK_SIZE, 1)
        reset_vector_mask(ctx)
        for i in range(embed // FLOAT_VECTOR_SIZE):
            t = self.go32[o_off + i * FLOAT_VECTOR_SIZE]
            op(t, t, self.tv, rows, params)
        if embed % FLOAT_VECTOR_SIZE > 0:
            set_mask(ctx, embed % FLOAT_VECTOR_SIZE)
            t = self.go32[o_off + embed // FLOAT_VECTOR_SIZE * FLOAT_VECTOR_SIZE]
            op(t, t, self.tv, rows, params)
            reset_vector_mask(ctx)
        ctx.pipe_barrier(Pipe.V)

    def _scatter_rows(self, dst, src, src_off: int, rows: int, elems_bytes: int, tokens: int, pro_idx: int, pro_num: int,
                      epi_num: int, heads: int, gm_row_stride: int, head_step: int, ub_head_step: int, ub_row: int,
                      unit: int) -> None:
        """The prologue / whole heads / epilogue ``DataCopyPad`` pattern the C++ uses to write rows ``h * tokens +
        t`` back to ``[token, head]`` order in GM (``unit`` elements per GM row entry)."""
        gap = (gm_row_stride - unit) * dst.dtype.nbytes(1)
        g_off, u_off = 0, src_off
        if pro_num != 0:
            data_copy_pad_ub_to_gm(dst[g_off + pro_idx * gm_row_stride], src[u_off],
                                   DataCopyExtParams(pro_num, elems_bytes, 0, gap, 0))
            g_off += head_step
            u_off += pro_num * ub_row
        for _ in range(heads):
            data_copy_pad_ub_to_gm(dst[g_off], src[u_off], DataCopyExtParams(tokens, elems_bytes, 0, gap, 0))
            g_off += head_step
            u_off += tokens * ub_row
        if epi_num != 0:
            data_copy_pad_ub_to_gm(dst[g_off], src[u_off], DataCopyExtParams(epi_num, elems_bytes, 0, gap, 0))

    def sub_core_compute(self, g_input, g_update, g_output, g_o_core_tmp, g_l, layout_input, layout_output,
                         layout_update, n_idx: int, is_last: bool, need_row_loop: bool, row_loop_idx: int,
                         pro_idx: int, pro_num: int, epi_num: int, heads: int, rescale_pp: int, gl_flag: list,
                         task_pp: int) -> None:
        """``SubCoreCompute`` (module docstring table)."""
        ctx = self.ctx
        rows = layout_input.rows
        embed = layout_input.cols
        embed_round = layout_input.stride[0]
        stride_qo = layout_output.stride[0]
        tokens = layout_output.rows
        rows_a64 = ceil_div(rows, FLOAT_ELENUM_PER_VECCALC)
        rows_round = ceil_div(rows, HALF_ELENUM_PER_BLK) * HALF_ELENUM_PER_BLK
        dm_off = rescale_pp * HALF_DM_UB_SIZE + row_loop_idx * ROW_WISE_CYCLE_TILE
        ll_off = rescale_pp * HALF_LL_UB_SIZE + row_loop_idx * ROW_WISE_CYCLE_TILE
        o = self.o_pp
        o_off = o * ROW_WISE_CYCLE_TILE * embed_round
        q_heads = stride_qo // embed
        k = self.kv_split_core_num
        load = DataCopyParams(1, rows * embed_round // FLOAT_BLOCK_SIZE, 0, 0)
        ctx.wait_flag(HardEvent.V_MTE2, o)
        if n_idx - 1 != 0:
            data_copy_gm_to_ub(self.lo[o_off], g_input, load)
            ctx.set_flag(HardEvent.MTE2_V, 0)
            ctx.wait_flag(HardEvent.MTE2_V, 0)
        reset_vector_mask(ctx)
        ctx.wait_flag(HardEvent.MTE3_MTE2, o + 4)
        if n_idx - 1 != 0:
            if row_loop_idx == 0:
                vec.vexp(self.dm[dm_off], self.dm[dm_off], rows_a64, UnaryRepeatParams(1, 1, 8, 8))
                ctx.pipe_barrier(Pipe.V)
                vec.vmul(self.gl, self.dm[dm_off], self.gl, rows_a64, _ROW8)
                ctx.pipe_barrier(Pipe.V)
                vec.vadd(self.gl, self.gl, self.ll[ll_off], rows_a64, _ROW8)
                ctx.pipe_barrier(Pipe.V)
            reset_vector_mask(ctx)
            vec.brcb(self.tv, self.dm[dm_off], rows_round // FLOAT_BLOCK_SIZE, BrcbRepeatParams(1, 8))
            ctx.pipe_barrier(Pipe.V)
            if need_row_loop:
                data_copy_gm_to_ub(self.go32[o_off], g_update, load)
                ctx.set_flag(HardEvent.MTE2_V, 0)
                ctx.wait_flag(HardEvent.MTE2_V, 0)
            self._per_row(vec.vmul, o_off, rows, embed, embed_round)
            go = self.go32[o_off]
            vec.vadd(go, go, self.lo[o_off], ceil_div(rows * embed_round, FLOAT_VECTOR_SIZE), _ROW8)
            ctx.pipe_barrier(Pipe.V)
        else:
            if row_loop_idx == 0:
                vec.copy_ub_to_ub(self.gl, self.ll[ll_off], DataCopyParams(1, 64 // FLOAT_BLOCK_SIZE, 0, 0))
                ctx.pipe_barrier(Pipe.V)
            data_copy_gm_to_ub(self.go32[o_off], g_input, load)
            ctx.set_flag(HardEvent.MTE2_V, 0)
            ctx.wait_flag(HardEvent.MTE2_V, 0)
        ctx.set_flag(HardEvent.V_MTE2, o)
        if is_last:
            vec.brcb(self.tv, self.gl[row_loop_idx * ROW_WISE_CYCLE_TILE], rows_round // FLOAT_BLOCK_SIZE,
                     BrcbRepeatParams(1, 8))
            ctx.pipe_barrier(Pipe.V)
            self._per_row(vec.vdiv, o_off, rows, embed, embed_round)
            if k != 1:
                vec.vln(self.tv, self.tv, rows, UnaryRepeatParams(1, 1, 8, 8))
                ctx.pipe_barrier(Pipe.V)
                vec.brcb(self.hm, self.gm[task_pp][row_loop_idx * ROW_WISE_CYCLE_TILE], rows_round // FLOAT_BLOCK_SIZE,
                         BrcbRepeatParams(1, 8))
                ctx.pipe_barrier(Pipe.V)
                vec.vadd(self.tv, self.tv, self.hm, rows, _ROW8)
                ctx.pipe_barrier(Pipe.V)
                ctx.set_flag(HardEvent.V_MTE3, 2)
                ctx.wait_flag(HardEvent.V_MTE3, 2)
                if tokens == 1:
                    data_copy_pad_ub_to_gm(g_l, self.tv, DataCopyExtParams(rows, 4, 0, (k - 1) * 4, 0))
                else:
                    self._scatter_rows(g_l, self.tv, 0, rows, 4, tokens, pro_idx, pro_num, epi_num, heads,
                                       k * q_heads, k, 0, FLOAT_BLOCK_SIZE, 1)
                if gl_flag[task_pp] == 0:
                    ctx.set_flag(HardEvent.MTE3_V, task_pp + 2)
                    gl_flag[task_pp] = 1
                src_gap = 1 if 0 < embed % 16 <= 8 else 0
                if tokens == 1:
                    data_copy_pad_ub_to_gm(g_o_core_tmp, self.go32[o_off],
                                           DataCopyExtParams(rows, embed * 4, src_gap, (k - 1) * embed * 4, 0))
                else:
                    self._scatter_rows(g_o_core_tmp, self.go32, o_off, rows, embed * 4, tokens, pro_idx, pro_num,
                                       epi_num, heads, k * stride_qo, embed * k, 0, embed, embed)
                ctx.set_flag(HardEvent.MTE3_V, 4)
                ctx.wait_flag(HardEvent.MTE3_V, 4)
                ctx.set_flag(HardEvent.MTE3_MTE2, 1)
                ctx.wait_flag(HardEvent.MTE3_MTE2, 1)
            else:
                mode = RoundMode.RINT if self.spec.element_output == dt.BFLOAT16 else RoundMode.NONE
                vec.vcast(self.go16[o_off * 2], self.go32[o_off], mode, ceil_div(rows * embed_round, FLOAT_VECTOR_SIZE),
                          UnaryRepeatParams(1, 1, 4, 8))
                ctx.set_flag(HardEvent.V_MTE3, 0)
                ctx.wait_flag(HardEvent.V_MTE3, 0)
                esize = self.spec.element_output.nbytes(1)
                if tokens == 1:
                    data_copy_pad_ub_to_gm(g_output, self.go16[o_off * 2], DataCopyExtParams(rows, embed * esize, 0, 0, 0))
                else:
                    self._scatter_rows(g_output, self.go16, o_off * 2, rows, embed * esize, tokens, pro_idx, pro_num,
                                       epi_num, heads, stride_qo, embed, 0, embed, embed)
        elif need_row_loop:
            ctx.set_flag(HardEvent.V_MTE3, 5)
            ctx.wait_flag(HardEvent.V_MTE3, 5)
            data_copy_ub_to_gm(g_update, self.go32[o_off], load)
        ctx.set_flag(HardEvent.MTE3_MTE2, o + 4)
        if need_row_loop:
            self.o_pp = 1 - self.o_pp

    def __call__(self, g_input, g_update, g_output, g_o_core_tmp, g_l, layout_input, layout_output, layout_update,
                 actual_block_shape, n_idx: int, is_last: bool, cur_head_num: int, rescale_pp: int, gl_flag: list,
                 task_pp: int) -> None:
        """This core's rows of one KV block's O_tmp into the running output (module docstring)."""
        ctx = self.ctx
        tokens = layout_output.rows
        embed = layout_input.cols
        row_actual, col_actual, _ = GemmCoord(*actual_block_shape)
        sub, nsub = ctx.sub_block_idx, ctx.sub_block_num
        split = cur_head_num // nsub
        heads_this = split if sub == 0 else cur_head_num - split
        rows_this = heads_this * tokens
        row_off_sub = sub * split * tokens
        out_off_sub = sub * split * embed
        if rows_this <= 0:
            return
        loops = ceil_div(rows_this, ROW_WISE_CYCLE_TILE)
        need_row_loop = loops > 1
        epi_num = 0
        for r in range(loops):
            row_off_loop = r * ROW_WISE_CYCLE_TILE
            row_off = row_off_sub + row_off_loop
            rows = rows_this - r * ROW_WISE_CYCLE_TILE if r == loops - 1 else ROW_WISE_CYCLE_TILE
            g_in = g_input[layout_input.offset(row_off, 0)]
            g_out = g_output[r * ROW_WISE_CYCLE_TILE // tokens * embed + out_off_sub]
            g_upd = g_update[layout_update.offset(row_off_loop, 0)]  # this vector core's own update rows
            pro_idx = epi_num
            pro_num = (tokens - epi_num) % tokens
            heads = (rows - pro_num) // tokens
            epi_num = rows - pro_num - heads * tokens
            head_idx = row_off_loop // tokens
            self.sub_core_compute(g_in, g_upd, g_out, g_o_core_tmp[head_idx * self.kv_split_core_num * embed],
                                  g_l[head_idx * self.kv_split_core_num], layout_input.get_tile_layout(rows, col_actual),
                                  layout_output, layout_update.get_tile_layout(rows, col_actual), n_idx, is_last,
                                  need_row_loop, r, pro_idx, pro_num, epi_num, heads, rescale_pp, gl_flag, task_pp)


__all__ = ["BlockEpilogueMLARescaleO", "MLARescaleOInstance", "ROW_WISE_CYCLE_TILE"]
