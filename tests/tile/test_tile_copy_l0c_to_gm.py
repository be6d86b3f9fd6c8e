"""CopyL0CToGm, the fixpipe store (quant words and element rules of the PTO MX semantics)."""

import struct

import ml_dtypes
import numpy as np
import pytest

from catlass_py.arch import ATLAS_A2 as A2
from catlass_py.arch import GlobalBuffer, standalone_core
from catlass_py.errors import ConfigError
from catlass_py.gemm import GemmType
from catlass_py.layout import ColumnMajor, RowMajor, zN
from catlass_py.tile import CopyL0CToGm, QuantMode, ScaleGranularity

NO, PT, PC = ScaleGranularity.NO_QUANT, ScaleGranularity.PER_TENSOR, ScaleGranularity.PER_CHANNEL
SENT = 0xC3


def rup(a, b):
    return -(-a // b) * b


def l0c_off(r, c, rows_pad):
    return (r // 16) * 256 + (c // 16) * rows_pad * 16 + (r % 16) * 16 + c % 16


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f32_from_bits(b: int) -> np.float32:
    return np.frombuffer(struct.pack("<I", b & 0xFFFFFFFF), np.float32)[0]


def m1(x: float) -> np.float32:
    """The fixpipe's M1 scale: fp32 bits [31:13] kept, bits [12:0] cleared."""
    return f32_from_bits(f32_bits(x) & 0xFFFFE000)


# --- quant-mode table (CATLASS CopyL0CToGmQuantMode<AtlasA2, ...>) -------------------

TABLE = [
    ("float32", "float32", NO, QuantMode.NoQuant),
    ("float32", "float16", NO, QuantMode.F322F16),
    ("float32", "float16", PT, QuantMode.F322F16),
    ("float32", "bfloat16", NO, QuantMode.F322BF16),
    ("float32", "bfloat16", PT, QuantMode.F322BF16),
    ("float32", "int8", PT, QuantMode.QF322B8_PRE),
    ("float32", "int8", PC, QuantMode.VQF322B8_PRE),
    ("float32", "uint8", PT, QuantMode.QF322B8_PRE),
    ("float32", "uint8", PC, QuantMode.VQF322B8_PRE),
    ("int32", "int32", NO, QuantMode.NoQuant),
    ("int32", "float16", PT, QuantMode.DEQF16),
    ("int32", "float16", PC, QuantMode.VDEQF16),
    ("int32", "int8", PT, QuantMode.REQ8),
    ("int32", "int8", PC, QuantMode.VREQ8),
    ("int32", "uint8", PT, QuantMode.REQ8),
    ("int32", "uint8", PC, QuantMode.VREQ8),
]


@pytest.mark.parametrize("src,dst,gran,mode", TABLE)
def test_quant_mode_table(src, dst, gran, mode):
    assert CopyL0CToGm(A2, src, GemmType(dst, RowMajor), gran).quant_mode is mode


@pytest.mark.parametrize("src,dst,gran", [
    ("int32", "bfloat16", NO), ("int32", "bfloat16", PT), ("int32", "bfloat16", PC),
    ("int32", "float16", NO), ("int32", "float32", NO), ("float32", "int32", NO),
    ("float32", "float16", PC), ("float32", "float32", PT), ("int32", "int32", PT),
    ("float32", "int8", NO), ("int32", "int8", ScaleGranularity.PER_GROUP),
])
def test_unsupported_combinations_raise_config_error(src, dst, gran):
    with pytest.raises(ConfigError):
        CopyL0CToGm(A2, src, GemmType(dst, RowMajor), gran)


def test_zn_destination_only_without_quant():
    CopyL0CToGm(A2, "int32", GemmType("int32", zN), NO)
    with pytest.raises(ConfigError):
        CopyL0CToGm(A2, "int32", GemmType("float16", zN), PT)
    with pytest.raises(ConfigError):
        CopyL0CToGm(A2, "int32", GemmType("int32", ColumnMajor), NO)


# --- helpers -----------------------------------------------------------------------------------------


class Fix:
    def __init__(self, acc_dtype, m_round, n_round, values):
        """L0C holds ``values`` (m_round x n_round) as a 16x16-fractal zN accumulator."""
        self.ctx = standalone_core(A2, "AIC")
        self.l0c = self.ctx.resource.l0c_buf.get_buffer_by_byte(acc_dtype, 0)
        r, c = np.meshgrid(np.arange(m_round), np.arange(n_round), indexing="ij")
        self.l0c.view()[l0c_off(r, c, m_round)] = values
        self.layout_src = zN.make_layout_in_l0c(m_round, n_round)

    def store(self, dst_dtype, m, n, ld, gran=NO, relu=False, scale=1.0, fb=None, origin=5):
        nbytes = (origin + m * ld + 64) * np.dtype(_np(dst_dtype)).itemsize
        self.gm_raw = GlobalBuffer.empty(nbytes, "C", fill=SENT)
        gm = self.gm_raw.tensor(dst_dtype)
        op = CopyL0CToGm(A2, self.l0c.dtype, GemmType(dst_dtype, RowMajor), gran, relu, scale=scale)
        op(gm[origin], self.l0c, RowMajor(m, n, ld), self.layout_src, scale=fb)
        typed = self.gm_raw.raw.view(_np(dst_dtype))
        out = typed[origin:origin + m * ld].reshape(m, ld)[:, :n].copy()
        mask = np.ones(self.gm_raw.raw.size, bool)
        isz = np.dtype(_np(dst_dtype)).itemsize
        for r in range(m):
            s = (origin + r * ld) * isz
            mask[s:s + n * isz] = False
        assert np.all(self.gm_raw.raw[mask] == SENT), "bytes outside the m x n region were written"
        return out


def _np(name):
    return {"int32": np.int32, "float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16,
            "int8": np.int8, "uint8": np.uint8}[name]


# --- NoQuant -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("m,n,ld", [(16, 16, 16), (37, 21, 40), (1, 1, 3), (128, 256, 300)])
def test_noquant_int32_writes_exactly_m_by_n(m, n, ld):
    rng = np.random.default_rng(m + n)
    mr, nr = rup(m, 16), rup(n, 32)
    vals = rng.integers(-2**31, 2**31, size=(mr, nr), dtype=np.int64).astype(np.int32)
    out = Fix("int32", mr, nr, vals).store("int32", m, n, ld)
    np.testing.assert_array_equal(out, vals[:m, :n])


def test_noquant_float32_bit_exact_including_nan_and_inf():
    rng = np.random.default_rng(2)
    vals = rng.standard_normal((32, 32)).astype(np.float32)
    vals[0, :3] = [np.inf, -np.inf, -0.0]
    out = Fix("float32", 32, 32, vals).store("float32", 20, 30, 31)
    np.testing.assert_array_equal(out.view(np.uint32), vals[:20, :30].view(np.uint32))


def test_relu_noquant_int32():
    rng = np.random.default_rng(3)
    vals = rng.integers(-1000, 1000, size=(16, 16)).astype(np.int32)
    out = Fix("int32", 16, 16, vals).store("int32", 16, 16, 16, relu=True)
    np.testing.assert_array_equal(out, np.maximum(vals, 0))


# --- float casts -------------------------------------------------------------------------------------


def test_f322f16_round_to_nearest_even_and_saturates():
    one = 1.0
    ulp = 2.0**-10
    cases = [
        (one + ulp / 2, 1.0),                      # tie -> even (1.0)
        (one + 3 * ulp / 2, one + 2 * ulp),        # tie -> even (mantissa ...10)
        (one + ulp / 2 + 2.0**-20, one + ulp),     # just above the tie
        (-(one + ulp / 2), -1.0),
        (70000.0, 65504.0), (-1e30, -65504.0),     # saturating conversion
        (2.0**-25, 0.0),                           # half of the smallest subnormal: tie -> 0
    ]
    vals = np.zeros((16, 16), np.float32)
    for i, (x, _) in enumerate(cases):
        vals[0, i] = x
    out = Fix("float32", 16, 16, vals).store("float16", 1, len(cases), len(cases))
    np.testing.assert_array_equal(out[0], np.array([e for _, e in cases], np.float16))
    # and everything else equals numpy's RNE float32 -> float16 (on in-range values)
    rng = np.random.default_rng(4)
    vals = (rng.standard_normal((48, 64)) * 300).astype(np.float32)
    out = Fix("float32", 48, 64, vals).store("float16", 40, 60, 64)
    np.testing.assert_array_equal(out, vals[:40, :60].astype(np.float16))


def test_f322bf16_round_to_nearest_even():
    ulp = 2.0**-7
    cases = [(1 + ulp / 2, 1.0), (1 + 3 * ulp / 2, 1 + 2 * ulp), (1 + ulp / 2 + 2.0**-20, 1 + ulp), (-(1 + ulp / 2), -1.0)]
    vals = np.zeros((16, 16), np.float32)
    for i, (x, _) in enumerate(cases):
        vals[0, i] = x
    out = Fix("float32", 16, 16, vals).store("bfloat16", 1, 4, 4)
    np.testing.assert_array_equal(out[0].astype(np.float32), np.array([e for _, e in cases], np.float32))
    rng = np.random.default_rng(5)
    vals = (rng.standard_normal((32, 32)) * 1e5).astype(np.float32)
    out = Fix("float32", 32, 32, vals).store("bfloat16", 32, 32, 40, gran=PT, scale=3.0)  # scale unused by F322BF16
    np.testing.assert_array_equal(out.view(np.uint16), vals.astype(ml_dtypes.bfloat16).view(np.uint16))


# --- per-tensor dequant / requant ---------------------------------------------------------------------


def test_m1_truncation_drops_low_mantissa_bits():
    assert m1(0.1) == f32_from_bits(0x3DCCC000)
    assert m1(1 + 2.0**-11 + 2.0**-20) == 1.0
    assert m1(-1.5) == -1.5


def test_deqf16_per_tensor_uses_m1_scale():
    scale = 1 + 2.0**-11 + 2.0**-20  # M1 == 1.0: full-precision scale would round 1 up to 1 + 2**-10
    vals = np.zeros((16, 16), np.int32)
    vals[0, :4] = [1, 3, -7, 100000]
    out = Fix("int32", 16, 16, vals).store("float16", 1, 4, 4, gran=PT, scale=scale)
    np.testing.assert_array_equal(out[0], np.array([1, 3, -7, 65504], np.float16))
    # general values: fp16(fp32(x) * M1(scale)) with an RNE fp32 multiply
    rng = np.random.default_rng(6)
    vals = rng.integers(-50000, 50000, size=(32, 48)).astype(np.int32)
    s = 0.0123456789
    out = Fix("int32", 32, 48, vals).store("float16", 30, 40, 41, gran=PT, scale=s)
    want = np.clip(vals[:30, :40].astype(np.float32) * m1(s), -65504, 65504).astype(np.float16)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dst", ["int8", "uint8"])
def test_req8_per_tensor_rounds_half_even_and_saturates(dst):
    vals = np.zeros((16, 32), np.int32)
    xs = [5, 7, -5, -7, 1000, -1000, 3, 0]
    vals[0, :8] = xs
    out = Fix("int32", 16, 32, vals).store(dst, 1, 8, 8, gran=PT, scale=0.5)
    if dst == "int8":
        want = [2, 4, -2, -4, 127, -128, 2, 0]
    else:
        want = [2, 4, 0, 0, 255, 0, 2, 0]
    np.testing.assert_array_equal(out[0], np.array(want, _np(dst)))


def test_qf322b8_per_tensor():
    vals = np.zeros((16, 32), np.float32)
    vals[0, :5] = [1.25, 2.5, -2.5, 300.0, 0.74]
    out = Fix("float32", 16, 32, vals).store("int8", 1, 5, 5, gran=PT, scale=2.0)
    np.testing.assert_array_equal(out[0], np.array([2, 5, -5, 127, 1], np.int8))


def test_negative_per_tensor_scale_keeps_its_sign():
    vals = np.zeros((16, 16), np.int32)
    vals[0, :3] = [2, -4, 1000]
    out = Fix("int32", 16, 16, vals).store("float16", 1, 3, 3, gran=PT, scale=-0.25)
    np.testing.assert_array_equal(out[0], np.array([-0.5, 1.0, -250.0], np.float16))


# --- per-channel (FB quant words) ---------------------------------------------------------------------


def test_vdeqf16_per_channel_words_from_fb():
    m, n = 20, 40
    rng = np.random.default_rng(7)
    vals = rng.integers(-3000, 3000, size=(32, 48)).astype(np.int32)
    vals[0, 0] = 1
    scales = rng.uniform(0.001, 2.0, n).astype(np.float32)
    scales[0] = np.float32(1 + 2.0**-11 + 2.0**-20)
    fix = Fix("int32", 32, 48, vals)
    fb = fix.ctx.resource.fb_buf.get_buffer_by_byte("uint64", 0, n)
    fb.view()[:] = np.array([f32_bits(float(s)) for s in scales], np.uint64)
    out = fix.store("float16", m, n, n + 3, gran=PC, fb=fb)
    m1s = np.array([m1(float(s)) for s in scales], np.float32)
    want = np.clip(vals[:m, :n].astype(np.float32) * m1s[None, :], -65504, 65504).astype(np.float16)
    np.testing.assert_array_equal(out, want)
    assert out[0, 0] == 1.0  # the truncated scale, not 1 + 2**-10


def test_per_channel_without_fb_tensor_raises():
    fix = Fix("int32", 16, 16, np.zeros((16, 16), np.int32))
    with pytest.raises(ConfigError):
        fix.store("float16", 16, 16, 16, gran=PC, fb=None)


def test_vreq8_per_channel():
    vals = np.zeros((16, 32), np.int32)
    vals[0, :4] = [10, 10, 10, -10]
    fix = Fix("int32", 16, 32, vals)
    fb = fix.ctx.resource.fb_buf.get_buffer_by_byte("uint64", 0, 4)
    fb.view()[:] = np.array([f32_bits(s) for s in (0.25, 0.35, 20.0, 0.25)], np.uint64)
    out = fix.store("int8", 1, 4, 4, gran=PC, fb=fb)
    # 2.5 -> 2 (even); 10 * m1(0.35) = 3.4998779 -> 3; 200 -> 127; -2.5 -> -2
    np.testing.assert_array_equal(out[0], np.array([2, 3, 127, -2], np.int8))


def test_relu_with_dequant():
    vals = np.zeros((16, 16), np.int32)
    vals[0, :3] = [-8, 8, 0]
    out = Fix("int32", 16, 16, vals).store("float16", 1, 3, 3, gran=PT, relu=True, scale=0.5)
    np.testing.assert_array_equal(out[0], np.array([0, 4, 0], np.float16))


@pytest.mark.parametrize("dst, m, n", [("float32", 20, 20), ("int32", 16, 9), ("float32", 33, 40)])
def test_nz_destination_receives_whole_fractals(dst, m, n):
    # CFG_NZ stores whole fractals: rows rounded to 16 and columns to the destination's C0 (8 for 32-bit),
    # e.g. a 20 x 20 fp32 store covers 32 x 24 elements of the zN destination.
    acc = "float32" if dst == "float32" else "int32"
    mr, nr = rup(m, 16), rup(n, 16)
    rng = np.random.default_rng(m * n)
    vals = rng.integers(-1000, 1000, size=(mr, nr)).astype(_np(acc))
    fix = Fix(acc, mr, nr, vals)
    layout = zN.make_layout(dst, m, n)
    rows, cols = rup(m, 16), rup(n, 8)
    assert layout.padded_shape == (rows, cols)
    gm = GlobalBuffer.empty(layout.capacity * 4 + 64, "C", fill=SENT)
    CopyL0CToGm(A2, acc, GemmType(dst, zN))(gm.tensor(dst), fix.l0c, layout, fix.layout_src)
    got = layout.get_tile_layout(rows, cols).unpack(gm.raw[: layout.capacity * 4].view(_np(dst)))
    np.testing.assert_array_equal(got, vals[:rows, :cols])
    assert np.all(gm.raw[layout.capacity * 4:] == SENT)
