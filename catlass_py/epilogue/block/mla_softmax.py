"""BlockEpilogue for ``EpilogueAtlasA2MLASoftmax`` (CATLASS ``epilogue/block/block_epilogue_mla_softmax.hpp``): the
online softmax of one MLA S tile (``rowNum x kSeqTile`` fp32, rows ``head * tokens + token``) into P.

The vector cores split the heads (sub-block 0 ``floor(heads / 2)``, sub-block 1 the rest); each processes its
rows in one pass, S and P double-buffered by ``softmaxPingPongFlag`` (``p``). All fp32 on PIPE_V:

====================================  =============================================================  ==================
step                                  instructions                                                   events
====================================  =============================================================  ==================
load S (MTE2)                         ``DataCopy`` of ``rows x kSeqTileRound`` floats                wait MTE3_MTE2[p+6];
                                                                                                     MTE2_V[0] (set, wait)
``s = s * tor``                       ``Muls`` (``tor`` passes through the constructor's ``half``
                                      parameter: ``1 / sqrt(576)`` rounded to fp16)
``lm = rowmax(s)``                    ``WholeReduceMax`` (<= 64 columns) or UB ``DataCopy`` of the
                                      first 64 columns, ``Max`` per 64 columns, ``WholeReduceMax``
``hm = max(lm, gm)``, ``dm = gm-hm``  ``Max``, ``Sub`` (first block: ``hm = lm``), ``gm = hm``; the
                                      rescale epilogue exponentiates dm
(flash decoding, first block)         -                                                              once per task
                                                                                                     buffer: wait
                                                                                                     MTE3_V[task+2]
``s = exp(s - hm)``                   ``Brcb``, ``Sub`` per 64 columns, ``Exp``
``ll = rowsum(s)``                    ``BlockReduceSum`` / ``Add`` (the FAI tail-tile scheme)
``p = cast(s)``, store P (MTE3)       ``Cast`` into the first half of S's bytes, ``DataCopy``          V_MTE3[0] (set,
                                                                                                     wait); set
                                                                                                     MTE3_MTE2[p+6]
====================================  =============================================================  ==================

UB map (bytes): S / P 0 (2 x 32 KiB), LM 96 Ki, HM 96 Ki + 512, DM 96 Ki + 3 Ki, LL 96 Ki + 4.5 Ki, GM[0..1]
96 Ki + 6.5 Ki + 512 * task, TV 160 Ki.
"""

from __future__ import annotations

import numpy as np

from catlass_py.arch.memory import Resource
from catlass_py.arch.pipes import HardEvent, Pipe
from catlass_py.epilogue.block._attention_common import (
    BLOCK_SIZE,
    FLOAT_BLOCK_SIZE,
    FLOAT_VECTOR_SIZE,
    HALF_VECTOR_SIZE,
    reset_vector_mask,
    set_block_reduce_mask,
    set_mask,
    set_vec_mask,
)
from catlass_py.epilogue.dispatch_policy_attention import EpilogueAtlasA2MLASoftmax
from catlass_py.errors import ConfigError
from catlass_py.gemm.coord import GemmCoord, ceil_div, round_up
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.layout import RowMajor
from catlass_py.numerics import dtypes as dt
from catlass_py.numerics.rounding import RoundMode
from catlass_py.tile import ascendc_vector as vec
from catlass_py.tile.ascendc_copy import data_copy_gm_to_ub, data_copy_ub_to_gm
from catlass_py.tile.ascendc_vector import BinaryRepeatParams, BrcbRepeatParams, DataCopyParams, UnaryRepeatParams

UB_UINT8_LINE_SIZE = 512
UB_UINT8_BLOCK_SIZE_MLA = 16384
HALF_DM_UB_SIZE = 128
HALF_LL_UB_SIZE = 256
REDUCE_UB_SIZE = 1024
T_BLOCK_SIZE = 16
S_PINGPONG_ELEMS = 8192

_ROW8 = BinaryRepeatParams(1, 1, 1, 8, 8, 8)


