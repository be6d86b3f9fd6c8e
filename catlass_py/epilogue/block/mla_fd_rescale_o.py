"""BlockEpilogue for ``EpilogueAtlasA2MLAFDRescaleO<COMPUTE_ELE_NUM>`` (CATLASS
``epilogue/block/block_epilogue_mla_fd_rescale_o.hpp``): the flash-decoding combine of MLA. When the tiling splits
a (decode) sequence's KV over ``kvSplitCoreNum`` cores, each part wrote its normalised output ``O_i`` and
``lse_i = ln(l_i) + m_i`` per head; this epilogue, run by every vector core over (batch, token, head group)
after a vector-core barrier, computes ``O = sum_i exp(lse_i - lse) O_i`` with ``lse = ln(sum_i exp(lse_i -
max_i lse_i)) + max_i lse_i``. Per call, fp32:

====================================  ========================================================  ======================
step                                  instructions                                              events
====================================  ========================================================  ======================
load lse (MTE2)                       ``DataCopyPad`` ``heads x kvSplit`` (row pitch 64)         wait V_MTE2[2];
                                                                                                MTE2_V[2] (set, wait)
``lse``, weights ``exp(lse_i - lse)``  ``WholeReduceMax``, ``Brcb``, ``Sub``, ``Exp``,          set V_MTE2[2]
                                      ``RepeatReduceSum``, ``Ln``, ``Add``, ``Brcb``, ``Sub``,
                                      ``Exp``
load O_0 (MTE2)                       ``DataCopyPad`` into oIn[0]                                wait V_MTE2[0], set
                                                                                                MTE2_V[0]; V_S[2]
                                                                                                (set, wait)
per part i                            prefetch O_{i+1}; per head the weight read by the scalar  wait V_MTE2[next], set
                                      unit (``GetValue``) and ``Duplicate``d into a block;       MTE2_V[next]; S_V[b]
                                      ``Mul`` (and ``Add`` into the sum from the second part)    (set, wait) per head;
                                                                                                wait MTE2_V[b], set
                                                                                                V_MTE2[b]
store (MTE3)                          ``Cast`` to fp16/bf16, ``DataCopyPad`` to O                wait MTE3_V[0];
                                                                                                V_MTE3[0] (set, wait);
                                                                                                set MTE3_V[0]
====================================  ========================================================  ======================

The constructor sets MTE3_V[0], V_MTE2[0..2] and the destructor (``close``) waits for them.
"""

from __future__ import annotations

from catlass_py.arch.memory import Resource
from catlass_py.arch.pipes import HardEvent, Pipe
from catlass_py.epilogue.dispatch_policy_attention import EpilogueAtlasA2MLAFDRescaleO
from catlass_py.errors import ConfigError
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.layout import RowMajor
from catlass_py.lifetime import CloseOnExit
from catlass_py.numerics import dtypes as dt
from catlass_py.numerics.rounding import RoundMode
from catlass_py.tile import ascendc_vector as vec
from catlass_py.tile.ascendc_copy import DataCopyExtParams, data_copy_pad_gm_to_ub, data_copy_pad_ub_to_gm
from catlass_py.tile.ascendc_vector import BinaryRepeatParams, BrcbRepeatParams, UnaryRepeatParams, set_vector_mask

FLOAT_ELENUM_PER_VECCALC = 64
FLOAT_BLOCK_SIZE = 8
STAGES = 2
ALL = (1 << 64) - 1


def fd_set_mask(ctx, length: int) -> None:
    """``SetMask(len)`` of the FD epilogue: the first ``len`` lanes (all for ``len >= 128``)."""
    if length >= 128:
        set_vector_mask(ctx, ALL, ALL)
        return
    high = max(length - 64, 0)
    low = 64 if length >= 64 else length
    if length < 64:
        set_vector_mask(ctx, 0, (1 << low) - 1)
    else:
        set_vector_mask(ctx, (1 << high) - 1, ALL)


