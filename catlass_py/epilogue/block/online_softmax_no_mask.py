"""BlockEpilogue for ``EpilogueAtlasA2OnlineSoftmax`` (CATLASS
``epilogue/block/block_epilogue_online_softmax_no_mask.hpp``): the online softmax of one S stack (``rowNum x
stackSeqTile`` fp32 from the workspace) into P (fp16/bf16, same layout), updating the running row maximum
``gm``, row sum ``gl`` and the rescale factor ``dm = exp(gm_old - gm_new)`` of the stack.

The two vector cores split the rows: with ``qNBlockSize`` heads in the row block each takes a whole number of
heads (sub-block 0 ``floor(qN/2)``, sub-block 1 the rest), with one head they split its tokens in half. Each
core walks its rows in loops of ``rowNumTile = RoundDown(8192 / columnNumRound, 8)`` with S double-buffered
(one loop's load overlaps the previous loop's compute). Per loop, all fp32 on PIPE_V unless noted:

===============================  ===================================================================  ========
step                             instructions                                                         events
===============================  ===================================================================  ========
load S (MTE2)                    ``DataCopy`` rows of ``columnNumRound`` floats                        wait V_MTE2[p], set MTE2_V[p]
(mask) load mask (MTE2)          ``DataCopyPad`` of the diagonal tile of the 1024 x 1024 mask, the      wait V_MTE2[2], set MTE2_V[2]
                                 ``qSBlockSize`` token rows repeated per head
``s = s * scale``                ``Muls``                                                              wait MTE2_V[p]
(mask) ``s = s + mask * -3e38``  ``Cast`` fp16/bf16 -> fp32, ``Muls``, ``Add`` (the fp32 mask shares     wait MTE3_V[0], [1]; MTE2_V[2];
                                 P's UB bytes)                                                         set V_MTE2[2]
``lm = rowmax(s)``               ``BlockReduceMax`` x3 (512 columns), x3 with masks (256), or per 64
                                 columns plus ``Max`` (other widths)
``hm = max(lm, gm)``,            ``Max``, ``Sub``, ``Exp`` on one repeat of ``rowNum`` lanes (first
``dm = exp(gm - hm)``, ``gm=hm`` stack: ``hm = lm``), UB ``DataCopy``
``s = exp(s - hm)``              ``Brcb`` of hm, ``Sub`` per 64 columns (src1 block stride 0), ``Exp``
``p = cast(s)``                  ``Cast`` (bf16 RINT, fp16 NONE)                                      (no mask: wait MTE3_V[p]); set V_MTE3[p]
``ll = rowsum(s)``               as rowmax with ``BlockReduceSum`` / ``Add``                          set V_MTE2[p]
store P (MTE3)                   ``DataCopy`` rows of ``columnNumRound`` halves (row pitch 512 in GM)  wait V_MTE3[p]; set MTE3_V[p] (mask: [0], [1])
``gl = gl * dm + ll``            ``Mul``, ``Add`` (first stack: ``gl = ll``)
===============================  ===================================================================  ========

Every dependent pair of vector instructions is separated by ``PipeBarrier<PIPE_V>`` as in the C++. UB map
(bytes): S 0 (2 x 32 KiB), P 64 Ki (2 x 16 KiB, shared with the fp32 mask), TV 160 Ki, LM/HM/GM/LL/GL 160 Ki +
8..12 Ki (1 KiB each), DM 160 Ki + 13 Ki (3 x 128 floats), mask 176 Ki.
"""

from __future__ import annotations

from dataclasses import dataclass