class BlockEpilogueMLASoftmax:
    """Assembled CATLASS ``BlockEpilogue<EpilogueAtlasA2MLASoftmax, OutputType (P), InputType (S), MaskType>``;
    calling it with a vector core's resource, ``tor`` and ``kvSplitCoreNum`` builds the per-core object."""

    def __init__(self, policy: EpilogueAtlasA2MLASoftmax, output_type: GemmType, input_type: GemmType,
                 mask_type: GemmType):
        what = "BlockEpilogue<EpilogueAtlasA2MLASoftmax>"
        if not isinstance(policy, EpilogueAtlasA2MLASoftmax):
            raise ConfigError(f"{what}: policy must be EpilogueAtlasA2MLASoftmax, got {policy!r}")
        for name, t in (("OutputType", output_type), ("InputType", input_type), ("MaskType", mask_type)):
            if not isinstance(t, GemmType) or t.layout is not RowMajor:
                raise ConfigError(f"{what}: {name} must be a RowMajor GemmType, got {t!r}")
        if output_type.element not in (dt.FLOAT16, dt.BFLOAT16) or input_type.element != dt.FLOAT32:
            raise ConfigError(f"{what}: P must be half or bfloat16 and S float, got P={output_type.element}, "
                              f"S={input_type.element}")
        self.policy = policy
        self.arch = policy.arch
        self.output_type, self.input_type, self.mask_type = output_type, input_type, mask_type

    @property
    def element_output(self):
        return self.output_type.element

    def __call__(self, resource: Resource, tor: float, kv_split_core_num: int) -> "MLASoftmaxInstance":
        return MLASoftmaxInstance(self, resource, tor, kv_split_core_num)


