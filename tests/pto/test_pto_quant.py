"""SET_QUANT_SCALAR / SET_QUANT_VECTOR (seed 001; pto-mx-semantics 3) and the fixpipe path that consumes them:
quant words, register writes, element rules of each mode, the [CONFLICT] options, TPUSH/TPOP and TSTORE.

Words are written out by hand from the fp32 bit patterns; element results are numpy expressions of the
reference's rules.
"""

import ml_dtypes
import numpy as np
import pytest
from pto_helpers import aic, aiv

from catlass_py.arch import GlobalBuffer
from catlass_py.errors import ArgumentError, ConfigError, DeadlockError
from catlass_py.layout import RowMajor
from catlass_py.tile.pto import (
    FixpipeOptions,
    FixpipeParams,
    LayoutMode,
    ReluPreMode,
    Tile,
    TileType,
    TPipe,
    get_quant_scalar,
    quant_scalar_word,
    saturating,
    set_ctrl,
    set_quant_scalar,
    set_quant_vector,
    tile_acc,
    tmov,
    tpop,
    tpush,
    tstore,
)
from catlass_py.tile.quant import QuantMode

BIT46 = 1 << 46


# -- the word ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value, out, ext, word", [
    (0.5, "int8", "sign", 0x0000_4000_3F00_0000),     # 0x3F000000 | bit 46
    (0.5, "uint8", "sign", 0x0000_0000_3F00_0000),    # bit 46 cleared
    (-2.0, "int8", "sign", 0xFFFF_FFFF_C000_0000),    # int32 -> int64 sign-extends 0xC0000000 (NPU headers)
    (-2.0, "int8", "zero", 0x0000_4000_C000_0000),    # uint32 widening (CPU simulator) + bit 46
    (-2.0, "uint8", "sign", 0xFFFF_BFFF_C000_0000),   # sign-extended, then bit 46 cleared
    (-2.0, "uint8", "zero", 0x0000_0000_C000_0000),
    (2.0, "float16", "sign", 0x0000_0000_4000_0000),  # 16-bit output: bit 46 untouched
    (2.0, "bfloat16", "zero", 0x0000_0000_4000_0000),
    (-1.0, "float16", "sign", 0xFFFF_FFFF_BF80_0000),
    (0.5, "float8_e4m3fn", "sign", 0x0000_0000_3F00_0000),  # any 1-byte type: cleared unless int8
    (-1.0, "hifloat8", "sign", 0xFFFF_BFFF_BF80_0000),
])
def test_set_quant_scalar_words(value, out, ext, word):
    assert quant_scalar_word(value, out, extension=ext) == word


def test_words_agree_for_non_negative_scales():
    for v in (0.0, 1.0, 3.25, 1e-3):
        for out in ("int8", "uint8", "float16"):
            assert quant_scalar_word(v, out) == quant_scalar_word(v, out, extension="zero")


def test_set_quant_scalar_writes_quant_pre():
    core = aic()
    with pytest.raises(ConfigError, match="QUANT_PRE register was never written"):
        get_quant_scalar(core)
    w = set_quant_scalar(0.5, "int8", ctx=core)
    assert w == 0x0000_4000_3F00_0000 and core.registers["QUANT_PRE"] == w == get_quant_scalar(core)
    assert set_quant_scalar(2.0, "float16") == 0x4000_0000  # no core: only the word
    with pytest.raises(ArgumentError, match="extension"):
        quant_scalar_word(1.0, "int8", extension="both")


def test_set_quant_vector_fpc_and_rules():
    core = aic()
    fp = Tile.of("ND", TileType.Scaling, "uint64", 1, 16).assign(core, 256)
    assert set_quant_vector(fp) == (256 >> 7) << 8 == 0x200
    assert core.registers["FPC"] == 0x200
    with pytest.raises(ConfigError, match="128-byte boundary"):
        set_quant_vector(Tile.of("ND", TileType.Scaling, "uint64", 1, 16).assign(core, 32))
    with pytest.raises(ConfigError, match="TileType::Scaling"):
        set_quant_vector(Tile.of("ND", TileType.Mat, "uint64", 1, 16).assign(core, 0))


def test_ctrl48_polarity_conflict():
    core = aic()
    assert saturating(core) and not saturating(core, "cpu_sim")  # unwritten CTRL reads 0
    set_ctrl(core, 1 << 48)
    assert not saturating(core) and saturating(core, "cpu_sim")


# -- element rules through TMOV Acc -> Vec ------------------------------------------------------------------


def _run(x, dst_dtype, word=None, *, relu=ReluPreMode.NoRelu, options=FixpipeOptions(), ctrl=None):
    cube, v = aic(), aiv()
    if ctrl is not None:
        set_ctrl(cube, ctrl)
    acc = tile_acc(str(x.dtype), 16, 32).assign(cube, 0)
    acc.write(x)
    from catlass_py.numerics import get_dtype

    cols = 32 if get_dtype(dst_dtype).bits >= 8 else 64
    dst = Tile.of("ND", TileType.Vec, dst_dtype, 16, cols).assign(v, 0)
    tmov(dst, acc, pre_quant_scalar=word, relu=relu, options=options)
    return dst.read(16, 32)