from catlass_py.arch.memory import Resource
from catlass_py.arch.pipes import HardEvent, Pipe
from catlass_py.epilogue.block._attention_common import (
    BLOCK_SIZE,
    FLOAT_BLOCK_SIZE,
    FLOAT_VECTOR_SIZE,
    UB_UINT8_BLOCK_SIZE,
    UB_UINT8_VECTOR_SIZE,
    reset_vector_mask,
    set_block_reduce_mask,
    set_vec_mask,
)
from catlass_py.epilogue.dispatch_policy_attention import EpilogueAtlasA2OnlineSoftmax
from catlass_py.errors import ConfigError
from catlass_py.gemm.coord import GemmCoord, ceil_div, round_down, round_up
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.layout import RowMajor
from catlass_py.numerics import dtypes as dt
from catlass_py.numerics.rounding import RoundMode
from catlass_py.tile import ascendc_vector as vec
from catlass_py.tile.ascendc_copy import (
    DataCopyExtParams,
    data_copy_gm_to_ub,
    data_copy_pad_gm_to_ub,
    data_copy_ub_to_gm,
)
from catlass_py.tile.ascendc_vector import BinaryRepeatParams, BrcbRepeatParams, DataCopyParams, UnaryRepeatParams

MAX_UB_S_ELEM_NUM = 8192
REDUCE_UB_SIZE = 1024
ROW_OPS_SPEC_MASK_32 = 32
ROW_OPS_SPEC_MASK_4 = 4
MAX_ROW_NUM_SUB_CORE = 128
MASK_FACTOR = -3e38

_ROW1 = BinaryRepeatParams(1, 1, 1, 8, 8, 8)


@dataclass(frozen=True)
class _SubBlockRows:
    """Which rows of the row block this vector core takes (the C++ ``qNThisSubBlock`` ... arithmetic)."""

    q_n_this: int
    row_split: int
    row_actual: int
    row_offset: int


def sub_block_rows(row_num: int, q_s_block_size: int, q_n_block_size: int, sub: int, nsub: int) -> _SubBlockRows:
    """The split of a ``row_num = qS x qN`` row block between the two vector cores (softmax and rescale)."""
    q_n_split = q_n_block_size // nsub
    q_n_this = 0 if q_n_block_size == 1 else (q_n_block_size - q_n_split if sub == 1 else q_n_split)
    row_split = q_s_block_size // nsub if q_n_block_size == 1 else q_s_block_size * q_n_split
    row_actual = row_num - row_split if sub == 1 else row_split
    return _SubBlockRows(q_n_this, row_split, row_actual, sub * row_split)


class BlockEpilogueOnlineSoftmax:
    """Assembled CATLASS ``BlockEpilogue<EpilogueAtlasA2OnlineSoftmax, OutputType (P), InputType (S),
    MaskType>``; calling it with a vector core's resource and ``scaleValue`` builds the per-core object."""

    def __init__(self, policy: EpilogueAtlasA2OnlineSoftmax, output_type: GemmType, input_type: GemmType,
                 mask_type: GemmType):
        what = "BlockEpilogue<EpilogueAtlasA2OnlineSoftmax>"
        if not isinstance(policy, EpilogueAtlasA2OnlineSoftmax):
            raise ConfigError(f"{what}: policy must be EpilogueAtlasA2OnlineSoftmax, got {policy!r}")
        for name, t in (("OutputType", output_type), ("InputType", input_type), ("MaskType", mask_type)):
            if not isinstance(t, GemmType) or t.layout is not RowMajor:
                raise ConfigError(f"{what}: {name} must be a RowMajor GemmType, got {t!r}")
        if output_type.element not in (dt.FLOAT16, dt.BFLOAT16) or input_type.element != dt.FLOAT32:
            raise ConfigError(f"{what}: P must be half or bfloat16 and S float, got P={output_type.element}, "
                              f"S={input_type.element}")
        if mask_type.element not in (dt.FLOAT16, dt.BFLOAT16):
            raise ConfigError(f"{what}: the mask must be half or bfloat16 (its rows are copied as 2-byte elements), "
                              f"got {mask_type.element}")
        self.policy = policy
        self.arch = policy.arch
        self.output_type, self.input_type, self.mask_type = output_type, input_type, mask_type
        end = 11 * UB_UINT8_BLOCK_SIZE + MAX_UB_S_ELEM_NUM * 2
        if end > self.arch.ub_size:
            raise ConfigError(f"{what}: the UB map ends at byte {end} but {self.arch.name} has {self.arch.ub_size} "
                              f"(11 * 16384 + MAX_UB_S_ELEM_NUM * sizeof(ElementMask) <= UB_SIZE)")

    @property
    def element_output(self):
        return self.output_type.element

    def __call__(self, resource: Resource, scale_value: float) -> "OnlineSoftmaxInstance":
        return OnlineSoftmaxInstance(self, resource, scale_value)