class MLASoftmaxInstance:
    """One vector core's :class:`BlockEpilogueMLASoftmax`."""

    def __init__(self, spec: BlockEpilogueMLASoftmax, resource: Resource, tor: float, kv_split_core_num: int):
        self.spec = spec
        self.ctx = resource.ctx
        self.tor = float(np.float16(tor))  # the constructor takes ``half tor_``
        self.kv_split_core_num = kv_split_core_num
        ub = resource.ub_buf
        f32 = dt.FLOAT32
        base = 6 * UB_UINT8_BLOCK_SIZE_MLA
        self.tv16 = ub.get_buffer_by_byte(spec.element_output, 0)
        self.ls = ub.get_buffer_by_byte(f32, 0)
        self.lm = ub.get_buffer_by_byte(f32, base)
        self.hm = ub.get_buffer_by_byte(f32, base + UB_UINT8_LINE_SIZE)
        self.gm = [ub.get_buffer_by_byte(f32, base + 13 * UB_UINT8_LINE_SIZE),
                   ub.get_buffer_by_byte(f32, base + 14 * UB_UINT8_LINE_SIZE)]
        self.dm = ub.get_buffer_by_byte(f32, base + 6 * UB_UINT8_LINE_SIZE)
        self.ll = ub.get_buffer_by_byte(f32, base + 9 * UB_UINT8_LINE_SIZE)
        self.tv = ub.get_buffer_by_byte(f32, 10 * UB_UINT8_BLOCK_SIZE_MLA)

    def reduce_max_repeat_m(self, dst, src, tmp, rows: int, k: int, k_round: int) -> None:
        """``ReduceMaxRepeatM``."""
        ctx = self.ctx
        if k <= FLOAT_VECTOR_SIZE:
            set_mask(ctx, k)
            vec.whole_reduce_max(dst, src, rows, 1, 1, k_round // FLOAT_BLOCK_SIZE)
        else:
            vec.copy_ub_to_ub(tmp, src, DataCopyParams(rows, HALF_VECTOR_SIZE // BLOCK_SIZE,
                                                       (k_round - FLOAT_VECTOR_SIZE) // FLOAT_BLOCK_SIZE, 0))
            ctx.pipe_barrier(Pipe.V)
            params = BinaryRepeatParams(1, 1, 1, 8, 8, k_round // FLOAT_BLOCK_SIZE)
            for i in range(1, k // FLOAT_VECTOR_SIZE):
                vec.vmax(tmp, tmp, src[i * FLOAT_VECTOR_SIZE], rows, params)
                ctx.pipe_barrier(Pipe.V)
            if k % FLOAT_VECTOR_SIZE > 0:
                set_mask(ctx, k % FLOAT_VECTOR_SIZE)
                vec.vmax(tmp, tmp, src[k // FLOAT_VECTOR_SIZE * FLOAT_VECTOR_SIZE], rows, params)
            ctx.pipe_barrier(Pipe.V)
            reset_vector_mask(ctx)
            vec.whole_reduce_max(dst, tmp, rows, 1, 1, 8)
        reset_vector_mask(ctx)
        ctx.pipe_barrier(Pipe.V)

    def tensor_sub_value_repeat_m(self, dst, src, max_tensor, tmp, rows: int, sub_m_round: int, k: int,
                                  k_round: int) -> None:
        """``TensorSubValueRepeatM``: ``dst = src - max`` per row."""
        ctx = self.ctx
        vec.brcb(tmp, max_tensor, sub_m_round // FLOAT_BLOCK_SIZE, BrcbRepeatParams(1, 8))
        ctx.pipe_barrier(Pipe.V)
        params = BinaryRepeatParams(1, 1, 0, k_round // FLOAT_BLOCK_SIZE, k_round // FLOAT_BLOCK_SIZE, 1)
        for i in range(k // FLOAT_VECTOR_SIZE):
            vec.vsub(dst[i * FLOAT_VECTOR_SIZE], src[i * FLOAT_VECTOR_SIZE], tmp, rows, params)
        if k % FLOAT_VECTOR_SIZE > 0:
            set_mask(ctx, k % FLOAT_VECTOR_SIZE)
            start = k // FLOAT_VECTOR_SIZE * FLOAT_VECTOR_SIZE
            vec.vsub(dst[start], src[start], tmp, rows, params)
            reset_vector_mask(ctx)
        ctx.pipe_barrier(Pipe.V)

    def rowsum_tail_tile(self, src, rowsum, tv, rows: int, elems: int, elems_aligned: int) -> None:
        """``RowsumTAILTILE`` (as in the FAI softmax)."""
        ctx = self.ctx
        gather = ceil_div(rows * FLOAT_BLOCK_SIZE, FLOAT_VECTOR_SIZE)
        one = BinaryRepeatParams(1, 1, 1, 8, 8, 8)
        if elems >= FLOAT_VECTOR_SIZE:
            vec.block_reduce_sum(tv, src, rows, 1, 1, elems_aligned // FLOAT_BLOCK_SIZE)
            ctx.pipe_barrier(Pipe.V)
            vec.block_reduce_sum(rowsum, tv, gather, 1, 1, 8)
            ctx.pipe_barrier(Pipe.V)
            for i in range(1, elems // FLOAT_VECTOR_SIZE):
                vec.block_reduce_sum(tv, src[i * FLOAT_VECTOR_SIZE], rows, 1, 1, elems_aligned // FLOAT_BLOCK_SIZE)
                ctx.pipe_barrier(Pipe.V)
                vec.block_reduce_sum(tv[REDUCE_UB_SIZE], tv, gather, 1, 1, 8)
                ctx.pipe_barrier(Pipe.V)
                set_vec_mask(ctx, rows)
                vec.vadd(rowsum, rowsum, tv[REDUCE_UB_SIZE], 1, one)
                ctx.pipe_barrier(Pipe.V)
                reset_vector_mask(ctx)
        if elems % FLOAT_VECTOR_SIZE > 0:
            set_vec_mask(ctx, elems % FLOAT_VECTOR_SIZE)
            vec.block_reduce_sum(tv, src[elems // FLOAT_VECTOR_SIZE * FLOAT_VECTOR_SIZE], rows, 1, 1,
                                 elems_aligned // FLOAT_BLOCK_SIZE)
            ctx.pipe_barrier(Pipe.V)
            set_block_reduce_mask(ctx, ceil_div(elems % FLOAT_VECTOR_SIZE, FLOAT_BLOCK_SIZE))
            if elems < FLOAT_VECTOR_SIZE:
                vec.block_reduce_sum(rowsum, tv, gather, 1, 1, 8)
                ctx.pipe_barrier(Pipe.V)
            else:
                vec.block_reduce_sum(tv[REDUCE_UB_SIZE], tv, gather, 1, 1, 8)
                ctx.pipe_barrier(Pipe.V)
                set_vec_mask(ctx, rows)
                vec.vadd(rowsum, rowsum, tv[REDUCE_UB_SIZE], 1, one)
                ctx.pipe_barrier(Pipe.V)
            reset_vector_mask(ctx)

    def sub_core_compute(self, g_output, g_input, layout_output, layout_input, n_idx: int, softmax_pp: int,
                         gl_flag: list, task_pp: int, s_ub_offset: int) -> None:
        """``SubCoreCompute`` (module docstring table)."""
        ctx = self.ctx
        rows = layout_input.rows
        k = layout_input.cols
        k_round = layout_input.stride[0]
        sub_m_round = round_up(rows, 16)
        sub_m_d64 = ceil_div(rows, 64)
        dm_off = softmax_pp * HALF_DM_UB_SIZE
        ll_off = softmax_pp * HALF_LL_UB_SIZE
        ls = self.ls[s_ub_offset]
        repeat = ceil_div(rows * k_round, FLOAT_VECTOR_SIZE)
        ctx.wait_flag(HardEvent.MTE3_MTE2, softmax_pp + 6)
        data_copy_gm_to_ub(ls, g_input, DataCopyParams(1, rows * k_round // FLOAT_BLOCK_SIZE, 0, 0))
        ctx.set_flag(HardEvent.MTE2_V, 0)
        ctx.wait_flag(HardEvent.MTE2_V, 0)
        vec.vmuls(ls, ls, self.tor, repeat, UnaryRepeatParams(1, 1, 8, 8))
        ctx.pipe_barrier(Pipe.V)
        self.reduce_max_repeat_m(self.lm, ls, self.tv, rows, k, k_round)
        gm = self.gm[task_pp]
        if n_idx != 0:
            vec.vmax(self.hm, self.lm, gm, sub_m_d64, _ROW8)
            ctx.pipe_barrier(Pipe.V)
            vec.vsub(self.dm[dm_off], gm, self.hm, sub_m_d64, _ROW8)
            ctx.pipe_barrier(Pipe.V)
        else:
            vec.copy_ub_to_ub(self.hm, self.lm, DataCopyParams(1, sub_m_round // FLOAT_BLOCK_SIZE, 0, 0))
            ctx.pipe_barrier(Pipe.V)
        vec.copy_ub_to_ub(gm, self.hm, DataCopyParams(1, sub_m_round // FLOAT_BLOCK_SIZE, 0, 0))
        ctx.pipe_barrier(Pipe.V)
        if self.kv_split_core_num != 1 and n_idx == 0 and gl_flag[task_pp] == 1:
            ctx.wait_flag(HardEvent.MTE3_V, task_pp + 2)
            gl_flag[task_pp] = 0
        self.tensor_sub_value_repeat_m(ls, ls, self.hm, self.tv, rows, sub_m_round, k, k_round)
        vec.vexp(ls, ls, repeat, UnaryRepeatParams(1, 1, 8, 8))
        ctx.pipe_barrier(Pipe.V)
        self.rowsum_tail_tile(ls, self.ll[ll_off], self.tv, rows, k, k_round)
        mode = RoundMode.RINT if self.spec.element_output == dt.BFLOAT16 else RoundMode.NONE
        p16 = self.tv16[s_ub_offset * 2]
        vec.vcast(p16, ls, mode, repeat, UnaryRepeatParams(1, 1, 4, 8))
        ctx.pipe_barrier(Pipe.V)
        ctx.set_flag(HardEvent.V_MTE3, 0)
        ctx.wait_flag(HardEvent.V_MTE3, 0)
        data_copy_ub_to_gm(g_output, p16, DataCopyParams(1, rows * k_round // T_BLOCK_SIZE, 0, 0))
        ctx.set_flag(HardEvent.MTE3_MTE2, softmax_pp + 6)

    def __call__(self, g_output, g_input, layout_output, layout_input, actual_block_shape, n_idx: int, cur_head_num: int,
                 softmax_pp: int, gl_flag: list, task_pp: int) -> None:
        """This core's heads of one S tile to P."""
        ctx = self.ctx
        row_actual, n_actual, _ = GemmCoord(*actual_block_shape)
        tokens = row_actual // cur_head_num
        sub, nsub = ctx.sub_block_idx, ctx.sub_block_num
        s_ub_offset = softmax_pp * S_PINGPONG_ELEMS
        split = cur_head_num // nsub
        heads_this = split if sub == 0 else cur_head_num - split
        rows_this = heads_this * tokens
        row_offset = sub * split * tokens
        if rows_this > 0:
            self.sub_core_compute(g_output[layout_output.offset(row_offset, 0)],
                                  g_input[layout_input.offset(row_offset, 0)],
                                  layout_output.get_tile_layout(rows_this, n_actual),
                                  layout_input.get_tile_layout(rows_this, n_actual), n_idx, softmax_pp, gl_flag,
                                  task_pp, s_ub_offset)


__all__ = ["BlockEpilogueMLASoftmax", "MLASoftmaxInstance"]
