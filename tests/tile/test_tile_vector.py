"""Vector tile ops of the epilogue: TileRowBroadcastMul, TileBroadcastOneBlk,
TileOneBlkColumnBroadcastMul, TileCast, vector_cast, duplicate - checked against the formulas over the
FULL static tile."""

import ml_dtypes
import numpy as np
import pytest

from catlass_py.arch import ATLAS_A2 as A2
from catlass_py.arch import standalone_core
from catlass_py.errors import ConfigError
from catlass_py.gemm import GemmType
from catlass_py.layout import RowMajor
from catlass_py.numerics import RoundMode
from catlass_py.tile import (
    TileBroadcastOneBlk,
    TileCast,
    TileOneBlkColumnBroadcastMul,
    TileRowBroadcastMul,
    duplicate,
    vector_cast,
)

F32 = GemmType("float32", RowMajor)


def ub(ctx, dtype, byte_off, count):
    return ctx.resource.ub_buf.get_buffer_by_byte(dtype, byte_off, count)


@pytest.fixture
def ctx():
    return standalone_core(A2, "AIV")


@pytest.mark.parametrize("rows,cols", [(32, 256), (4, 64), (3, 8)])
def test_row_broadcast_mul(ctx, rows, cols):
    rng = np.random.default_rng(rows)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    v = rng.standard_normal(cols).astype(np.float32)
    a, b, o = ub(ctx, "float32", 0, rows * cols), ub(ctx, "float32", 65536, cols), ub(ctx, "float32", 98304, rows * cols)
    a.view()[:] = x.reshape(-1)
    b.view()[:] = v
    TileRowBroadcastMul(A2, F32, (rows, cols))(o, a, b)
    want = np.empty((rows, cols), np.float32)
    for i in range(rows):
        for c in range(cols):
            want[i, c] = np.float32(x[i, c] * v[c])  # float32 * float32 (RNE)
    np.testing.assert_array_equal(o.view().reshape(rows, cols), want)


def test_broadcast_one_blk(ctx):
    n = 32
    v = np.arange(n, dtype=np.float32) * 1.5 - 7
    src, out = ub(ctx, "float32", 0, n), ub(ctx, "float32", 1024, n * 8)
    src.view()[:] = v
    TileBroadcastOneBlk(A2, F32, n)(out, src)
    got = out.view()
    for i in range(n):
        for j in range(8):
            assert got[i * 8 + j] == v[i]
    # nothing past COMPUTE_LENGTH * 32 bytes
    assert np.all(ctx.resource.ub_buf.raw[1024 + n * 32:] == 0xFF)


@pytest.mark.parametrize("rows,cols", [(32, 256), (5, 16)])
def test_one_blk_column_broadcast_mul_uses_block_element_c_mod_8(ctx, rows, cols):
    rng = np.random.default_rng(cols)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    blk = rng.standard_normal(rows * 8).astype(np.float32)  # 8 different values per row: c % 8 matters
    a, b, o = ub(ctx, "float32", 0, rows * cols), ub(ctx, "float32", 65536, rows * 8), ub(ctx, "float32", 98304, rows * cols)
    a.view()[:] = x.reshape(-1)
    b.view()[:] = blk
    TileOneBlkColumnBroadcastMul(A2, F32, (rows, cols))(o, a, b)
    want = np.empty((rows, cols), np.float32)
    for i in range(rows):
        for c in range(cols):
            want[i, c] = np.float32(x[i, c] * blk[i * 8 + c % 8])
    np.testing.assert_array_equal(o.view().reshape(rows, cols), want)


def test_column_broadcast_mul_in_place_after_brcb_multiplies_rows(ctx):
    rows, cols = 8, 64
    rng = np.random.default_rng(11)
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    pts = rng.standard_normal(rows).astype(np.float32)
    a, p, brcb = ub(ctx, "float32", 0, rows * cols), ub(ctx, "float32", 4096, rows), ub(ctx, "float32", 8192, rows * 8)
    a.view()[:] = x.reshape(-1)
    p.view()[:] = pts
    TileBroadcastOneBlk(A2, F32, rows)(brcb, p)
    TileOneBlkColumnBroadcastMul(A2, F32, (rows, cols))(a, a, brcb)  # in place, as the epilogue does
    np.testing.assert_array_equal(a.view().reshape(rows, cols), x * pts[:, None])


