"""BlockEpilogue for ``EpilogueAtlasA2RescaleO`` (CATLASS ``epilogue/block/block_epilogue_rescale_o_no_split_row.hpp``):
the running output of flash attention inference, kept in UB across the stacks of a row block.

The vector cores split the rows as the softmax does (:func:`~catlass_py.epilogue.block.online_softmax_no_mask.
sub_block_rows`); a core without rows does nothing. Per stack, fp32 on PIPE_V:

=================  ==================================================================  ========================
step               instructions                                                        events
=================  ==================================================================  ========================
load O_tmp (MTE2)  ``DataCopy`` (first stack: into GO, else into LO)                     wait V_MTE2[3]; MTE2_V[0]
                                                                                       (set, wait)
``go = go*dm+lo``  ``Brcb`` of this stack's dm, ``Mul`` per 64 columns (src1 block
(not first)        stride 0), ``Add``
-                  -                                                                   set V_MTE2[3]
last stack         ``Brcb`` of gl, ``Div`` per 64 columns, ``Cast`` to fp16/bf16 in     V_MTE3[0] (set, wait)
                   place, ``DataCopyPad`` each head's rows to O ``[token, head, d]``
                   (MTE3)
=================  ==================================================================  ========================

UB map (bytes): LO 96 Ki, GO 128 Ki (the fp16/bf16 result overwrites its start), TV 160 Ki, GL 160 Ki + 12 Ki,
DM 160 Ki + 13 Ki (shared with the softmax epilogue, which writes gl and dm).
"""

from __future__ import annotations

from catlass_py.arch.memory import Resource
from catlass_py.arch.pipes import HardEvent, Pipe
from catlass_py.epilogue.block._attention_common import (
    FLOAT_BLOCK_SIZE,
    FLOAT_VECTOR_SIZE,
    UB_UINT8_BLOCK_SIZE,
    UB_UINT8_VECTOR_SIZE,
    reset_vector_mask,
    set_mask,
)
from catlass_py.epilogue.block.online_softmax_no_mask import sub_block_rows
from catlass_py.epilogue.dispatch_policy_attention import EpilogueAtlasA2RescaleO
from catlass_py.errors import ConfigError
from catlass_py.gemm.coord import GemmCoord, ceil_div, round_up
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.layout import RowMajor
from catlass_py.numerics import dtypes as dt
from catlass_py.numerics.rounding import RoundMode
from catlass_py.tile import ascendc_vector as vec
from catlass_py.tile.ascendc_copy import DataCopyExtParams, data_copy_gm_to_ub, data_copy_pad_ub_to_gm
from catlass_py.tile.ascendc_vector import BinaryRepeatParams, BrcbRepeatParams, DataCopyParams, UnaryRepeatParams

MAX_UB_O_ELEM_NUM = 4096
MAX_ROW_NUM_SUB_CORE = 128


class BlockEpilogueRescaleO:
    """Assembled CATLASS ``BlockEpilogue<EpilogueAtlasA2RescaleO, OutputType (O), InputType (O_tmp),
    UpdateType>``; calling it with a vector core's resource builds the per-core object."""

    def __init__(self, policy: EpilogueAtlasA2RescaleO, output_type: GemmType, input_type: GemmType,
                 update_type: GemmType):
        what = "BlockEpilogue<EpilogueAtlasA2RescaleO>"
        if not isinstance(policy, EpilogueAtlasA2RescaleO):
            raise ConfigError(f"{what}: policy must be EpilogueAtlasA2RescaleO, got {policy!r}")
        for name, t in (("OutputType", output_type), ("InputType", input_type), ("UpdateType", update_type)):
            if not isinstance(t, GemmType) or t.layout is not RowMajor:
                raise ConfigError(f"{what}: {name} must be a RowMajor GemmType, got {t!r}")
        if output_type.element not in (dt.FLOAT16, dt.BFLOAT16):
            raise ConfigError(f"{what}: O must be half or bfloat16, got {output_type.element}")
        if input_type.element != dt.FLOAT32 or update_type.element != dt.FLOAT32:
            raise ConfigError(f"{what}: O_tmp and the update type must be float, got {input_type.element}, "
                              f"{update_type.element}")
        self.policy = policy
        self.arch = policy.arch
        self.output_type, self.input_type, self.update_type = output_type, input_type, update_type

    @property
    def element_output(self):
        return self.output_type.element

    def __call__(self, resource: Resource) -> "RescaleOInstance":
        return RescaleOInstance(self, resource)


