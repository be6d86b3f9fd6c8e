"""The Ascend C level-0 vector instructions and the DataCopy forms the attention kernels use, against numpy:
addressing (repeat and block strides, masks), numerics (fp32 compute, fp16/bf16 rounding, the reduction order),
declared accesses, and the hazards the pipe model finds between them."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from catlass_py.arch import LaunchParams, launch, standalone_core
from catlass_py.arch.memory import GlobalBuffer
from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ConfigError, RaceError
from catlass_py.numerics.rounding import RoundMode
from catlass_py.tile import ascendc_copy as C
from catlass_py.tile import ascendc_vector as V


@pytest.fixture()
def ub():
    ctx = standalone_core(core_type="AIV")
    return ctx, ctx.resource.ub_buf


def _fill(t, values):
    t.view(values.size)[:] = values.reshape(-1)


def test_binary_ops_row_broadcast(ub):
    """``Sub`` with src1 block stride 0 and repeat stride 1 subtracts one broadcast block per row (the softmax's
    ``ls - hm``); the mask selects the first ``len`` lanes."""
    ctx, buf = ub
    rows, cols = 16, 200
    col_round = 208
    rng = np.random.default_rng(1)
    x = rng.standard_normal((rows, col_round)).astype(np.float32)
    m = rng.standard_normal(rows).astype(np.float32)
    s = buf.get_buffer_by_byte("float32", 0, rows * col_round)
    hm = buf.get_buffer_by_byte("float32", 32768, 64)
    tv = buf.get_buffer_by_byte("float32", 40960, 1024)
    _fill(s, x)
    _fill(hm, np.concatenate([m, np.zeros(48, np.float32)]))
    V.brcb(tv, hm, rows // 8, V.BrcbRepeatParams(1, 8))
    assert np.array_equal(tv.view(rows * 8).reshape(rows, 8), np.repeat(m[:, None], 8, axis=1))
    params = V.BinaryRepeatParams(1, 1, 0, col_round // 8, col_round // 8, 1)
    for sub in range(cols // 64):
        V.vsub(s[sub * 64], s[sub * 64], tv, rows, params)
    V.set_mask_count_prefix(ctx, cols % 64)
    V.vsub(s[cols // 64 * 64], s[cols // 64 * 64], tv, rows, params)
    V.reset_vector_mask(ctx)
    got = s.view().reshape(-1)[: rows * col_round].reshape(rows, col_round)
    assert np.array_equal(got[:, :cols], x[:, :cols] - m[:, None])
    assert np.array_equal(got[:, cols:], x[:, cols:])  # lanes outside the mask are untouched


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
def test_elementwise_numerics(ub, dtype):
    """Add/Mul/Div/Max round once in the element type; bf16 computes in fp32 and rounds once; Muls converts the
    scalar first; Exp and Ln are numpy's float32 functions."""
    ctx, buf = ub
    n = 256 // np.dtype(dtype).itemsize
    rng = np.random.default_rng(2)
    a = (rng.random(n) + 0.5).astype(dtype)
    b = (rng.random(n) + 0.5).astype(dtype)
    ta, tb, td = (buf.get_buffer_by_byte(np.dtype(dtype), off, n) for off in (0, 1024, 2048))
    _fill(ta, a)
    _fill(tb, b)
    for fn, ref in ((V.vadd, np.add), (V.vmul, np.multiply), (V.vdiv, np.divide), (V.vmax, np.maximum)):
        fn(td, ta, tb, 1)
        expect = ref(a.astype(np.float32), b.astype(np.float32)).astype(dtype)
        assert np.array_equal(td.view(n), expect)
    V.vmuls(td, ta, 0.1, 1, V.UnaryRepeatParams())
    scalar = np.float32(0.1) if dtype is ml_dtypes.bfloat16 else np.asarray(0.1).astype(dtype)[()]
    assert np.array_equal(td.view(n), (a.astype(np.float32) * np.float32(scalar)).astype(dtype))
    V.vexp(td, ta, 1)
    assert np.array_equal(td.view(n), np.exp(a.astype(np.float32)).astype(dtype))