def _grid(values, dtype=np.float32):
    x = np.zeros((16, 32), dtype)
    v = np.asarray(values, dtype)
    x.reshape(-1)[: v.size] = v
    return x


def test_b8_offset_and_sign_bit():
    x = _grid([300, -300, 10.4, 2.5, -0.5, 126.0])
    word = quant_scalar_word(1.0, "int8") | (5 << 37)  # offset 5, signed
    got = _run(x, "int8", word).reshape(-1)[:6]
    # t = clamp(rint(x), -256, 255) + 5, then int8 saturation
    assert got.tolist() == [127, -128, 15, 7, 5, 127]
    x = _grid([-10, 254.6, 100.5, 0.0])
    word = quant_scalar_word(1.0, "uint8") | (3 << 37)  # bit 46 = 0 -> [0, 255]
    got = _run(x, "uint8", word).reshape(-1)[:4]
    assert got.tolist() == [0, 255, 103, 3]


def test_int32_req8_scale_and_offset():
    x = _grid([1000, -1000, 7, -7], np.int32)
    word = quant_scalar_word(0.25, "int8") | (2 << 37)
    got = _run(x, "int8", word).reshape(-1)[:4]
    assert got.tolist() == [127, -128, 2 + 2, -2 + 2]  # rint(1.75) = 2, rint(-1.75) = -2


def test_m1_truncation_default_and_fp32_option():
    s = np.float32(1 + 2.0**-11)  # mantissa bit 12: below the 10 bits M1 keeps
    x = _grid([1.0, 3.0])
    word = quant_scalar_word(float(s), "float32")
    got = _run(x, "float32", word).reshape(-1)[:2]
    assert got.tolist() == [1.0, 3.0]  # M1 = 1.0
    got = _run(x, "float32", word, options=FixpipeOptions(scalar_scale="fp32")).reshape(-1)[:2]
    assert got.tolist() == [float(s), float(np.float32(3.0) * s)]


def test_f16_pre_saturation_follows_ctrl48():
    x = _grid([1e6, -1e6, np.nan, 1.5])
    word = quant_scalar_word(1.0, "float16")
    sat = _run(x, "float16", word).reshape(-1)[:4]
    assert sat.tolist() == [65504.0, -65504.0, 0.0, 1.5]
    nosat = _run(x, "float16", word, ctrl=1 << 48).reshape(-1)[:4]
    assert np.isinf(nosat[0]) and np.isinf(nosat[1]) and np.isnan(nosat[2]) and nosat[3] == 1.5
    cpu = _run(x, "float16", word, options=FixpipeOptions(ctrl48_polarity="cpu_sim")).reshape(-1)[:4]
    assert np.isinf(cpu[0])  # CPU-simulator polarity: CTRL[48] = 0 does not saturate


def test_bf16_fp32_fp8_and_hif8_pre_modes():
    x = _grid([1.0 + 2.0**-9, -3.0, np.nan])
    got = _run(x, "bfloat16", quant_scalar_word(2.0, "bfloat16")).reshape(-1)[:3]
    assert got.astype(np.float32).tolist() == [2.0, -6.0, 0.0]  # 2 + 2^-8 ties to even in bf16; NaN -> 0
    x = _grid([500.0, 3.3, -0.01, np.nan])
    got = _run(x, "float8_e4m3fn", quant_scalar_word(1.0, "float8_e4m3fn")).reshape(-1)[:4]
    assert got.astype(np.float32).tolist() == [448.0, 3.25, -0.009765625, 0.0]
    x = _grid([14.0, 14.5, 1e9])
    got = _run(x, "hifloat8", quant_scalar_word(1.0, "hifloat8")).reshape(-1)[:3]
    # HiF8 14 = 2^3 * 1.75: sign 0, dot 01, exponent bits 0 1, mantissa 110 -> 0x2E; 14.5 ties away -> 15 (0x2F);
    # saturating overflow -> the largest finite 32768 (0x6E)
    assert got.tolist() == [0x2E, 0x2F, 0x6E]


def test_relu_acts_on_the_scaled_value():
    x = _grid([4.0, -4.0])
    word = quant_scalar_word(-0.5, "float16")
    got = _run(x, "float16", word, relu=ReluPreMode.NormalRelu).reshape(-1)[:2]
    assert got.tolist() == [0.0, 2.0]  # relu(4 * -0.5) = 0, relu(-4 * -0.5) = 2


def test_tmov_scalar_form_needs_no_earlier_register_write_but_tpush_does():
    cube = aic()
    acc = tile_acc("int32", 16, 16).assign(cube, 0)
    acc.write(np.ones((16, 16), np.int32))
    pipe = TPipe("float16", depth=1)
    with pytest.raises(ConfigError, match="QUANT_PRE register was never written"):
        tpush(pipe, acc, FixpipeParams(quant=QuantMode.DEQF16))