def test_ops_cover_the_full_static_tile_even_with_stale_data(ctx):
    """Stale (NaN-poisoned) rows are computed on, not skipped: the full ROW x COLUMN is written."""
    rows, cols = 4, 16
    a, b, o = ub(ctx, "float32", 0, rows * cols), ub(ctx, "float32", 1024, cols), ub(ctx, "float32", 2048, rows * cols)
    a.view()[: cols] = 2.0  # only row 0 "valid"; rows 1..3 keep the 0xFF poison (NaN)
    b.view()[:] = 3.0
    o.view()[:] = 0.0
    TileRowBroadcastMul(A2, F32, (rows, cols))(o, a, b)
    got = o.view().reshape(rows, cols)
    assert np.all(got[0] == 6.0) and np.all(np.isnan(got[1:]))


def test_int32_to_fp32_cast_rint(ctx):
    vals = np.array([0, 1, -1, 2**24, 2**24 + 1, 2**24 + 3, -(2**24) - 1, 2**31 - 1, -(2**31), 33554435, 16777219] + [7] * 5,
                    np.int32)
    n = vals.size
    src, dst = ub(ctx, "int32", 0, n), ub(ctx, "float32", 256, n)
    src.view()[:] = vals
    vector_cast(dst, src, RoundMode.RINT, n)
    want = [0, 1, -1, 2**24, 2**24, 2**24 + 4, -(2**24), 2**31, -(2**31), 33554436, 16777220] + [7] * 5
    np.testing.assert_array_equal(dst.view(), np.array(want, np.float32))


def test_fp32_to_bf16_rint_and_bf16_to_fp32_exact(ctx):
    ulp = 2.0**-7
    xs = np.array([1 + ulp / 2, 1 + 3 * ulp / 2, 1 + ulp / 2 + 2**-20, -(1 + ulp / 2), 3.0e38, 0.0, -0.0, 1e-40], np.float32)
    want = np.array([1.0, 1 + 2 * ulp, 1 + ulp, -1.0], np.float32)  # ties to even, then just above a tie
    n = xs.size
    src, dst, back = ub(ctx, "float32", 0, n), ub(ctx, "bfloat16", 256, n), ub(ctx, "float32", 512, n)
    src.view()[:] = xs
    vector_cast(dst, src, RoundMode.RINT, n)
    got = dst.view().astype(np.float32)
    np.testing.assert_array_equal(got[:4], want[:4])
    assert got[4] == float(np.float32(3.0e38).astype(ml_dtypes.bfloat16))  # RNE to bf16 grid, not inf
    assert np.isfinite(got[4])
    assert np.signbit(got[6]) and got[5] == 0 and not np.signbit(got[5])
    vector_cast(back, dst, RoundMode.NONE, n)
    np.testing.assert_array_equal(back.view().view(np.uint32), (dst.view().view(np.uint16).astype(np.uint32) << 16))


def test_tile_cast_checks_dtypes_and_casts_count(ctx):
    cast = TileCast(A2, GemmType("bfloat16", RowMajor), F32, (2, 16))
    src, dst = ub(ctx, "float32", 0, 64), ub(ctx, "bfloat16", 512, 64)
    src.view()[:] = np.arange(64, dtype=np.float32) + 0.5
    cast(dst, src)
    np.testing.assert_array_equal(dst.view(32).astype(np.float32), np.arange(32, dtype=np.float32) + 0.5)
    assert np.all(dst.view()[32:].view(np.uint16) == 0xFFFF)  # only COUNT = 32 elements converted
    with pytest.raises(ConfigError):
        cast(ub(ctx, "float16", 1024, 32), src)


def test_duplicate(ctx):
    t = ub(ctx, "bfloat16", 0, 64)
    duplicate(t, 0, 40)
    assert np.all(t.view()[:40].view(np.uint16) == 0) and np.all(t.view()[40:].view(np.uint16) == 0xFFFF)


def test_vector_ops_reject_non_ub_and_bad_config(ctx):
    cube = standalone_core(A2, "AIC")
    l1 = cube.resource.l1_buf.get_buffer_by_byte("float32", 0, 16)
    with pytest.raises(ConfigError):
        duplicate(l1, 0, 16)
    with pytest.raises(ConfigError):
        TileRowBroadcastMul(A2, GemmType("int32", RowMajor), (2, 16))
    with pytest.raises(ConfigError):
        TileBroadcastOneBlk(A2, F32, 0)
    with pytest.raises(ConfigError):
        TileOneBlkColumnBroadcastMul(A2, F32, (2, 12))  # COLUMN not a multiple of the 8-element block
    with pytest.raises(ConfigError):
        TileRowBroadcastMul(A2, F32, (0, 16))