def test_cast_round_modes(ub):
    ctx, buf = ub
    x = np.array([1 + 2**-11, 1 + 3 * 2**-11, -7.00048828125, 65520.0] + [0.5] * 60, np.float32)
    src = buf.get_buffer_by_byte("float32", 0, 64)
    h = buf.get_buffer_by_byte("float16", 1024, 64)
    bf = buf.get_buffer_by_byte("bfloat16", 2048, 64)
    _fill(src, x)
    with np.errstate(over="ignore"):
        x16 = x.astype(np.float16)  # round to nearest even (65520 -> inf)
    V.vcast(h, src, RoundMode.NONE, 1, V.UnaryRepeatParams(1, 1, 4, 8))
    assert np.array_equal(h.view(64), x16)
    V.vcast(bf, src, RoundMode.RINT, 1, V.UnaryRepeatParams(1, 1, 4, 8))
    assert np.array_equal(bf.view(64), x.astype(ml_dtypes.bfloat16))
    V.vcast(src, h, RoundMode.NONE, 1, V.UnaryRepeatParams(1, 1, 8, 4))
    assert np.array_equal(src.view(64), x16.astype(np.float32))


def _pairwise(v):
    while v.shape[-1] > 1:
        v = (v[..., 0::2] + v[..., 1::2]).astype(np.float32)
    return v[..., 0]


