"""PTO TMOV (seed 000; pto-mx-semantics 2): data paths, ND->NZ / ND->ZN / X->ZZ repacks with the reference's byte
maps, the Acc->Vec/Mat fixpipe forms, and every A2/A3 and Ascend 950 constraint.

Byte-level expectations are re-derived here from the reference text (explicit loops over its worked examples,
or its golden reshape recipes), never from the code under test.
"""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pto_helpers import aic, aiv

from catlass_py.arch import ATLAS_A2, InstructionEvent, Observer
from catlass_py.arch.spec import arch_from_dict
from catlass_py.errors import ConfigError
from catlass_py.tile.pto import (
    FRACTAL_AB,
    FRACTAL_C,
    FRACTAL_MX,
    AccToVecMode,
    CompactMode,
    ReluPreMode,
    Tile,
    TileType,
    quant_scalar_word,
    tile_acc,
    tile_left,
    tile_left_scale,
    tile_right,
    tmov,
    tmov_zz,
    tmov_zz_tmp_bytes,
)

V, M = TileType.Vec, TileType.Mat


def vec(ctx, fmt, dtype, rows, cols, off=0, **kw):
    return Tile.of(fmt, V, dtype, rows, cols, **kw).assign(ctx, off)


# -- ND -> NZ ---------------------------------------------------------------------------------------------


def test_nd_to_nz_fp8_matches_golden_recipe_and_keeps_rows_past_valid():
    core = aiv()
    src = vec(core, "ND", "float8_e4m3fn", 32, 64, valid=(20, 64))
    data = np.arange(20 * 64, dtype=np.float32).reshape(20, 64) % 200
    src.write(data.astype(ml_dtypes.float8_e4m3fn))
    dst = vec(core, "NZ", "float8_e4m3fn", 32, 64, off=8192, valid=(20, 64))
    dst.tensor.view().view(np.uint8)[:] = 0xAB  # TMovToVecNd2Nz stores the 20 valid rows only
    tmov(dst, src)
    padded = np.full((32, 64), 0xAB, np.uint8)
    padded[:20] = data.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    want = padded.reshape(32, 2, 32).transpose(1, 0, 2).reshape(-1)  # golden nd2nz: reshape(M, N/32, 32).T(1,0,2)
    np.testing.assert_array_equal(dst.tensor.view().view(np.uint8), want)
    assert dst.tensor.view().view(np.uint8)[1057] == padded[1, 33]  # the reference's (1, 33) -> 1057