class OnlineSoftmaxInstance:
    """One vector core's :class:`BlockEpilogueOnlineSoftmax` (the constructed C++ object)."""

    def __init__(self, spec: BlockEpilogueOnlineSoftmax, resource: Resource, scale_value: float):
        self.spec = spec
        self.ctx = resource.ctx
        self.scale_value = float(scale_value)
        ub = resource.ub_buf
        f32 = dt.FLOAT32
        base = 10 * UB_UINT8_BLOCK_SIZE
        self.ls = ub.get_buffer_by_byte(f32, 0)
        self.lp = ub.get_buffer_by_byte(spec.element_output, 4 * UB_UINT8_BLOCK_SIZE)
        self.mask = ub.get_buffer_by_byte(spec.mask_type.element, 11 * UB_UINT8_BLOCK_SIZE)
        self.mask32 = ub.get_buffer_by_byte(f32, 4 * UB_UINT8_BLOCK_SIZE)
        self.lm = ub.get_buffer_by_byte(f32, base + 8 * UB_UINT8_VECTOR_SIZE)
        self.hm = ub.get_buffer_by_byte(f32, base + 9 * UB_UINT8_VECTOR_SIZE)
        self.gm = ub.get_buffer_by_byte(f32, base + 10 * UB_UINT8_VECTOR_SIZE)
        self.dm = ub.get_buffer_by_byte(f32, base + 13 * UB_UINT8_VECTOR_SIZE)
        self.ll = ub.get_buffer_by_byte(f32, base + 11 * UB_UINT8_VECTOR_SIZE)
        self.tv = ub.get_buffer_by_byte(f32, base)
        self.gl = ub.get_buffer_by_byte(f32, base + 12 * UB_UINT8_VECTOR_SIZE)

    # -- row reductions ---------------------------------------------------------------------------------
    def _row_reduce_spec512(self, reduce, src, out, rows_round: int, elems_aligned: int) -> None:
        ctx, tv = self.ctx, self.tv
        reduce(tv, src, rows_round * elems_aligned // FLOAT_VECTOR_SIZE, 1, 1, 8)
        ctx.pipe_barrier(Pipe.V)
        reduce(tv[REDUCE_UB_SIZE], tv, rows_round * elems_aligned // FLOAT_BLOCK_SIZE // FLOAT_VECTOR_SIZE, 1, 1, 8)
        ctx.pipe_barrier(Pipe.V)
        reduce(out, tv[REDUCE_UB_SIZE], rows_round * elems_aligned // FLOAT_VECTOR_SIZE // FLOAT_VECTOR_SIZE, 1, 1, 8)
        ctx.pipe_barrier(Pipe.V)

    def _row_reduce_spec256(self, reduce, src, out, rows_round: int, elems_aligned: int) -> None:
        ctx, tv = self.ctx, self.tv
        reduce(tv, src, rows_round * elems_aligned // FLOAT_VECTOR_SIZE, 1, 1, 8)
        ctx.pipe_barrier(Pipe.V)
        set_vec_mask(ctx, ROW_OPS_SPEC_MASK_32)
        reduce(tv[REDUCE_UB_SIZE], tv, rows_round, 1, 1, 4)
        ctx.pipe_barrier(Pipe.V)
        set_block_reduce_mask(ctx, ROW_OPS_SPEC_MASK_4)
        reduce(out, tv[REDUCE_UB_SIZE], ceil_div(rows_round * FLOAT_BLOCK_SIZE, FLOAT_VECTOR_SIZE), 1, 1, 8)
        ctx.pipe_barrier(Pipe.V)
        reset_vector_mask(ctx)

    def _row_reduce_tail(self, reduce, combine, src, out, rows_round: int, elems: int, elems_aligned: int) -> None:
        ctx, tv = self.ctx, self.tv
        gather = ceil_div(rows_round * FLOAT_BLOCK_SIZE, FLOAT_VECTOR_SIZE)
        if elems >= FLOAT_VECTOR_SIZE:
            reduce(tv, src, rows_round, 1, 1, elems_aligned // FLOAT_BLOCK_SIZE)
            ctx.pipe_barrier(Pipe.V)
            reduce(out, tv, gather, 1, 1, 8)
            ctx.pipe_barrier(Pipe.V)
            for i in range(1, elems // FLOAT_VECTOR_SIZE):
                reduce(tv, src[i * FLOAT_VECTOR_SIZE], rows_round, 1, 1, elems_aligned // FLOAT_BLOCK_SIZE)
                ctx.pipe_barrier(Pipe.V)
                reduce(tv[REDUCE_UB_SIZE], tv, gather, 1, 1, 8)
                ctx.pipe_barrier(Pipe.V)
                set_vec_mask(ctx, rows_round)
                combine(out, out, tv[REDUCE_UB_SIZE], 1, _ROW1)
                ctx.pipe_barrier(Pipe.V)
                reset_vector_mask(ctx)
        if elems % FLOAT_VECTOR_SIZE > 0:
            set_vec_mask(ctx, elems % FLOAT_VECTOR_SIZE)
            reduce(tv, src[elems // FLOAT_VECTOR_SIZE * FLOAT_VECTOR_SIZE], rows_round, 1, 1,
                   elems_aligned // FLOAT_BLOCK_SIZE)
            ctx.pipe_barrier(Pipe.V)
            set_block_reduce_mask(ctx, ceil_div(elems % FLOAT_VECTOR_SIZE, FLOAT_BLOCK_SIZE))
            if elems < FLOAT_VECTOR_SIZE:
                reduce(out, tv, gather, 1, 1, 8)
                ctx.pipe_barrier(Pipe.V)
            else:
                reduce(tv[REDUCE_UB_SIZE], tv, gather, 1, 1, 8)
                ctx.pipe_barrier(Pipe.V)
                set_vec_mask(ctx, rows_round)
                combine(out, out, tv[REDUCE_UB_SIZE], 1, _ROW1)
                ctx.pipe_barrier(Pipe.V)
            reset_vector_mask(ctx)

    def _row_reduce(self, reduce, combine, src, out, rows_round: int, elems: int, elems_aligned: int) -> None:
        if elems == 512:
            self._row_reduce_spec512(reduce, src, out, rows_round, elems_aligned)
        elif elems == 256:
            self._row_reduce_spec256(reduce, src, out, rows_round, elems_aligned)
        else:
            self._row_reduce_tail(reduce, combine, src, out, rows_round, elems, elems_aligned)

    # -- the steps of the C++ class ------------------------------------------------------------------------
    def copy_s_gm_to_ub(self, g_input, s_ub_offset: int, rows: int, col_round: int, col_pad: int) -> None:
        """``CopySGmToUb``."""
        data_copy_gm_to_ub(self.ls[s_ub_offset], g_input,
                           DataCopyParams(rows, col_round // FLOAT_BLOCK_SIZE, (col_pad - col_round) // FLOAT_BLOCK_SIZE,
                                          0))

    def copy_mask_gm_to_ub(self, g_mask, col_num: int, col_round: int, mask_stride: int, q_s_block_size: int,
                           pro_token_idx: int, pro_token_num: int, integral_head_num: int, epi_token_num: int) -> None:
        """``CopyMaskGmToUb``: the diagonal mask tile, its token rows repeated for every head in the rows."""
        inner = 0
        gap = (mask_stride - col_num) * 2
        if pro_token_num != 0:
            data_copy_pad_gm_to_ub(self.mask[inner], g_mask[pro_token_idx * mask_stride],
                                   DataCopyExtParams(pro_token_num, col_num * 2, gap, 0, 0))
            inner += pro_token_num * col_round
        for _ in range(integral_head_num):
            data_copy_pad_gm_to_ub(self.mask[inner], g_mask, DataCopyExtParams(q_s_block_size, col_num * 2, gap, 0, 0))
            inner += q_s_block_size * col_round
        if epi_token_num != 0:
            data_copy_pad_gm_to_ub(self.mask[inner], g_mask, DataCopyExtParams(epi_token_num, col_num * 2, gap, 0, 0))

    def scale_s(self, s_ub_offset: int, rows: int, col_round: int) -> None:
        """``ScaleS``: ``ls = scaleValue * ls``."""
        ls = self.ls[s_ub_offset]
        vec.vmuls(ls, ls, self.scale_value, ceil_div(rows * col_round, FLOAT_VECTOR_SIZE), UnaryRepeatParams(1, 1, 8, 8))
        self.ctx.pipe_barrier(Pipe.V)

    def up_cast_mask(self, rows: int, col_round: int) -> None:
        """``UpCastMask``: the fp16/bf16 mask to fp32 (exact)."""
        vec.vcast(self.mask32, self.mask, RoundMode.NONE, ceil_div(rows * col_round, FLOAT_VECTOR_SIZE),
                  UnaryRepeatParams(1, 1, 8, 4))
        self.ctx.pipe_barrier(Pipe.V)

    def apply_mask(self, s_ub_offset: int, rows: int, col_round: int) -> None:
        """``ApplyMask``: ``ls = ls + mask * -3e38``."""
        repeat = ceil_div(rows * col_round, FLOAT_VECTOR_SIZE)
        vec.vmuls(self.mask32, self.mask32, MASK_FACTOR, repeat, UnaryRepeatParams(1, 1, 8, 8))
        self.ctx.pipe_barrier(Pipe.V)
        ls = self.ls[s_ub_offset]
        vec.vadd(ls, ls, self.mask32, repeat, BinaryRepeatParams(1, 1, 1, 8, 8, 8))
        self.ctx.pipe_barrier(Pipe.V)

    def calc_local_row_max(self, s_ub_offset: int, rows_round: int, col_num: int, col_round: int, row_offset: int) -> None:
        """``CalcLocalRowMax``: ``lm = rowmax(ls)``."""
        self._row_reduce(vec.block_reduce_max, vec.vmax, self.ls[s_ub_offset], self.lm[row_offset], rows_round,
                         col_num, col_round)

    def update_global_row_max(self, rows: int, rows_round: int, dm_offset: int, row_offset: int, first: bool) -> None:
        """``UpdateGlobalRowMax``: ``hm = max(lm, gm)``, ``dm = exp(gm - hm)``, ``gm = hm``."""
        ctx = self.ctx
        copy_rows = DataCopyParams(1, rows_round // FLOAT_BLOCK_SIZE, 0, 0)
        if first:
            vec.copy_ub_to_ub(self.hm[row_offset], self.lm[row_offset], copy_rows)
            ctx.pipe_barrier(Pipe.V)
        else:
            set_vec_mask(ctx, rows)
            vec.vmax(self.hm[row_offset], self.lm[row_offset], self.gm[row_offset], 1, _ROW1)
            ctx.pipe_barrier(Pipe.V)
            vec.vsub(self.dm[dm_offset], self.gm[row_offset], self.hm[row_offset], 1, _ROW1)
            ctx.pipe_barrier(Pipe.V)
            vec.vexp(self.dm[dm_offset], self.dm[dm_offset], 1, UnaryRepeatParams(1, 1, 8, 8))
        reset_vector_mask(ctx)
        ctx.pipe_barrier(Pipe.V)
        vec.copy_ub_to_ub(self.gm[row_offset], self.hm[row_offset], copy_rows)
        ctx.pipe_barrier(Pipe.V)

    def calc_exp(self, s_ub_offset: int, rows: int, rows_round: int, col_num: int, col_round: int,
                 row_offset: int) -> None:
        """``CalcExp``: ``ls = exp(ls - hm)`` (hm broadcast per row through ``Brcb``)."""
        ctx = self.ctx
        vec.brcb(self.tv, self.hm[row_offset], rows_round // FLOAT_BLOCK_SIZE, BrcbRepeatParams(1, 8))
        ctx.pipe_barrier(Pipe.V)
        ls = self.ls[s_ub_offset]
        params = BinaryRepeatParams(1, 1, 0, col_round // FLOAT_BLOCK_SIZE, col_round // FLOAT_BLOCK_SIZE, 1)
        for sub in range(col_num // FLOAT_VECTOR_SIZE):
            vec.vsub(ls[sub * FLOAT_VECTOR_SIZE], ls[sub * FLOAT_VECTOR_SIZE], self.tv, rows, params)
        if col_num % FLOAT_VECTOR_SIZE > 0:
            set_vec_mask(ctx, col_num % FLOAT_VECTOR_SIZE)
            start = col_num // FLOAT_VECTOR_SIZE * FLOAT_VECTOR_SIZE
            vec.vsub(ls[start], ls[start], self.tv, rows, params)
            reset_vector_mask(ctx)
        ctx.pipe_barrier(Pipe.V)
        vec.vexp(ls, ls, ceil_div(rows * col_round, FLOAT_VECTOR_SIZE), UnaryRepeatParams(1, 1, 8, 8))
        ctx.pipe_barrier(Pipe.V)

    def calc_local_row_sum(self, s_ub_offset: int, rows_round: int, col_num: int, col_round: int,
                           row_offset: int) -> None:
        """``CalcLocalRowSum``: ``ll = rowsum(ls)``."""
        self._row_reduce(vec.block_reduce_sum, vec.vadd, self.ls[s_ub_offset], self.ll[row_offset], rows_round,
                         col_num, col_round)

    def update_global_row_sum(self, rows: int, rows_round: int, dm_offset: int, row_offset: int, first: bool) -> None:
        """``UpdateGlobalRowSum``: ``gl = gl * dm + ll`` (first stack: ``gl = ll``)."""
        ctx = self.ctx
        if first:
            vec.copy_ub_to_ub(self.gl[row_offset], self.ll[row_offset],
                              DataCopyParams(1, rows_round // FLOAT_BLOCK_SIZE, 0, 0))
            ctx.pipe_barrier(Pipe.V)
        else:
            set_vec_mask(ctx, rows)
            vec.vmul(self.gl[row_offset], self.dm[dm_offset], self.gl[row_offset], 1, _ROW1)
            ctx.pipe_barrier(Pipe.V)
            vec.vadd(self.gl[row_offset], self.gl[row_offset], self.ll[row_offset], 1, _ROW1)
            ctx.pipe_barrier(Pipe.V)
            reset_vector_mask(ctx)

    def down_cast_p(self, s_ub_offset: int, rows: int, col_round: int) -> None:
        """``DownCastP``: ``lp = cast(ls)`` (bf16 ``CAST_RINT``, half ``CAST_NONE``)."""
        mode = RoundMode.RINT if self.spec.element_output == dt.BFLOAT16 else RoundMode.NONE
        vec.vcast(self.lp[s_ub_offset], self.ls[s_ub_offset], mode, ceil_div(rows * col_round, FLOAT_VECTOR_SIZE),
                  UnaryRepeatParams(1, 1, 4, 8))

    def copy_p_ub_to_gm(self, g_output, s_ub_offset: int, rows: int, col_round: int, col_pad: int) -> None:
        """``CopyPUbToGm``."""
        if col_round == col_pad:
            data_copy_ub_to_gm(g_output, self.lp[s_ub_offset], DataCopyParams(1, rows * col_round // BLOCK_SIZE, 0, 0))
        else:
            data_copy_ub_to_gm(g_output, self.lp[s_ub_offset],
                               DataCopyParams(rows, col_round // BLOCK_SIZE, 0, (col_pad - col_round) // BLOCK_SIZE))

    def sub_core_compute(self, masked: bool, g_output, layout_output, row_offset: int, first: bool, col_round: int,
                         pp: int, cur_stack_tile_mod: int) -> None:
        """``SubCoreCompute<maskCat>``: one loop's softmax after S (and the mask) is in UB."""
        ctx = self.ctx
        rows = layout_output.rows
        rows_round = round_up(rows, FLOAT_BLOCK_SIZE)
        col_num = layout_output.cols
        col_pad = layout_output.stride[0]
        s_off = pp * MAX_UB_S_ELEM_NUM
        dm_off = cur_stack_tile_mod * MAX_ROW_NUM_SUB_CORE + row_offset
        self.calc_local_row_max(s_off, rows_round, col_num, col_round, row_offset)
        self.update_global_row_max(rows, rows_round, dm_off, row_offset, first)
        self.calc_exp(s_off, rows, rows_round, col_num, col_round, row_offset)
        if not masked:
            ctx.wait_flag(HardEvent.MTE3_V, pp)
        self.down_cast_p(s_off, rows, col_round)
        ctx.set_flag(HardEvent.V_MTE3, pp)
        self.calc_local_row_sum(s_off, rows_round, col_num, col_round, row_offset)
        ctx.set_flag(HardEvent.V_MTE2, pp)
        ctx.wait_flag(HardEvent.V_MTE3, pp)
        self.copy_p_ub_to_gm(g_output, s_off, rows, col_round, col_pad)
        if not masked:
            ctx.set_flag(HardEvent.MTE3_V, pp)
        else:
            ctx.set_flag(HardEvent.MTE3_V, 0)
            ctx.set_flag(HardEvent.MTE3_V, 1)
        self.update_global_row_sum(rows, rows_round, dm_off, row_offset, first)

    # -- the two operator() overloads ----------------------------------------------------------------------
    def _loop_rows(self, rows_this: int, col_round: int) -> tuple[int, int]:
        row_num_tile = round_down(MAX_UB_S_ELEM_NUM // col_round, FLOAT_BLOCK_SIZE)
        return row_num_tile, ceil_div(rows_this, row_num_tile)

    def __call__(self, g_output, g_input, layout_output, layout_input, actual_block_shape, is_first_stack_tile: bool,
                 q_s_block_size: int, q_n_block_size: int, cur_stack_tile_mod: int) -> None:
        """The unmasked ``operator()``: this core's rows of one S stack to P."""
        ctx = self.ctx
        row_num, col_num, _ = GemmCoord(*actual_block_shape)
        col_round = round_up(col_num, BLOCK_SIZE)
        col_pad = layout_input.stride[0]
        part = sub_block_rows(row_num, q_s_block_size, q_n_block_size, ctx.sub_block_idx, ctx.sub_block_num)
        row_num_tile, loops = self._loop_rows(part.row_actual, col_round)

        def rows_of(i: int) -> int:
            return part.row_actual - i * row_num_tile if i == loops - 1 else row_num_tile

        for i in range(loops + 1):
            if i < loops:
                pp = i % 2
                g_in = g_input[layout_input.offset(i * row_num_tile + part.row_offset, 0)]
                ctx.wait_flag(HardEvent.V_MTE2, pp)
                self.copy_s_gm_to_ub(g_in, pp * MAX_UB_S_ELEM_NUM, rows_of(i), col_round, col_pad)
                ctx.set_flag(HardEvent.MTE2_V, pp)
            if i >= 1:
                d = i - 1
                pp = d % 2
                row_off = d * row_num_tile
                rows = rows_of(d)
                g_out = g_output[layout_output.offset(row_off + part.row_offset, 0)]
                ctx.wait_flag(HardEvent.MTE2_V, pp)
                self.scale_s(pp * MAX_UB_S_ELEM_NUM, rows, col_round)
                self.sub_core_compute(False, g_out, layout_output.get_tile_layout(rows, col_num), row_off,
                                      is_first_stack_tile, col_round, pp, cur_stack_tile_mod)

    def masked(self, g_output, g_input, g_mask, layout_output, layout_input, layout_mask, actual_block_shape,
               is_first_stack_tile: bool, q_s_block_size: int, q_n_block_size: int, cur_stack_tile_mod: int,
               qk_ready) -> None:
        """The masked ``operator()``: loads this core's first mask tile, then waits for the cube's S
        (``qkReady``) itself; a core without rows only consumes the flag."""
        ctx = self.ctx
        row_num, col_num, _ = GemmCoord(*actual_block_shape)
        col_round = round_up(col_num, BLOCK_SIZE)
        col_pad = layout_input.stride[0]
        mask_stride = layout_mask.stride[0]
        part = sub_block_rows(row_num, q_s_block_size, q_n_block_size, ctx.sub_block_idx, ctx.sub_block_num)
        tokens_per_head = min(q_s_block_size, part.row_actual)
        mask_offset = part.row_offset if q_n_block_size == 1 else 0
        g_mask_this = g_mask[layout_mask.offset(mask_offset, 0)]
        row_num_tile, loops = self._loop_rows(part.row_actual, col_round)
        if part.row_actual == 0:
            ctx.cross_core_wait_flag(qk_ready)
            return

        def rows_of(i: int) -> int:
            return part.row_actual - i * row_num_tile if i == loops - 1 else row_num_tile

        def mask_parts(i: int) -> tuple:
            """(proTokenIdx, proTokenNum, integralHeadNum, epiTokenNum) of loop ``i``'s mask rows."""
            rows = rows_of(i)
            pro_idx = (i * row_num_tile) % tokens_per_head
            pro_num = min(rows, tokens_per_head - pro_idx) % tokens_per_head
            heads = (rows - pro_num) // tokens_per_head
            return pro_idx, pro_num, heads, rows - pro_num - heads * tokens_per_head

        for i in range(loops + 1):
            if i < loops:
                pp = i % 2
                if i == 0:
                    ctx.wait_flag(HardEvent.V_MTE2, 2)
                    self.copy_mask_gm_to_ub(g_mask_this, col_num, col_round, mask_stride, tokens_per_head,
                                            *mask_parts(0))
                    ctx.set_flag(HardEvent.MTE2_V, 2)
                    ctx.cross_core_wait_flag(qk_ready)
                g_in = g_input[layout_input.offset(i * row_num_tile + part.row_offset, 0)]
                ctx.wait_flag(HardEvent.V_MTE2, pp)
                self.copy_s_gm_to_ub(g_in, pp * MAX_UB_S_ELEM_NUM, rows_of(i), col_round, col_pad)
                ctx.set_flag(HardEvent.MTE2_V, pp)
            if i >= 1:
                d = i - 1
                pp = d % 2
                row_off = d * row_num_tile
                rows = rows_of(d)
                ctx.wait_flag(HardEvent.MTE3_V, 0)
                ctx.wait_flag(HardEvent.MTE3_V, 1)
                ctx.wait_flag(HardEvent.MTE2_V, 2)
                self.up_cast_mask(rows, col_round)
                ctx.wait_flag(HardEvent.MTE2_V, pp)
                self.scale_s(pp * MAX_UB_S_ELEM_NUM, rows, col_round)
                self.apply_mask(pp * MAX_UB_S_ELEM_NUM, rows, col_round)
                ctx.set_flag(HardEvent.V_MTE2, 2)
                if i < loops:
                    ctx.wait_flag(HardEvent.V_MTE2, 2)
                    self.copy_mask_gm_to_ub(g_mask_this, col_num, col_round, mask_stride, tokens_per_head,
                                            *mask_parts(i))
                    ctx.set_flag(HardEvent.MTE2_V, 2)
                g_out = g_output[layout_output.offset(row_off + part.row_offset, 0)]
                self.sub_core_compute(True, g_out, layout_output.get_tile_layout(rows, col_num), row_off,
                                      is_first_stack_tile, col_round, pp, cur_stack_tile_mod)


__all__ = ["BlockEpilogueOnlineSoftmax", "OnlineSoftmaxInstance", "sub_block_rows"]