class RescaleOInstance:
    """One vector core's :class:`BlockEpilogueRescaleO`."""

    def __init__(self, spec: BlockEpilogueRescaleO, resource: Resource):
        self.spec = spec
        self.ctx = resource.ctx
        ub = resource.ub_buf
        f32 = dt.FLOAT32
        base = 10 * UB_UINT8_BLOCK_SIZE
        self.lo = ub.get_buffer_by_byte(f32, 6 * UB_UINT8_BLOCK_SIZE)
        self.dm = ub.get_buffer_by_byte(f32, base + 13 * UB_UINT8_VECTOR_SIZE)
        self.gl = ub.get_buffer_by_byte(f32, base + 12 * UB_UINT8_VECTOR_SIZE)
        self.tv = ub.get_buffer_by_byte(f32, base)
        self.go16 = ub.get_buffer_by_byte(spec.element_output, 8 * UB_UINT8_BLOCK_SIZE)
        self.go32 = ub.get_buffer_by_byte(f32, 8 * UB_UINT8_BLOCK_SIZE)
        self.hm = ub.get_buffer_by_byte(f32, base + 9 * UB_UINT8_VECTOR_SIZE)

    def copy_o_to_gm(self, g_output, rows: int, q_s_block_size: int, embed: int, embed_round: int, q_n_this: int,
                     o_hidden: int) -> None:
        """``CopyOToGm``: the rows back to O ``[token, head * embed]`` (one head at a time when the core holds
        whole heads)."""
        esize = self.spec.element_output.nbytes(1)
        if q_n_this == 0:
            data_copy_pad_ub_to_gm(g_output, self.go16,
                                   DataCopyExtParams(rows, embed * esize, 0, (o_hidden - embed) * esize, 0))
        else:
            for h in range(q_n_this):
                data_copy_pad_ub_to_gm(g_output[h * embed], self.go16[h * embed_round * q_s_block_size],
                                       DataCopyExtParams(q_s_block_size, embed * esize, 0, (o_hidden - embed) * esize, 0))

    def _per_row(self, op, rows: int, embed: int, embed_round: int) -> None:
        """``go = op(go, tv)`` with tv holding one broadcast block per row (src1 block stride 0)."""
        ctx = self.ctx
        params = BinaryRepeatParams(1, 1, 0, embed_round // FLOAT_BLOCK_SIZE, embed_round // FLOAT_BLOCK_SIZE, 1)
        reset_vector_mask(ctx)
        for i in range(embed // FLOAT_VECTOR_SIZE):
            op(self.go32[i * FLOAT_VECTOR_SIZE], self.go32[i * FLOAT_VECTOR_SIZE], self.tv, rows, params)
        if embed % FLOAT_VECTOR_SIZE > 0:
            set_mask(ctx, embed % FLOAT_VECTOR_SIZE)
            start = embed // FLOAT_VECTOR_SIZE * FLOAT_VECTOR_SIZE
            op(self.go32[start], self.go32[start], self.tv, rows, params)
            reset_vector_mask(ctx)
        ctx.pipe_barrier(Pipe.V)

    def sub_core_compute(self, g_output, g_input, layout_output, layout_input, q_n_this: int, first: bool, last: bool,
                         cur_stack_tile_mod: int) -> None:
        """``SubCoreCompute``: module docstring table."""
        ctx = self.ctx
        rows = layout_input.rows
        embed = layout_input.cols
        embed_round = layout_input.stride[0]
        rows_round = round_up(rows, FLOAT_BLOCK_SIZE)
        q_s_block_size = layout_output.rows
        o_hidden = layout_output.cols
        dm_off = cur_stack_tile_mod * MAX_ROW_NUM_SUB_CORE
        load = DataCopyParams(1, rows * embed_round // FLOAT_BLOCK_SIZE, 0, 0)
        ctx.wait_flag(HardEvent.V_MTE2, 3)
        if not first:
            data_copy_gm_to_ub(self.lo, g_input, load)
            ctx.set_flag(HardEvent.MTE2_V, 0)
            ctx.wait_flag(HardEvent.MTE2_V, 0)
            reset_vector_mask(ctx)
            vec.brcb(self.tv, self.dm[dm_off], rows_round // FLOAT_BLOCK_SIZE, BrcbRepeatParams(1, 8))
            ctx.pipe_barrier(Pipe.V)
            self._per_row(vec.vmul, rows, embed, embed_round)
            vec.vadd(self.go32, self.go32, self.lo, ceil_div(rows * embed_round, FLOAT_VECTOR_SIZE),
                     BinaryRepeatParams(1, 1, 1, 8, 8, 8))
            ctx.pipe_barrier(Pipe.V)
        else:
            data_copy_gm_to_ub(self.go32, g_input, load)
            ctx.set_flag(HardEvent.MTE2_V, 0)
            ctx.wait_flag(HardEvent.MTE2_V, 0)
        ctx.set_flag(HardEvent.V_MTE2, 3)
        if last:
            vec.brcb(self.tv, self.gl, rows_round // FLOAT_BLOCK_SIZE, BrcbRepeatParams(1, 8))
            ctx.pipe_barrier(Pipe.V)
            self._per_row(vec.vdiv, rows, embed, embed_round)
            mode = RoundMode.RINT if self.spec.element_output == dt.BFLOAT16 else RoundMode.NONE
            vec.vcast(self.go16, self.go32, mode, ceil_div(rows * embed_round, FLOAT_VECTOR_SIZE),
                      UnaryRepeatParams(1, 1, 4, 8))
            ctx.set_flag(HardEvent.V_MTE3, 0)
            ctx.wait_flag(HardEvent.V_MTE3, 0)
            self.copy_o_to_gm(g_output, rows, q_s_block_size, embed, embed_round, q_n_this, o_hidden)

    def __call__(self, g_output, g_input, layout_output, layout_input, actual_block_shape, q_s_block_size: int,
                 q_n_block_size: int, is_first_stack_tile: bool, is_last_stack_tile: bool,
                 cur_stack_tile_mod: int) -> None:
        """This core's rows of one stack's O_tmp into the running O (and O itself after the last stack)."""
        ctx = self.ctx
        row_num, embed, _ = GemmCoord(*actual_block_shape)
        part = sub_block_rows(row_num, q_s_block_size, q_n_block_size, ctx.sub_block_idx, ctx.sub_block_num)
        out_row = part.row_offset if q_n_block_size == 1 else 0
        out_col = 0 if q_n_block_size == 1 else ctx.sub_block_idx * (q_n_block_size // ctx.sub_block_num) * embed
        if part.row_actual > 0:
            g_out = g_output[layout_output.offset(out_row, out_col)]
            g_in = g_input[layout_input.offset(part.row_offset, 0)]
            self.sub_core_compute(g_out, g_in, layout_output, layout_input.get_tile_layout(part.row_actual, embed),
                                  part.q_n_this, is_first_stack_tile, is_last_stack_tile, cur_stack_tile_mod)


__all__ = ["BlockEpilogueRescaleO", "RescaleOInstance"]