def test_nd_to_nz_row_plus_one_has_a_dead_row_per_column_block():
    core = aiv()
    src = vec(core, "ND", "float16", 32, 32)
    data = np.arange(32 * 32, dtype=np.float16).reshape(32, 32)
    src.write(data)
    dst = vec(core, "NZ", "float16", 33, 32, off=4096, valid=(32, 32), compact=CompactMode.RowPlusOne)
    tmov(dst, src)
    flat = dst.tensor.view()
    for r, c in ((0, 0), (5, 7), (31, 15), (0, 16), (31, 31)):
        assert flat[(c // 16) * 33 * 16 + r * 16 + c % 16] == data[r, c]
    np.testing.assert_array_equal(dst.read(), data)


def test_nd_to_zn_fp16_matches_golden_recipe():
    core = aiv()
    k, n = 32, 48
    src = vec(core, "ND", "float16", k, n)
    data = (np.arange(k * n) % 977).astype(np.float16).reshape(k, n)
    src.write(data)
    dst = vec(core, "ZN", "float16", k, n, off=8192)
    tmov(dst, src)
    k0 = 16
    want = data.reshape(k // k0, k0, n // 16, 16).transpose(0, 2, 3, 1).reshape(-1)  # D[k1,n1,j,i] = S[k1K0+i][n1*16+j]
    np.testing.assert_array_equal(dst.tensor.view()[: k * n], want)


def test_nd_to_zn_alignment_rules():
    core = aiv()
    src = vec(core, "ND", "float16", 32, 32, valid=(24, 32))
    dst = vec(core, "ZN", "float16", 32, 32, off=4096, valid=(24, 32))
    with pytest.raises(ConfigError, match="K % K0 == 0"):
        tmov(dst, src)
    src.set_valid(32, 24)
    dst.set_valid(32, 24)
    with pytest.raises(ConfigError, match="N % 16 == 0"):
        tmov(dst, src)


def test_repack_rejects_unsupported_dtype():
    core = aiv()
    src = vec(core, "ND", "int16", 16, 16)
    dst = vec(core, "NZ", "int16", 16, 16, off=1024)
    with pytest.raises(ConfigError, match="unsupported data type int16"):
        tmov(dst, src)


@settings(max_examples=40, deadline=None)
@given(dtype=st.sampled_from(["float16", "float32", "int8", "float8_e5m2", "bfloat16"]), fmt=st.sampled_from(["NZ", "ZN"]),
       rb=st.integers(1, 3), cb=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_nd_repack_round_trips(dtype, fmt, rb, cb, seed):
    core = aiv()
    probe = Tile.of(fmt, M, dtype, 64, 64)
    ir, ic = probe.inner
    rows, cols = rb * ir, cb * ic
    rng = np.random.default_rng(seed)
    from catlass_py.numerics import get_dtype

    npd = get_dtype(dtype).numpy
    data = rng.integers(-100, 100, size=(rows, cols)).astype(np.float32).astype(npd)
    c0 = get_dtype(dtype).c0
    wide = -(-cols // c0) * c0  # ND rows must be whole 32-byte blocks; the valid region is narrower
    src = vec(core, "ND", dtype, rows, wide, valid=(rows, cols))
    src.write(data)
    mid = vec(core, fmt, dtype, rows, cols, off=65536)
    tmov(mid, src)
    back = vec(core, "ND", dtype, rows, wide, off=131072, valid=(rows, cols))
    tmov(back, mid)
    np.testing.assert_array_equal(back.read().view(np.uint8), data.view(np.uint8))


# -- X -> ZZ ----------------------------------------------------------------------------------------------


def _zz_tiles(core, src_shape, dst_shape, tmp_bytes, dtype="float8_e8m0fnu"):
    src = vec(core, "ND", dtype, *src_shape)
    dst = Tile.of("ZZ", V, dtype, *dst_shape, fractal=FRACTAL_MX).assign(core, 65536)
    tmp = vec(core, "ND", dtype, 1, -(-tmp_bytes // 32) * 32, off=131072)  # ND rows are whole 32-byte blocks
    return src, dst, tmp


def _dense(tile, e):
    """Write exponents row after row into the first bytes of a (flat) source tile, as TQUANT leaves them."""
    tile.tensor.view().view(np.uint8)[: e.size] = e.reshape(-1)


def test_nd_to_zz_worked_32x4_byte_map():
    core = aiv()
    e = ((np.arange(32 * 4).reshape(32, 4) * 7 + 3) % 251).astype(np.uint8)
    src, dst, tmp = _zz_tiles(core, (1, 128), (32, 4), 96)  # a flat 1 x (rows * G) source, read densely
    _dense(src, e)
    tmov_zz(dst, src, tmp)
    raw = dst.tensor.view().view(np.uint8)[:128]
    want = []
    for rows, groups in ((range(0, 16), (0, 1)), (range(0, 16), (2, 3)), (range(16, 32), (0, 1)), (range(16, 32), (2, 3))):
        for r in rows:  # "bytes 0..31 = E[0][0], E[0][1], E[1][0], E[1][1], ..., E[15][0], E[15][1]"
            want += [e[r, groups[0]], e[r, groups[1]]]
    np.testing.assert_array_equal(raw, np.array(want, np.uint8))
    assert raw[99] == e[17, 3]
    np.testing.assert_array_equal(dst.read().view(np.uint8), e)  # read back through the [16, 2]-box ZZ tile


def test_dn_to_zz_worked_4x32_byte_map():
    core = aiv()
    e = ((np.arange(4 * 32).reshape(4, 32) * 5 + 1) % 253).astype(np.uint8)
    src, dst, tmp = _zz_tiles(core, (4, 32), (32, 4), 32)
    src.write(e.view(ml_dtypes.float8_e8m0fnu))
    tmov_zz(dst, src, tmp, grp_axis=0)
    raw = dst.tensor.view().view(np.uint8)[:128]
    want = []
    for rows, cols in (((0, 1), range(0, 16)), ((2, 3), range(0, 16)), ((0, 1), range(16, 32)), ((2, 3), range(16, 32))):
        for c in cols:  # "bytes 0..31 = E[0][0], E[1][0], E[0][1], E[1][1], ..., E[0][15], E[1][15]"
            want += [e[rows[0], c], e[rows[1], c]]
    np.testing.assert_array_equal(raw, np.array(want, np.uint8))
    assert raw[99] == e[3, 17] and raw[32] == e[2, 0]
    np.testing.assert_array_equal(dst.read().view(np.uint8), e.T)  # = ND->ZZ of the transpose


def test_nd_to_zz_pads_rows_to_16_with_zeros():
    core = aiv()
    e = np.arange(1, 20 * 2 + 1, dtype=np.uint8).reshape(20, 2)
    src, dst, tmp = _zz_tiles(core, (1, 64), (32, 2), tmov_zz_tmp_bytes(20, 64), dtype="uint8")
    src.tensor.view()[:] = 0xCC  # stale bytes after the 40 exponents: the instruction zeroes them first
    _dense(src, e)
    dst.set_valid(20, 2)
    dst.tensor.view()[:] = 0xEE
    tmov_zz(dst, src, tmp)
    raw = dst.tensor.view()[:64]
    assert (raw[32 + 4 * 2: 64] == 0).all()  # rows 20..31 of the second row block
    np.testing.assert_array_equal(raw[32: 32 + 8], e[16:20].reshape(-1))
    assert (src.tensor.view()[40:64] == 0).all() and (src.tensor.view()[:40] == e.reshape(-1)).all()
    idx = tmp.tensor.view()[:68].view(np.uint16)  # gather indices: 16 bases i*G/2, G/2 per row block, 16-entry tail
    np.testing.assert_array_equal(idx, np.r_[np.arange(16), 0, 16, np.arange(16) + 16])


def test_nd_to_zz_source_option_layout_reads_through_the_tile():
    """source='layout' (the pre-PTO-code reading): E[r][g] at r * Cols + g of the source tile."""
    core = aiv()
    e = ((np.arange(32 * 4).reshape(32, 4) * 7 + 3) % 251).astype(np.uint8)
    src, dst, tmp = _zz_tiles(core, (32, 32), (32, 4), 96, dtype="uint8")
    src.set_valid(32, 4)
    src.write(e)
    tmov_zz(dst, src, tmp, source="layout")
    np.testing.assert_array_equal(dst.read(), e)
    with pytest.raises(ConfigError, match="the source is read densely"):
        tmov_zz(dst, Tile.of("ND", V, "uint8", 1, 32).assign(core, 196608), tmp)  # 32 bytes < 32 rows x 4 groups
    with pytest.raises(ConfigError, match="source must be one of"):
        tmov_zz(dst, src, tmp, source="strided")
    src.set_valid(16, 4)
    with pytest.raises(ConfigError, match="exceeds the source's 16x4"):
        tmov_zz(dst, src, tmp, source="layout")


def test_zz_tmp_size_rule():
    assert tmov_zz_tmp_bytes(128, 256) == 128  # the reference's M=128, N=256 example
    assert tmov_zz_tmp_bytes(32, 128) == 72
    assert tmov_zz_tmp_bytes(17, 64) == (32 + 2 * 1) * 2
    with pytest.raises(ConfigError, match="N % 64"):
        tmov_zz_tmp_bytes(16, 96)


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 40), pairs=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_nd_to_zz_round_trip_and_formula(rows, pairs, seed):
    core = aiv()
    g = 2 * pairs
    e = np.random.default_rng(seed).integers(0, 256, size=(rows, g)).astype(np.uint8)
    pr = -(-rows // 16) * 16
    src, dst, tmp = _zz_tiles(core, (1, -(-pr * g // 32) * 32), (pr, g), tmov_zz_tmp_bytes(rows, 32 * g), dtype="uint8")
    _dense(src, e)
    dst.set_valid(rows, g)
    tmov_zz(dst, src, tmp)
    raw = dst.tensor.view()
    r, c = np.meshgrid(np.arange(rows), np.arange(g), indexing="ij")
    offs = ((r // 16) * (g // 2) + c // 2) * 32 + (r % 16) * 2 + c % 2  # pto-mx-semantics 2.6
    np.testing.assert_array_equal(raw[offs], e)
    np.testing.assert_array_equal(dst.read(), e)


@settings(max_examples=40, deadline=None)
@given(hpairs=st.integers(1, 4), nb=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_dn_to_zz_round_trip_and_formula(hpairs, nb, seed):
    core = aiv()
    h, n = 2 * hpairs, 16 * nb
    e = np.random.default_rng(seed).integers(0, 256, size=(h, n)).astype(np.uint8)
    src, dst, tmp = _zz_tiles(core, (h, 32 * -(-n // 32)), (n, h), 32, dtype="uint8")
    src.set_valid(h, n)
    _dense(src, e)  # DN rows are read N bytes apart (the valid column count), whatever the static Cols
    tmov_zz(dst, src, tmp, grp_axis=0)
    raw = dst.tensor.view()
    hh, nn = np.meshgrid(np.arange(h), np.arange(n), indexing="ij")
    offs = ((nn // 16) * (h // 2) + hh // 2) * 32 + (nn % 16) * 2 + hh % 2
    np.testing.assert_array_equal(raw[offs], e)
    np.testing.assert_array_equal(dst.read(), e.T)


def test_zz_constraints():
    core = aiv()
    src, dst, tmp = _zz_tiles(core, (32, 32), (32, 4), 8, dtype="uint8")
    with pytest.raises(ConfigError, match=r"tmp holds 32 bytes but needs .* = 72"):
        tmov_zz(dst, src, tmp)
    src2, dst2, tmp2 = _zz_tiles(core, (32, 32), (32, 4), 200, dtype="uint8")
    dst2.set_valid(32, 3)
    with pytest.raises(ConfigError, match="N % 64"):
        tmov_zz(dst2, src2, tmp2)
    s, d, t = _zz_tiles(core, (3, 32), (32, 4), 32, dtype="uint8")
    with pytest.raises(ConfigError, match="M % 64"):
        tmov_zz(d, s, t, grp_axis=0)
    s, d, t = _zz_tiles(core, (2, 32), (24, 2), 32, dtype="uint8")
    s.set_valid(2, 24)
    with pytest.raises(ConfigError, match="multiple of 16"):
        tmov_zz(d, s, t, grp_axis=0)
    bad = vec(core, "ND", "int8", 1, 256, off=160000 // 32 * 32)
    with pytest.raises(ConfigError, match="must all be the same"):
        tmov_zz(dst, src, bad)
    s8 = vec(core, "ND", "int8", 32, 32, off=170000 // 32 * 32)
    d8 = Tile.of("ZZ", V, "int8", 32, 4, fractal=FRACTAL_MX).assign(core, 180000 // 32 * 32)
    with pytest.raises(ConfigError, match="uint8, hifloat8 or float8_e8m0"):
        tmov_zz(d8, s8, bad)
    nz = Tile.of("NZ", V, "uint8", 32, 32).assign(core, 200000 // 32 * 32)
    with pytest.raises(ConfigError, match="must be ZZ"):
        tmov_zz(nz, src, tmp)
    with pytest.raises(ConfigError, match="grp_axis"):
        tmov_zz(dst, src, tmp, grp_axis=2)
    cube = aic()
    l1 = Tile.of("ZZ", M, "uint8", 32, 4, fractal=FRACTAL_MX).assign(cube, 0)
    with pytest.raises(ConfigError, match="different archs|must be in UB"):
        tmov_zz(l1, src, tmp)
    a2 = aiv(ATLAS_A2)
    s, d, t = _zz_tiles(a2, (32, 32), (32, 4), 200, dtype="uint8")
    with pytest.raises(ConfigError, match="only on Ascend 950"):
        tmov_zz(d, s, t)


# -- Mat -> L0 / Bias / Scaling and pair rules --------------------------------------------------------------


def test_mat_to_left_and_right_are_logical_copies():
    core = aic()
    data = (np.arange(32 * 64) % 251 - 125).astype(np.int8).reshape(32, 64)
    a1 = Tile.of("NZ", M, "int8", 32, 64).assign(core, 0)
    a1.write(data)
    a0 = tile_left("int8", 32, 64).assign(core, 0)
    tmov(a0, a1)
    np.testing.assert_array_equal(a0.read(), data)
    b1 = Tile.of("NZ", M, "int8", 32, 64).assign(core, 4096)  # row-major B in L1 -> ZN in L0B (transposing load)
    b1.write(data)
    b0 = tile_right("int8", 32, 64).assign(core, 0)
    tmov(b0, b1)
    np.testing.assert_array_equal(b0.read(), data)
    flat = b0.tensor.view()
    assert flat[(5 // 32) * 64 * 32 + (17 // 16) * 512 + (17 % 16) * 32 + 5 % 32] == data[5, 17]  # ZN formula


def test_mat_to_bias_widens_half_and_bf16():
    core = aic()
    for dt, off in (("float16", 0), ("bfloat16", 512)):
        src = Tile.of("ND", M, dt, 1, 32).assign(core, off)
        vals = np.linspace(-3, 3, 32).astype(ml_dtypes.bfloat16 if dt == "bfloat16" else np.float16)
        src.write(vals[None, :])
        dst = Tile.of("ND", TileType.Bias, "float32", 1, 32).assign(core, 0)
        tmov(dst, src)
        np.testing.assert_array_equal(dst.read()[0], vals.astype(np.float32))


@pytest.mark.parametrize("src_dt, dst_dt, cols, rows, rule", [
    ("int8", "int32", 32, 1, "not a bias-table conversion"),
    ("float32", "float32", 32, 2, "1 row"),
    ("float32", "float32", 8, 1, "64-byte aligned"),
])
def test_mat_to_bias_rules_950(src_dt, dst_dt, cols, rows, rule):
    core = aic()
    src = Tile.of("ND", M, src_dt, rows, cols).assign(core, 0)
    dst = Tile.of("ND", TileType.Bias, dst_dt, rows, cols).assign(core, 0)
    with pytest.raises(ConfigError, match=rule):
        tmov(dst, src)


def test_bias_table_limit_4096_bytes():
    big = arch_from_dict({"base": "Ascend950", "bt_size": 8192})
    core = aic(big)
    src = Tile.of("ND", M, "float32", 1, 1040).assign(core, 0)
    dst = Tile.of("ND", TileType.Bias, "float32", 1, 1040).assign(core, 0)
    with pytest.raises(ConfigError, match="exceeds the 4096-byte bias table"):
        tmov(dst, src)


def test_mat_to_scaling_rules():
    core = aic()
    src = Tile.of("ND", M, "uint64", 1, 16).assign(core, 0)
    words = np.arange(16, dtype=np.uint64) * np.uint64(0x1_0000_0001)
    src.write(words[None, :])
    dst = Tile.of("ND", TileType.Scaling, "uint64", 1, 16).assign(core, 0)
    tmov(dst, src)
    np.testing.assert_array_equal(dst.read()[0], words)
    small = Tile.of("ND", TileType.Scaling, "uint64", 1, 8).assign(core, 0)
    with pytest.raises(ConfigError, match="128-byte aligned"):
        tmov(small, Tile.of("ND", M, "uint64", 1, 8).assign(core, 0))
    with pytest.raises(ConfigError, match="uint64/int64"):
        tmov(Tile.of("ND", TileType.Scaling, "int32", 1, 32).assign(core, 0),
             Tile.of("ND", M, "int32", 1, 32).assign(core, 0))


def test_pair_and_fractal_rules_950():
    core = aic()
    with pytest.raises(ConfigError, match="not a supported tile pair"):
        tmov(Tile.of("ND", M, "float16", 16, 16).assign(core, 0), tile_left("float16", 16, 16).assign(core, 0))
    a1 = Tile.of("NZ", M, "float16", 32, 32).assign(core, 0)
    with pytest.raises(ConfigError, match="shape of destination and source"):
        tmov(tile_left("float16", 32, 16).assign(core, 0), a1)
    with pytest.raises(ConfigError, match="Left is NZ"):
        tmov(Tile.of("ZZ", TileType.Left, "float16", 32, 32).assign(core, 0), a1)
    with pytest.raises(ConfigError, match="Right is ZN"):
        tmov(Tile.of("NZ", TileType.Right, "float16", 32, 32).assign(core, 0), a1)
    nn = Tile.of("NN", M, "float16", 32, 32).assign(core, 4096)
    with pytest.raises(ConfigError, match="invalid source fractal NN"):
        tmov(tile_left("float16", 32, 32).assign(core, 0), nn)
    i32 = Tile.of("NZ", M, "int32", 32, 32).assign(core, 8192)
    with pytest.raises(ConfigError, match="unsupported data type int32"):
        tmov(Tile.of("NZ", TileType.Left, "int32", 32, 32).assign(core, 0), i32)
    with pytest.raises(ConfigError, match="data types must be the same"):
        tmov(tile_left("bfloat16", 32, 32).assign(core, 0), a1)
    sc = Tile.of("ZZ", M, "uint8", 32, 4, fractal=FRACTAL_MX).assign(core, 16384)
    with pytest.raises(ConfigError, match="float8_e8m0"):
        tmov(Tile.of("ZZ", TileType.ScaleLeft, "uint8", 32, 4, fractal=FRACTAL_MX).assign(core, 0), sc)
    e8 = Tile.of("NN", M, "float8_e8m0fnu", 4, 32, fractal=FRACTAL_MX).assign(core, 16384)
    with pytest.raises(ConfigError, match="ScaleLeft tile is ZZ"):
        tmov(Tile.of("NN", TileType.ScaleLeft, "float8_e8m0fnu", 4, 32, fractal=FRACTAL_MX).assign(core, 0), e8)
    with pytest.raises(ConfigError, match="only for Acc sources"):
        tmov(tile_left("float16", 32, 32).assign(core, 0), a1, relu=ReluPreMode.NormalRelu)


def test_pair_rules_a2():
    core = aic(ATLAS_A2)
    v = aiv(ATLAS_A2)
    with pytest.raises(ConfigError, match=r"Atlas A2/A3\): Vec -> Mat is not a supported tile pair"):
        tmov(Tile.of("NZ", M, "float16", 16, 16).assign(core, 0), vec(v, "ND", "float16", 16, 16))
    src = Tile.of("ND", M, "bfloat16", 1, 32).assign(core, 0)
    with pytest.raises(ConfigError, match="not a bias-table conversion"):  # bf16 -> float is Ascend 950 only
        tmov(Tile.of("ND", TileType.Bias, "float32", 1, 32).assign(core, 0), src)
    half = Tile.of("ND", M, "float16", 1, 16).assign(core, 0)
    with pytest.raises(ConfigError, match="Src Cols"):  # 32 bytes of source: A2 checks the source width
        tmov(Tile.of("ND", TileType.Bias, "float32", 1, 16).assign(core, 0), half)
    a1 = Tile.of("NZ", M, "float16", 32, 32).assign(core, 0)
    with pytest.raises(ConfigError, match="ZZ"):
        tmov(Tile.of("NZ", TileType.Left, "float16", 32, 32).assign(core, 0), a1)
    left = tile_left("float16", 32, 32, arch=ATLAS_A2).assign(core, 0)
    data = np.arange(1024, dtype=np.float16).reshape(32, 32)
    a1.write(data)
    tmov(left, a1)
    np.testing.assert_array_equal(left.read(), data)


# -- Acc -> Vec / Mat -------------------------------------------------------------------------------------


def _acc(core, rows, cols, values=None, dtype="float32"):
    c = tile_acc(dtype, rows, cols).assign(core, 0)
    if values is not None:
        c.write(values)
    return c


def test_acc_to_vec_cast_and_relu():
    cube, v = aic(), aiv()
    x = np.linspace(-70000, 70000, 32 * 32).astype(np.float32).reshape(32, 32)
    acc = _acc(cube, 32, 32, x)
    dst = vec(v, "ND", "float16", 32, 32)
    tmov(dst, acc)
    np.testing.assert_array_equal(dst.read(), np.clip(x, -65504, 65504).astype(np.float16))
    tmov(dst, acc, relu=ReluPreMode.NormalRelu)
    np.testing.assert_array_equal(dst.read(), np.clip(np.maximum(x, 0), 0, 65504).astype(np.float16))
    dn = vec(v, "DN", "bfloat16", 32, 32, off=8192)
    tmov(dn, acc)
    np.testing.assert_array_equal(dn.read(), x.astype(ml_dtypes.bfloat16))
    assert dn.tensor.view()[3 * 32 + 5] == x[5, 3].astype(ml_dtypes.bfloat16)  # column-major destination


def test_acc_to_vec_nz2nz_rounds_columns():
    cube, v = aic(), aiv()
    x = np.arange(32 * 32, dtype=np.float32).reshape(32, 32)
    acc = _acc(cube, 32, 32, x)
    acc.set_valid(20, 10)
    dst = vec(v, "NZ", "float16", 32, 32, off=0)
    tmov(dst, acc)
    # nz2nz copies every static row and rounds the columns up to C0 = 16 for half
    np.testing.assert_array_equal(dst.read(32, 16), x[:, :16].astype(np.float16))


def test_single_mode_vec1_and_sub_block_rule():
    cube, v0, v1 = aic(), aiv(sub=0), aiv(sub=1)
    x = np.arange(16 * 32, dtype=np.float32).reshape(16, 32)
    acc = _acc(cube, 16, 32, x)
    d1 = vec(v1, "ND", "float32", 16, 32)
    tmov(d1, acc, mode=AccToVecMode.SingleModeVec1)
    np.testing.assert_array_equal(d1.read(), x)
    with pytest.raises(ConfigError, match="sub-block 1"):
        tmov(vec(v0, "ND", "float32", 16, 32), acc, mode=AccToVecMode.SingleModeVec1)
    with pytest.raises(ConfigError, match="sub-block 0"):
        tmov(d1, acc, mode=AccToVecMode.SingleModeVec0)


@pytest.mark.parametrize("mode", [AccToVecMode.DualModeSplitM, AccToVecMode.DualModeSplitN])
def test_dual_modes_split_between_sub_blocks(mode):
    cube, v0, v1 = aic(), aiv(sub=0), aiv(sub=1)
    x = (np.arange(32 * 64, dtype=np.float32).reshape(32, 64) - 500) * 0.5
    acc = _acc(cube, 32, 64, x)
    shape = (16, 64) if mode is AccToVecMode.DualModeSplitM else (32, 32)
    d0, d1 = vec(v0, "ND", "float32", *shape), vec(v1, "ND", "float32", *shape)
    tmov((d0, d1), acc, mode=mode)
    if mode is AccToVecMode.DualModeSplitM:  # AIV0 rows [0, M/2), AIV1 rows [M/2, M)
        np.testing.assert_array_equal(d0.read(), x[:16])
        np.testing.assert_array_equal(d1.read(), x[16:])
    else:  # AIV0 cols [0, N/2), AIV1 cols [N/2, N)
        np.testing.assert_array_equal(d0.read(), x[:, :32])
        np.testing.assert_array_equal(d1.read(), x[:, 32:])


def test_dual_mode_rules():
    cube, v0, v1 = aic(), aiv(sub=0), aiv(sub=1)
    acc = _acc(cube, 32, 64, np.zeros((32, 64), np.float32))
    h0, h1 = vec(v0, "ND", "float16", 16, 64), vec(v1, "ND", "float16", 16, 64)
    with pytest.raises(ConfigError, match="quant is not supported in dual"):  # float -> half needs F322F16
        tmov((h0, h1), acc, mode=AccToVecMode.DualModeSplitM)
    f0, f1 = vec(v0, "ND", "float32", 16, 64), vec(v1, "ND", "float32", 16, 64)
    with pytest.raises(ConfigError, match="quant is not supported in dual"):
        tmov((f0, f1), acc, mode=AccToVecMode.DualModeSplitM, pre_quant_scalar=quant_scalar_word(1.0, "float32"))
    dn0, dn1 = vec(v0, "DN", "float32", 32, 32), vec(v1, "DN", "float32", 32, 32)
    with pytest.raises(ConfigError, match="nz2dn"):
        tmov((dn0, dn1), acc, mode=AccToVecMode.DualModeSplitN)
    acc.set_valid(32, 48)
    n0, n1 = vec(v0, "ND", "float32", 32, 32), vec(v1, "ND", "float32", 32, 32)
    with pytest.raises(ConfigError, match="ValidCol % 32"):
        tmov((n0, n1), acc, mode=AccToVecMode.DualModeSplitN)
    with pytest.raises(ConfigError, match="pass dst=\\(tile_vec0, tile_vec1\\)"):
        tmov(n0, acc, mode=AccToVecMode.DualModeSplitN)
    with pytest.raises(ConfigError, match="only supports Vec"):
        tmov((Tile.of("NZ", M, "float32", 32, 32).assign(cube, 0), n1), acc, mode=AccToVecMode.DualModeSplitN)


def test_acc_scalar_quant_writes_quant_pre_and_converts():
    cube, v = aic(), aiv()
    x = np.linspace(-400, 400, 16 * 32).astype(np.float32).reshape(16, 32)
    acc = _acc(cube, 16, 32, x)
    word = quant_scalar_word(0.5, "int8")
    dst = vec(v, "ND", "int8", 16, 32)
    tmov(dst, acc, pre_quant_scalar=word)
    assert cube.registers["QUANT_PRE"] == word
    np.testing.assert_array_equal(dst.read(), np.clip(np.rint(x * 0.5), -128, 127).astype(np.int8))


def test_acc_vector_quant_reads_fb_words_per_column():
    cube, v = aic(), aiv()
    x = (np.arange(16 * 16, dtype=np.int32).reshape(16, 16) - 100) * 37
    acc = _acc(cube, 16, 16, x, dtype="int32")
    scales = (np.arange(16, dtype=np.float32) + 1) * np.float32(0.25)  # exact in 10 mantissa bits
    fp = Tile.of("ND", TileType.Scaling, "uint64", 1, 16).assign(cube, 128)
    fp.write(scales.view(np.uint32).astype(np.uint64)[None, :])
    dst = vec(v, "ND", "float16", 16, 16)
    tmov(dst, acc, fp=fp)
    assert cube.registers["FPC"] == (128 >> 7) << 8
    np.testing.assert_array_equal(dst.read(), (x.astype(np.float32) * scales[None, :]).astype(np.float16))


def test_acc_checks_950():
    cube, v = aic(), aiv()
    acc = _acc(cube, 16, 32, np.zeros((16, 32), np.float32))
    with pytest.raises(ConfigError, match="float32 -> int8 is not supported by the plain"):
        tmov(vec(v, "ND", "int8", 16, 32), acc)
    with pytest.raises(ConfigError, match="nz2nd \\(ND\\), nz2dn \\(DN\\) or nz2nz"):
        tmov(vec(v, "ZN", "float16", 16, 32), acc)
    with pytest.raises(ConfigError, match="either pre_quant_scalar"):
        tmov(vec(v, "ND", "int8", 16, 32), acc, pre_quant_scalar=0, fp=Tile.of("ND", TileType.Scaling, "uint64", 1, 16).assign(cube, 0))
    with pytest.raises(ConfigError, match="fp tile must be TileType::Scaling"):
        tmov(vec(v, "ND", "int8", 16, 32), acc, fp=Tile.of("ND", M, "uint64", 1, 16).assign(cube, 0))
    i32 = _acc(cube, 16, 32, np.zeros((16, 32), np.int32), dtype="int32")
    with pytest.raises(ConfigError, match="int32 -> float16 is not supported by the plain"):
        tmov(vec(v, "ND", "float16", 16, 32), i32)
    with pytest.raises(ConfigError, match="destination must be Vec or Mat"):
        tmov(Tile.of("ND", TileType.Bias, "float32", 1, 32).assign(cube, 0), acc)


def test_acc_to_mat_a2_rules():
    cube = aic(ATLAS_A2)
    x = np.linspace(-3, 3, 32 * 32).astype(np.float32).reshape(32, 32)
    acc = _acc(cube, 32, 32, x)
    dst = Tile.of("NZ", M, "float16", 32, 32).assign(cube, 0)
    tmov(dst, acc)
    np.testing.assert_array_equal(dst.read(), x.astype(np.float16))
    with pytest.raises(ConfigError, match="float32 -> float32 is not supported"):
        tmov(Tile.of("NZ", M, "float32", 32, 32, fractal=FRACTAL_AB).assign(cube, 0), acc)
    with pytest.raises(ConfigError, match="AccToVecMode exists only on Ascend 950"):
        tmov(dst, acc, mode=AccToVecMode.SingleModeVec0)
    with pytest.raises(ConfigError, match="SFractalSize only supports 512"):
        tmov(Tile.of("NZ", M, "float16", 32, 32, fractal=FRACTAL_C).assign(cube, 0), acc)
    with pytest.raises(ConfigError, match="only supports Mat"):
        tmov(vec(aiv(ATLAS_A2), "ND", "float16", 32, 32), acc)
    with pytest.raises(ConfigError, match="shape of destination"):
        tmov(Tile.of("NZ", M, "float16", 32, 64).assign(cube, 0), acc)
    i32 = _acc(cube, 32, 32, (np.arange(1024, dtype=np.int32).reshape(32, 32) - 512) * 1000, dtype="int32")
    s16 = Tile.of("NZ", M, "int16", 32, 32).assign(cube, 8192)
    word = (3 << 32) | quant_scalar_word(1.0, "int16")  # SHIFTS322S16: shift = field + 1 = 4
    tmov(s16, i32, pre_quant_scalar=word)
    want = np.clip(((np.arange(1024).reshape(32, 32) - 512) * 1000) >> 4, -32768, 32767).astype(np.int16)
    np.testing.assert_array_equal(s16.read(), want)
    with pytest.raises(ConfigError, match="int32 -> bfloat16 is not supported by the scalar-quant form on AtlasA2"):
        tmov(Tile.of("NZ", M, "bfloat16", 32, 32).assign(cube, 0), i32, pre_quant_scalar=word)


def test_tmov_publishes_instruction_events():
    class Log(Observer):
        interests = frozenset({"instruction"})

        def __init__(self):
            self.events = []

        def on_event(self, e):
            if isinstance(e, InstructionEvent):
                self.events.append(e)

    log = Log()
    core = aic(observers=(log,))
    a1 = Tile.of("NZ", M, "float16", 32, 32).assign(core, 0)
    a1.write(np.zeros((32, 32), np.float16))
    tmov(tile_left("float16", 32, 32).assign(core, 0), a1)
    sl = tile_left_scale(32, 2).assign(core, 0)
    s1 = Tile.of("ZZ", M, "float8_e8m0fnu", 32, 2, fractal=FRACTAL_MX).assign(core, 4096)
    s1.write(np.full((32, 2), 127, np.uint8).view(ml_dtypes.float8_e8m0fnu))
    tmov(sl, s1)
    assert [e.op for e in log.events] == ["TMOV", "TMOV"]
    assert log.events[0].nbytes == 32 * 32 * 2 and log.events[0].pipe.value == "MTE1"