@pytest.mark.parametrize("cols", [512, 256, 200, 64, 13])
def test_row_reductions_like_the_softmax(ub, cols):
    """The softmax's row max / row sum schemes (three block reductions for 512 columns, the masked pair for 256,
    per-64-column reductions plus Max/Add otherwise) give numpy's max exactly and a pairwise fp32 sum."""
    from catlass_py.epilogue.block.online_softmax_no_mask import OnlineSoftmaxInstance

    ctx, buf = ub
    rows = 16
    col_round = -(-cols // 16) * 16
    rng = np.random.default_rng(cols)
    x = rng.standard_normal((rows, col_round)).astype(np.float32)
    inst = OnlineSoftmaxInstance.__new__(OnlineSoftmaxInstance)
    inst.ctx = ctx
    inst.tv = buf.get_buffer_by_byte("float32", 163840, 2048)
    src = buf.get_buffer_by_byte("float32", 0, rows * col_round)
    out = buf.get_buffer_by_byte("float32", 65536, 64)
    _fill(src, x)
    inst._row_reduce(V.block_reduce_max, V.vmax, src, out, rows, cols, col_round)
    assert np.array_equal(out.view(rows), x[:, :cols].max(axis=1))
    inst._row_reduce(V.block_reduce_sum, V.vadd, src, out, rows, cols, col_round)
    exact = x[:, :cols].astype(np.float64).sum(axis=1)
    assert np.allclose(out.view(rows), exact, rtol=0, atol=1e-5)
    if cols == 512:  # three levels of 8-element pairwise trees
        expect = _pairwise(_pairwise(_pairwise(x.reshape(rows, 64, 8)).reshape(rows, 8, 8)).reshape(rows, 8))
        assert np.array_equal(out.view(rows), expect)


def test_whole_and_repeat_reductions(ub):
    ctx, buf = ub
    x = np.random.default_rng(3).standard_normal((4, 64)).astype(np.float32)
    src = buf.get_buffer_by_byte("float32", 0, 256)
    dst = buf.get_buffer_by_byte("float32", 2048, 8)
    _fill(src, x)
    V.set_mask_count_prefix(ctx, 10)
    V.whole_reduce_max(dst, src, 4, 1, 1, 8)
    assert np.array_equal(dst.view(4), x[:, :10].max(axis=1))
    V.repeat_reduce_sum(dst, src, 4, 0, 1, 1, 8)
    assert np.allclose(dst.view(4), x[:, :10].sum(axis=1), atol=1e-6)
    V.reset_vector_mask(ctx)


def test_block_reduce_skips_fully_masked_blocks(ub):
    ctx, buf = ub
    src = buf.get_buffer_by_byte("float32", 0, 64)
    dst = buf.get_buffer_by_byte("float32", 1024, 8)
    _fill(src, np.arange(64, dtype=np.float32))
    _fill(dst, np.full(8, -1, np.float32))
    V.set_mask_count_prefix(ctx, 20)  # blocks 0, 1 full, block 2 half, blocks 3..7 off
    V.block_reduce_sum(dst, src, 1, 1, 1, 8)
    assert dst.view(8).tolist() == [28.0, 92.0, 16 + 17 + 18 + 19, -1, -1, -1, -1, -1]


def test_copies_duplicate_getvalue_and_count_forms(ub):
    ctx, buf = ub
    a = buf.get_buffer_by_byte("float32", 0, 128)
    b = buf.get_buffer_by_byte("float32", 1024, 128)
    _fill(a, np.arange(128, dtype=np.float32))
    V.copy_ub_to_ub(b, a, V.DataCopyParams(2, 1, 1, 2))  # 2 bursts of 8 floats: src pitch 16, dst pitch 24
    assert b.view(8).tolist() == list(range(8)) and b[24].view(8).tolist() == list(range(16, 24))
    V.set_mask_count_prefix(ctx, 64)
    V.duplicate(b, 3.5, 1, 0, 0)  # block stride 0: one block
    assert b.view(8).tolist() == [3.5] * 8 and np.isnan(b[8].view(8)).all()  # one block, the next untouched
    V.reset_vector_mask(ctx)
    assert V.get_value(a, 5) == 5.0
    V.vln_count(b, a[1], 7)
    assert np.array_equal(b.view(7), np.log(np.arange(1, 8, dtype=np.float32)))
    V.vadd_count(b, a, a, 100)
    assert np.array_equal(b.view(100), 2 * np.arange(100, dtype=np.float32))


def test_operand_checks(ub):
    ctx, buf = ub
    a = buf.get_buffer_by_byte("float32", 0, 64)
    l1 = standalone_core(core_type="AIC").resource.l1_buf.get_buffer_by_byte("float32", 0, 64)
    with pytest.raises(ConfigError, match="UB tensors"):
        V.vadd(a, a, l1, 1)
    with pytest.raises(ConfigError, match="repeatTimes"):
        V.vexp(a, a, 256)
    with pytest.raises(ConfigError, match="one dtype"):
        V.vadd(a, a, buf.get_buffer_by_byte("float16", 1024, 64), 1)


def test_element_runs():
    assert V.element_runs(np.array([0, 1, 2, 8, 9, 10, 16, 17, 18])) == [(0, 3, 8, 3)]
    assert V.element_runs(np.array([5, 4, 3])) == [(3, 3, 0, 1)]
    assert V.element_runs(np.array([0, 2, 3])) == [(0, 1, 0, 1), (2, 2, 0, 1)]


def test_gm_copies_and_nd2nz(ub):
    ctx, buf = ub
    host = np.arange(100, dtype=np.float16)
    gm = GlobalBuffer.from_array(host, "x", read_only=True).tensor("float16")
    t = buf.get_buffer_by_byte("float16", 0, 256)
    C.data_copy_pad_gm_to_ub(t, gm, C.DataCopyExtParams(3, 10 * 2, 20 * 2, 0, 0))  # rows of 10 every 30
    for r in range(3):
        assert np.array_equal(t[r * 16].view(10), host[r * 30:r * 30 + 10])  # each row at a 32-byte boundary
    out = np.zeros(64, np.float16)
    g_out = GlobalBuffer.from_array(out, "o").tensor("float16")
    C.data_copy_pad_ub_to_gm(g_out, t, C.DataCopyExtParams(2, 10 * 2, 0, 5 * 2, 0))
    assert np.array_equal(out[:10], host[:10]) and np.array_equal(out[15:25], host[30:40]) and not out[10:15].any()
    aic = standalone_core(core_type="AIC")
    l1 = aic.resource.l1_buf.get_buffer_by_byte("float16", 0, 4096)
    q = np.arange(3 * 2 * 20, dtype=np.float16).reshape(3, 2, 20)  # 3 tokens x 2 heads x 20
    g_q = GlobalBuffer.from_array(q, "q", read_only=True).tensor("float16")
    C.data_copy_nd2nz(l1, g_q, C.Nd2NzParams(3, 2, 20, 40, 20, 16, 3, 16))
    from catlass_py.layout import zN

    image = zN.make_layout("float16", 16, 32).read(l1.view(), 6, 32)
    assert np.array_equal(image[:, :20], q.transpose(1, 0, 2).reshape(6, 20))  # row h * 3 + t
    assert not image[:, 20:].any()  # the last 32-byte chunk is zero-filled


def test_pipe_v_hazard_needs_the_barrier():
    """Two dependent vector instructions without ``PipeBarrier<PIPE_V>`` are a hazard; with it they are not."""

    class Kernel:
        aic = None

        def __init__(self, barrier):
            self.barrier = barrier

        def aiv(self, ctx, params):
            ub = ctx.resource.ub_buf
            a, b = ub.get_buffer_by_byte("float32", 0, 64), ub.get_buffer_by_byte("float32", 256, 64)
            V.duplicate(a, 1.0, 1)
            if self.barrier:
                ctx.pipe_barrier(Pipe.V)
            V.vexp(b, a, 1)

    launch(Kernel(True), None, 1, options=LaunchParams(detect_races=True))
    with pytest.raises(RaceError, match="PipeBarrier<PIPE_V>"):
        launch(Kernel(False), None, 1, options=LaunchParams(detect_races=True))
