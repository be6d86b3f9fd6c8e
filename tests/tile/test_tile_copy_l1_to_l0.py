"""L1 -> L0A / L0B fractal loads: zN->zZ and nZ->zZ for A, zN->nZ and nZ->nZ for B.

The L1 buffer holds a whole static L1 tile written element by element through hand-written fractal offset
formulas (padding positions included, with their own values), the source tensor is
offset to an L0 tile origin inside it, and the destination must hold the tile padded to whole fractals
in the L0 layout - the padding carrying whatever L1 held there.
"""

import ml_dtypes
import numpy as np
import pytest

from catlass_py.arch import ATLAS_A2 as A2
from catlass_py.arch import standalone_core
from catlass_py.errors import ConfigError
from catlass_py.gemm import GemmType
from catlass_py.layout import nZ, zN, zZ
from catlass_py.tile import CopyL1ToL0A, CopyL1ToL0B

SENTINEL = 0x5A
NP = {"int8": np.int8, "float16": np.float16, "float32": np.float32, "bfloat16": ml_dtypes.bfloat16}
C0 = {"int8": 32, "float16": 16, "bfloat16": 16, "float32": 8}


def rup(a, b):
    return -(-a // b) * b


def zn_off(r, c, rows_pad, c0):  # 16 x C0 fractals, column-major between
    return (r // 16) * 16 * c0 + (c // c0) * rows_pad * c0 + (r % 16) * c0 + c % c0


def nz_off(r, c, cols_pad, c0):  # C0 x 16 fractals (column-major inside), row-major between
    return (r // c0) * cols_pad * c0 + (c // 16) * 16 * c0 + (r % c0) + (c % 16) * c0


def zz_off(r, c, cols_pad, c0):  # 16 x C0 fractals, row-major inside and between
    return (r // 16) * cols_pad * 16 + (c // c0) * 16 * c0 + (r % 16) * c0 + c % c0


def fill_l1(ctx, dtype, layout_kind, rows, cols, rng):
    """Write a random (rows_pad x cols_pad) matrix into L1 at byte 0 in ``layout_kind``; return it."""
    c0 = C0[dtype]
    if layout_kind == "zN":
        rp, cp = rup(rows, 16), rup(cols, c0)
        off = lambda r, c: zn_off(r, c, rp, c0)  # noqa: E731
    else:
        rp, cp = rup(rows, c0), rup(cols, 16)
        off = lambda r, c: nz_off(r, c, cp, c0)  # noqa: E731
    if dtype == "int8":
        m = rng.integers(-128, 128, size=(rp, cp)).astype(np.int8)
    else:
        m = rng.standard_normal((rp, cp)).astype(np.float32).astype(NP[dtype])
    raw = ctx.resource.l1_buf.raw
    r, c = np.meshgrid(np.arange(rp), np.arange(cp), indexing="ij")
    raw[: rp * cp * m.itemsize].view(NP[dtype])[off(r, c)] = m
    return m, off


def sentinel_core():
    ctx = standalone_core(A2, "AIC")
    ctx.resource.l0a_buf.raw[:] = SENTINEL
    ctx.resource.l0b_buf.raw[:] = SENTINEL
    return ctx


# (L1 rows, L1 cols, tile origin row, tile origin col, tile rows, tile cols) in units resolved per dtype
A_CASES = [
    # zN A: origin rows multiple of 16, origin cols multiple of C0
    ("zN", lambda c0: (64, 4 * c0, 16, c0, 32, 2 * c0)),
    ("zN", lambda c0: (64, 4 * c0, 0, 2 * c0, 16, c0 + 5)),   # k not a multiple of C0
    ("zN", lambda c0: (48, 4 * c0, 32, 0, 7, 3)),             # m and k tails
    # nZ A (column-major A): origin rows multiple of C0, origin cols multiple of 16 (and of C0)
    ("nZ", lambda c0: (4 * c0, 96, c0, 32, 2 * c0, 32)),
    ("nZ", lambda c0: (4 * c0, 96, 0, 32, c0, 40)),          # k tail
    ("nZ", lambda c0: (4 * c0, 96, 2 * c0, 0, 9, 5)),         # m and k tails
]


@pytest.mark.parametrize("dtype", ["int8", "float16", "float32", "bfloat16"])
@pytest.mark.parametrize("kind,case", A_CASES)
def test_copy_l1_to_l0a_loads_tile_into_zz(dtype, kind, case):
    c0 = C0[dtype]
    l1_rows, l1_cols, r0, k0, m, k = case(c0)
    assert (r0 % 16 == 0 and k0 % c0 == 0) if kind == "zN" else (r0 % c0 == 0 and k0 % 16 == 0)
    ctx = sentinel_core()
    rng = np.random.default_rng(m * 100 + k)
    mat, off = fill_l1(ctx, dtype, kind, l1_rows, l1_cols, rng)
    l1 = ctx.resource.l1_buf.get_buffer_by_byte(dtype, 0)
    layout_l1 = (zN if kind == "zN" else nZ).make_layout(dtype, l1_rows, l1_cols)
    l0a = ctx.resource.l0a_buf.get_buffer_by_byte(dtype, 0)
    CopyL1ToL0A(A2, GemmType(dtype, zN if kind == "zN" else nZ, "L1"))(
        l0a, l1[off(r0, k0)], zZ.make_layout(dtype, m, k), layout_l1)
    mp, kp = rup(m, 16), rup(k, c0)
    r, c = np.meshgrid(np.arange(mp), np.arange(kp), indexing="ij")
    typed = ctx.resource.l0a_buf.raw.view(NP[dtype])
    got = typed[zz_off(r, c, kp, c0)]
    np.testing.assert_array_equal(got.view(np.uint8), mat[r0:r0 + mp, k0:k0 + kp].view(np.uint8))
    # nothing past the padded tile was written
    assert np.all(ctx.resource.l0a_buf.raw[mp * kp * np.dtype(NP[dtype]).itemsize:] == SENTINEL)


B_CASES = [
    ("zN", lambda c0: (4 * c0, 96, 2 * c0, 32, 2 * c0, 32)),  # B rows = k (zN: 16-row fractals)
    ("zN", lambda c0: (4 * c0, 96, 0, 64, c0 + 3, 32)),       # k not a multiple of C0
    ("zN", lambda c0: (4 * c0, 96, 2 * c0, 0, 5, 7)),          # k and n tails
    ("nZ", lambda c0: (4 * c0, 96, c0, 32, 2 * c0, 48)),
    ("nZ", lambda c0: (4 * c0, 96, 0, 16, c0 + 3, 20)),
    ("nZ", lambda c0: (4 * c0, 96, 2 * c0, 64, 3, 9)),
]


@pytest.mark.parametrize("dtype", ["int8", "float16", "float32", "bfloat16"])
@pytest.mark.parametrize("kind,case", B_CASES)
def test_copy_l1_to_l0b_loads_tile_into_nz(dtype, kind, case):
    c0 = C0[dtype]
    l1_rows, l1_cols, k0, n0, k, n = case(c0)
    assert (k0 % 16 == 0 and n0 % c0 == 0) if kind == "zN" else (k0 % c0 == 0 and n0 % 16 == 0)
    ctx = sentinel_core()
    rng = np.random.default_rng(k * 100 + n)
    mat, off = fill_l1(ctx, dtype, kind, l1_rows, l1_cols, rng)
    l1 = ctx.resource.l1_buf.get_buffer_by_byte(dtype, 0)
    layout_l1 = (zN if kind == "zN" else nZ).make_layout(dtype, l1_rows, l1_cols)
    l0b = ctx.resource.l0b_buf.get_buffer_by_byte(dtype, 0)
    CopyL1ToL0B(A2, GemmType(dtype, zN if kind == "zN" else nZ, "L1"))(
        l0b, l1[off(k0, n0)], nZ.make_layout(dtype, k, n), layout_l1)
    kp, np_ = rup(k, c0), rup(n, 16)
    r, c = np.meshgrid(np.arange(kp), np.arange(np_), indexing="ij")
    typed = ctx.resource.l0b_buf.raw.view(NP[dtype])
    got = typed[nz_off(r, c, np_, c0)]
    want = mat[k0:k0 + kp, n0:n0 + np_]
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    assert np.all(ctx.resource.l0b_buf.raw[kp * np_ * np.dtype(NP[dtype]).itemsize:] == SENTINEL)


def test_l0_copies_reject_wrong_layouts():
    with pytest.raises(ConfigError):
        CopyL1ToL0A(A2, GemmType("int8", zZ, "L1"))
    with pytest.raises(ConfigError):
        CopyL1ToL0B(A2, GemmType("int8", zZ, "L1"))
    ctx = sentinel_core()
    copy = CopyL1ToL0A(A2, GemmType("int8", zN, "L1"))
    l1 = ctx.resource.l1_buf.get_buffer_by_byte("int8", 0)
    l0a = ctx.resource.l0a_buf.get_buffer_by_byte("int8", 0)
    with pytest.raises(ConfigError):  # L0A on Atlas A2 is zZ, not nZ
        copy(l0a, l1, nZ.make_layout("int8", 32, 32), zN.make_layout("int8", 32, 32))