# -- TPUSH / TPOP (tpushpop_fixpipe goldens) ------------------------------------------------------------


def test_tpush_tpop_cast_f322f16():
    cube, v = aic(), aiv()
    x = np.linspace(-8, 8, 16 * 16).astype(np.float32).reshape(16, 16) / 3
    acc = tile_acc("float32", 16, 16).assign(cube, 0)
    acc.write(x)
    pipe = TPipe("float16", depth=2, name="c2v")
    tpush(pipe, acc)
    assert len(pipe) == 1
    dst = Tile.of("ND", TileType.Vec, "float16", 16, 16).assign(v, 0)
    tpop(pipe, dst)
    np.testing.assert_array_equal(dst.read(), x.astype(np.float16))
    assert len(pipe) == 0


def test_tpush_deqf16_scalar_two():
    cube, v = aic(), aiv()
    x = (np.arange(256, dtype=np.int32).reshape(16, 16) - 128) * 3
    acc = tile_acc("int32", 16, 16).assign(cube, 0)
    acc.write(x)
    set_quant_scalar(2.0, "float16", ctx=cube)
    pipe = TPipe("float16")
    tpush(pipe, acc, FixpipeParams(quant=QuantMode.DEQF16))
    dst = Tile.of("ND", TileType.Vec, "float16", 16, 16).assign(v, 0)
    tpop(pipe, dst)
    np.testing.assert_array_equal(dst.read(), (x * 2).astype(np.float16))


def test_tpush_vdeqf16_per_column_words():
    cube, v = aic(), aiv()
    x = (np.arange(256, dtype=np.int32).reshape(16, 16) - 100) * 11
    acc = tile_acc("int32", 16, 16).assign(cube, 0)
    acc.write(x)
    m1 = np.float32(2.0) ** -np.arange(16, dtype=np.float32)
    fp = Tile.of("ND", TileType.Scaling, "uint64", 1, 16).assign(cube, 0)
    fp.write(m1.view(np.uint32).astype(np.uint64)[None, :])
    set_quant_vector(fp)
    pipe = TPipe("float16")
    tpush(pipe, acc, FixpipeParams(quant=QuantMode.VDEQF16))
    dst = Tile.of("ND", TileType.Vec, "float16", 16, 16).assign(v, 0)
    tpop(pipe, dst)
    np.testing.assert_array_equal(dst.read(), np.clip(x * m1[None, :], -65504, 65504).astype(np.float16))


def test_tpush_tpop_rules():
    cube, v = aic(), aiv()
    acc = tile_acc("float32", 16, 16).assign(cube, 0)
    acc.write(np.zeros((16, 16), np.float32))
    pipe = TPipe("float16", depth=1)
    with pytest.raises(DeadlockError, match="empty"):
        tpop(pipe, Tile.of("ND", TileType.Vec, "float16", 16, 16).assign(v, 0))
    tpush(pipe, acc, FixpipeParams(layout=LayoutMode.NZ2DN))
    with pytest.raises(DeadlockError, match="no free slot"):
        tpush(pipe, acc)
    with pytest.raises(ConfigError, match="must be DN"):
        tpop(pipe, Tile.of("ND", TileType.Vec, "float16", 16, 16).assign(v, 0))
    tpop(pipe, Tile.of("DN", TileType.Vec, "float16", 16, 16).assign(v, 0))
    with pytest.raises(ConfigError, match="does not convert float32 to float16"):
        tpush(pipe, acc, FixpipeParams(quant=QuantMode.REQ8))
    with pytest.raises(ConfigError, match="sub_block_id"):
        FixpipeParams(sub_block_id=2)


# -- TSTORE through the fixpipe --------------------------------------------------------------------------


def test_tstore_acc_cast_and_quant():
    cube = aic()
    x = np.linspace(-100, 100, 16 * 32).astype(np.float32).reshape(16, 32)
    acc = tile_acc("float32", 16, 32).assign(cube, 0)
    acc.write(x)
    acc.set_valid(10, 20)
    host = np.zeros((10, 64), ml_dtypes.bfloat16)
    gm = GlobalBuffer.from_array(host, "out").tensor("bfloat16")
    tstore(gm, RowMajor(10, 20, 64), acc)
    np.testing.assert_array_equal(host[:, :20], x[:10, :20].astype(ml_dtypes.bfloat16))
    assert (host[:, 20:].astype(np.float32) == 0).all()
    host8 = np.zeros((10, 20), np.int8)
    gm8 = GlobalBuffer.from_array(host8, "q").tensor("int8")
    tstore(gm8, RowMajor(10, 20), acc, pre_quant_scalar=quant_scalar_word(1.0, "int8"))
    np.testing.assert_array_equal(host8, np.clip(np.rint(x[:10, :20]), -128, 127).astype(np.int8))
    assert cube.registers["QUANT_PRE"] == quant_scalar_word(1.0, "int8")