class BlockEpilogueMLAFDRescaleO:
    """Assembled CATLASS ``BlockEpilogue<EpilogueAtlasA2MLAFDRescaleO<COMPUTE_ELE_NUM>, OutputType (O), InputType
    (fp32 partial O and lse)>``. Checks: the UB map fits (``6 * COMPUTE_ELE_NUM * 4 + COMPUTE_ELE_NUM *
    sizeof(O) + 2 * KV_SPLIT_MAX * HEADS_PROCESS_MAX * 4 + ... <= UB_SIZE``)."""

    def __init__(self, policy: EpilogueAtlasA2MLAFDRescaleO, output_type: GemmType, input_type: GemmType):
        what = f"BlockEpilogue<EpilogueAtlasA2MLAFDRescaleO<{getattr(policy, 'compute_ele_num', '?')}>>"
        if not isinstance(policy, EpilogueAtlasA2MLAFDRescaleO):
            raise ConfigError(f"{what}: policy must be EpilogueAtlasA2MLAFDRescaleO, got {policy!r}")
        for name, t in (("OutputType", output_type), ("InputType", input_type)):
            if not isinstance(t, GemmType) or t.layout is not RowMajor:
                raise ConfigError(f"{what}: {name} must be a RowMajor GemmType, got {t!r}")
        if output_type.element not in (dt.FLOAT16, dt.BFLOAT16) or input_type.element != dt.FLOAT32:
            raise ConfigError(f"{what}: O must be half or bfloat16 and the input float, got {output_type.element}, "
                              f"{input_type.element}")
        self.policy = policy
        self.arch = policy.arch
        self.output_type, self.input_type = output_type, input_type
        n, kmax, hmax = policy.compute_ele_num, policy.KV_SPLIT_MAX, policy.HEADS_PROCESS_MAX
        offs = {}
        off = 0
        for name, size in (("o_in0", n * 4), ("o_in1", n * 4), ("o_temp0", n * 4), ("o_temp1", n * 4), ("o_sum", n * 4),
                           ("out", output_type.element.nbytes(n)), ("l_in", kmax * hmax * 4), ("l_exp", kmax * hmax * 4),
                           ("l_max", hmax * 4), ("l_sum", hmax * 4), ("l_brcb0", hmax * FLOAT_BLOCK_SIZE * 4),
                           ("l_brcb1", hmax * FLOAT_BLOCK_SIZE * 4)):
            offs[name] = off
            off += size
        if off > self.arch.ub_size:
            raise ConfigError(f"{what}: the UB map needs {off} bytes but {self.arch.name} has {self.arch.ub_size}")
        self.ub_offsets = offs

    @property
    def compute_ele_num(self) -> int:
        return self.policy.compute_ele_num

    def __call__(self, resource: Resource, max_kv_split_core_num: int) -> "MLAFDRescaleOInstance":
        return MLAFDRescaleOInstance(self, resource, max_kv_split_core_num)


class MLAFDRescaleOInstance(CloseOnExit):
    """One vector core's :class:`BlockEpilogueMLAFDRescaleO`; ``with`` it to run the destructor's waits."""

    def __init__(self, spec: BlockEpilogueMLAFDRescaleO, resource: Resource, max_kv_split_core_num: int):
        self.spec = spec
        self.ctx = ctx = resource.ctx
        self.max_kv_split_core_num = max_kv_split_core_num
        ub = resource.ub_buf
        f32 = dt.FLOAT32
        o = spec.ub_offsets
        self.o_in = [ub.get_buffer_by_byte(f32, o["o_in0"]), ub.get_buffer_by_byte(f32, o["o_in1"])]
        self.o_temp = [ub.get_buffer_by_byte(f32, o["o_temp0"]), ub.get_buffer_by_byte(f32, o["o_temp1"])]
        self.o_sum = ub.get_buffer_by_byte(f32, o["o_sum"])
        self.out = ub.get_buffer_by_byte(spec.output_type.element, o["out"])
        self.l_in = ub.get_buffer_by_byte(f32, o["l_in"])
        self.l_exp = ub.get_buffer_by_byte(f32, o["l_exp"])
        self.l_max = ub.get_buffer_by_byte(f32, o["l_max"])
        self.l_sum = ub.get_buffer_by_byte(f32, o["l_sum"])
        self.l_brcb = [ub.get_buffer_by_byte(f32, o["l_brcb0"]), ub.get_buffer_by_byte(f32, o["l_brcb1"])]
        ctx.set_flag(HardEvent.MTE3_V, 0)
        ctx.set_flag(HardEvent.V_MTE2, 0)
        ctx.set_flag(HardEvent.V_MTE2, 1)
        ctx.set_flag(HardEvent.V_MTE2, 2)

    def close(self) -> None:
        """The C++ destructor."""
        ctx = self.ctx
        ctx.wait_flag(HardEvent.MTE3_V, 0)
        ctx.wait_flag(HardEvent.V_MTE2, 0)
        ctx.wait_flag(HardEvent.V_MTE2, 1)
        ctx.wait_flag(HardEvent.V_MTE2, 2)

    def __call__(self, g_output, g_o_core_tmp, g_l, actual_heads: int, heads_process: int, head_size: int,
                 kv_split_core_num: int) -> None:
        """Combine the ``kv_split_core_num`` partial outputs of ``actual_heads`` heads of one token."""
        ctx, spec = self.ctx, self.spec
        kmax = spec.policy.KV_SPLIT_MAX
        k_round = -(-kv_split_core_num // FLOAT_BLOCK_SIZE) * FLOAT_BLOCK_SIZE
        heads_blocks = -(-heads_process // FLOAT_BLOCK_SIZE)
        ctx.wait_flag(HardEvent.V_MTE2, 2)
        data_copy_pad_gm_to_ub(self.l_in, g_l, DataCopyExtParams(
            actual_heads, kv_split_core_num * 4, (self.max_kv_split_core_num - kv_split_core_num) * 4,
            (kmax - kv_split_core_num) // FLOAT_BLOCK_SIZE, 0))
        ctx.set_flag(HardEvent.MTE2_V, 2)
        ctx.wait_flag(HardEvent.MTE2_V, 2)
        fd_set_mask(ctx, kv_split_core_num)
        vec.whole_reduce_max(self.l_max, self.l_in, actual_heads, 1, 1, 8)
        ctx.pipe_barrier(Pipe.V)
        brcb = BrcbRepeatParams(kmax // FLOAT_BLOCK_SIZE, 8 * kmax // FLOAT_BLOCK_SIZE)
        for i in range(k_round // FLOAT_BLOCK_SIZE):
            vec.brcb(self.l_exp[i * FLOAT_BLOCK_SIZE], self.l_max, heads_blocks, brcb)
        ctx.pipe_barrier(Pipe.V)
        fd_set_mask(ctx, kv_split_core_num)
        row = BinaryRepeatParams(1, 1, 1, 8, 8, 8)
        vec.vsub(self.l_exp, self.l_in, self.l_exp, actual_heads, row)
        ctx.pipe_barrier(Pipe.V)
        vec.vexp(self.l_exp, self.l_exp, actual_heads, UnaryRepeatParams(1, 1, 8, 8))
        ctx.pipe_barrier(Pipe.V)
        vec.repeat_reduce_sum(self.l_sum, self.l_exp, actual_heads, 0, 1, 1, 8)
        ctx.pipe_barrier(Pipe.V)
        vec.vln_count(self.l_sum, self.l_sum, heads_blocks * FLOAT_BLOCK_SIZE)
        ctx.pipe_barrier(Pipe.V)
        vec.vadd_count(self.l_sum, self.l_sum, self.l_max, heads_blocks * FLOAT_BLOCK_SIZE)
        ctx.pipe_barrier(Pipe.V)
        for i in range(k_round // FLOAT_BLOCK_SIZE):
            vec.brcb(self.l_exp[i * FLOAT_BLOCK_SIZE], self.l_sum, heads_blocks, brcb)
        ctx.pipe_barrier(Pipe.V)
        fd_set_mask(ctx, kv_split_core_num)
        vec.vsub(self.l_exp, self.l_in, self.l_exp, actual_heads, row)
        ctx.pipe_barrier(Pipe.V)
        ctx.set_flag(HardEvent.V_MTE2, 2)
        vec.vexp(self.l_exp, self.l_exp, actual_heads, UnaryRepeatParams(1, 1, 8, 8))
        ctx.pipe_barrier(Pipe.V)
        o_load = DataCopyExtParams(actual_heads, head_size * 4, (self.max_kv_split_core_num * head_size - head_size) * 4,
                                   0, 0)
        ctx.wait_flag(HardEvent.V_MTE2, 0)
        data_copy_pad_gm_to_ub(self.o_in[0], g_o_core_tmp, o_load)
        ctx.set_flag(HardEvent.MTE2_V, 0)
        ctx.set_flag(HardEvent.V_S, 2)
        ctx.wait_flag(HardEvent.V_S, 2)
        fd_set_mask(ctx, FLOAT_ELENUM_PER_VECCALC)
        b = 0
        for i in range(kv_split_core_num):
            if i < kv_split_core_num - 1:
                nb = 1 - b
                ctx.wait_flag(HardEvent.V_MTE2, nb)
                data_copy_pad_gm_to_ub(self.o_in[nb], g_o_core_tmp[(i + 1) * head_size], o_load)
                ctx.set_flag(HardEvent.MTE2_V, nb)
            ctx.pipe_barrier(Pipe.V)
            for j in range(actual_heads):
                a = vec.get_value(self.l_exp[j * kmax + i], 0)
                ctx.set_flag(HardEvent.S_V, b)
                ctx.wait_flag(HardEvent.S_V, b)
                vec.duplicate(self.l_brcb[b][j * FLOAT_BLOCK_SIZE], a, 1, 0, 0)
            ctx.pipe_barrier(Pipe.V)
            ctx.wait_flag(HardEvent.MTE2_V, b)
            loops = -(-head_size // FLOAT_ELENUM_PER_VECCALC)
            params = BinaryRepeatParams(1, 0, 1, head_size // FLOAT_BLOCK_SIZE, 1, head_size // FLOAT_BLOCK_SIZE)
            target = self.o_temp[b] if i > 0 else self.o_sum
            for j in range(loops):
                vec.vmul(target[j * FLOAT_ELENUM_PER_VECCALC], self.l_brcb[b], self.o_in[b][j * FLOAT_ELENUM_PER_VECCALC],
                         actual_heads, params)
            ctx.pipe_barrier(Pipe.V)
            ctx.set_flag(HardEvent.V_MTE2, b)
            if i > 0:
                vec.vadd_count(self.o_sum, self.o_sum, self.o_temp[b], actual_heads * head_size)
            ctx.pipe_barrier(Pipe.V)
            b = 1 - b
        ctx.wait_flag(HardEvent.MTE3_V, 0)
        mode = RoundMode.RINT if spec.output_type.element == dt.BFLOAT16 else RoundMode.NONE
        vec.vcast_count(self.out, self.o_sum, mode, actual_heads * head_size)
        ctx.set_flag(HardEvent.V_MTE3, 0)
        ctx.wait_flag(HardEvent.V_MTE3, 0)
        data_copy_pad_ub_to_gm(g_output, self.out, DataCopyExtParams(
            actual_heads, head_size * spec.output_type.element.nbytes(1), 0, 0, 0))
        ctx.set_flag(HardEvent.MTE3_V, 0)


__all__ = ["BlockEpilogueMLAFDRescaleO", "MLAFDRescaleOInstance", "fd_set_mask"]
