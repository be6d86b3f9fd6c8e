"""PTO-ISA conformance: ``tests/npu/a5/src/st/testcase/textract`` (TEXTRACT / TMOV Mat -> Left / Right feeding TMATMUL).

Inputs as gen_data.py draws them: the global stream seeded 19 consumed case after case in its list order (operands
``randint(1, 5)``, the padded cases' extra fills, the fp4 cases' uniform draws and scale draws). Kernel: TLOAD A (ND, or
DN into a ZN tile when A is transposed) and B (DN into ZN, or ND into NZ when B is transposed) into L1, TEXTRACT the
``(M - indexM) x (K - indexK)`` / ``(K - indexK) x (N - indexN)`` windows into L0A / L0B (or TMOV whole tiles), TMATMUL,
TSTORE. Expected: the float64 product of the source slices, compared with the case's relative tolerance (1e-3).

The fp4 cases (TEXTRACTTest 17-20, TMOVTest 14-17) load and apply their MX scales with CCE intrinsics
(``copy_gm_to_cbuf_align_v2``, ``load_cbuf_to_ca_mx``, ``mad_mx``), not PTO instructions; they are run here with the
PTO counterparts of those steps (TLOAD of the scale bytes, TEXTRACT / TMOV into the scale tiles, TMATMUL_MX), the
data TEXTRACT / TMOV being the instruction under test.
"""

from __future__ import annotations

import functools

import ml_dtypes
import numpy as np
import pytest
from pto_helpers import aic
from st_common import check_golden, gm_in, gm_out, params

from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.numerics import e1m2_encode
from catlass_py.tile.pto import (
    FRACTAL_MX,
    Tile,
    TileType,
    tile_acc,
    tile_left,
    tile_left_scale,
    tile_right,
    tile_right_scale,
    textract,
    tload,
    tmatmul,
    tmatmul_mx,
    tmov,
    tstore,
)

FAMILY, M_ = "textract", TileType.Mat
F16, F32, I8, BF16 = np.float16, np.float32, np.int8, ml_dtypes.bfloat16
E4, E5, HIF8 = ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, np.uint8
FP4A, FP4B = "e2m1", "e1m2"
DT = {F16: "float16", F32: "float32", I8: "int8", BF16: "bfloat16", E4: "float8_e4m3fn", E5: "float8_e5m2",
      HIF8: "hifloat8", FP4A: "float4_e2m1fn", FP4B: "float4_e1m2"}

# gen_data.py's list, in order: (suite.case, op, dtype, m, k, n, start_m, start_k, start_n, a_trans, b_trans, targets)
GEN = [
    ("TEXTRACTTest.case1", "extract", F16, 32, 96, 64, 0, 0, 0, 0, 0, None),
    ("TEXTRACTTest.case2", "extract", F32, 128, 48, 64, 0, 0, 0, 0, 0, None),
    ("TEXTRACTTest.case3", "extract", I8, 128, 128, 64, 0, 0, 0, 0, 0, None),
    ("TEXTRACTTest.case4", "extract", F16, 64, 96, 64, 32, 16, 16, 0, 0, None),
    ("TEXTRACTTest.case5", "extract", F32, 64, 128, 64, 32, 32, 16, 0, 0, None),
    ("TEXTRACTTest.case6", "extract", I8, 128, 128, 64, 32, 64, 32, 0, 0, None),
    ("TEXTRACTTest.case7", "extract", F16, 64, 128, 64, 0, 64, 0, 1, 1, None),
    ("TEXTRACTTest.case8", "extract", F32, 64, 64, 128, 0, 0, 32, 1, 1, None),
    ("TEXTRACTTest.case9", "extract", I8, 128, 64, 128, 32, 0, 0, 1, 1, None),
    ("TEXTRACTTest.case10", "extract", BF16, 64, 128, 64, 16, 0, 0, 1, 0, None),
    ("TEXTRACTTest.case11", "extract", E4, 64, 128, 64, 0, 32, 0, 1, 0, None),
    ("TEXTRACTTest.case12", "extract", E5, 64, 128, 64, 0, 0, 32, 0, 1, None),
    ("TEXTRACTTest.case13", "extract", HIF8, 64, 128, 64, 0, 32, 0, 0, 1, None),
    ("TEXTRACTTest.case14", "extract", I8, 64, 96, 32, 32, 0, 0, 1, 0, None),
    ("TEXTRACTTest.case15", "extract", F16, 64, 48, 96, 16, 16, 0, 1, 0, None),
    ("TEXTRACTTest.case16", "extract", F32, 32, 96, 48, 0, 32, 16, 0, 0, None),
    ("TEXTRACTTest.case17", "extract", FP4A, 256, 128, 256, 128, 64, 128, 0, 0, None),
    ("TEXTRACTTest.case18", "extract", FP4B, 256, 128, 256, 128, 64, 128, 0, 0, None),
    ("TEXTRACTTest.case19", "extract", FP4A, 256, 128, 256, 128, 64, 128, 1, 1, None),
    ("TEXTRACTTest.case20", "extract", FP4B, 256, 128, 256, 128, 64, 128, 1, 1, None),
    ("TMOVTest.case1", "tmov", F16, 32, 96, 64, 0, 0, 0, 0, 0, None),
    ("TMOVTest.case2", "tmov", F32, 128, 48, 64, 0, 0, 0, 0, 0, None),
    ("TMOVTest.case3", "tmov", I8, 128, 128, 64, 0, 0, 0, 0, 0, None),
    ("TMOVTest.case4", "tmov", BF16, 64, 128, 64, 0, 0, 0, 1, 1, None),
    ("TMOVTest.case5", "tmov", E4, 64, 96, 64, 0, 0, 0, 1, 0, None),
    ("TMOVTest.case6", "tmov", E5, 64, 128, 64, 0, 0, 0, 0, 1, None),
    ("TMOVTest.case7", "tmov", HIF8, 128, 128, 64, 0, 0, 0, 1, 0, None),
    ("TMOVTest.case8", "tmov", I8, 64, 96, 64, 0, 0, 0, 1, 1, None),
    ("TMOVTest.case9", "tmov", F16, 64, 128, 64, 0, 0, 0, 1, 0, None),
    ("TMOVTest.case10", "tmov", F32, 64, 128, 64, 0, 0, 0, 0, 1, None),
    ("TMOVTest.case11", "tmov", I8, 65, 40, 66, 0, 0, 0, 1, 1, (96, 64, 96)),
    ("TMOVTest.case12", "tmov", F16, 65, 40, 66, 0, 0, 0, 1, 1, (80, 48, 80)),
    ("TMOVTest.case13", "tmov", F32, 65, 40, 66, 0, 0, 0, 1, 1, (80, 48, 80)),
    ("TMOVTest.case14", "tmov", FP4A, 128, 64, 128, 0, 0, 0, 0, 0, None),
    ("TMOVTest.case15", "tmov", FP4B, 128, 64, 128, 0, 0, 0, 0, 0, None),
    ("TMOVTest.case16", "tmov", FP4A, 128, 64, 128, 0, 0, 0, 1, 1, None),
    ("TMOVTest.case17", "tmov", FP4B, 128, 64, 128, 0, 0, 0, 1, 1, None),
]
assert len(GEN) == 37


def _fp4_codes(x, fmt):
    """Codes of uniform(1, 6) draws cast to fp4 (RNE): e2m1 through ml_dtypes, e1m2 through its encoder."""
    if fmt == FP4A:
        return x.astype(ml_dtypes.float4_e2m1fn).view(np.uint8)
    return e1m2_encode(x)


@functools.lru_cache(maxsize=1)
def _inputs() -> dict:
    rs = np.random.RandomState(19)
    out = {}
    for name, op, dt, m, k, n, sm, sk, sn, at, bt, tgt in GEN:
        if dt in (FP4A, FP4B):
            x1 = _fp4_codes(rs.uniform(1, 6, [m, k]), dt)
            x2 = _fp4_codes(rs.uniform(1, 6, [k, n]), dt)
            vm, vk, vn = m - sm, k - sk, n - sn
            s1 = rs.randint(127, 130, [vm, vk // 32]).astype(np.uint8)
            s2 = rs.randint(127, 130, [vk // 32, vn]).astype(np.uint8)
            out[name] = (x1, x2, s1, s2)
            continue
        x1 = rs.randint(1, 5, [m, k]).astype(np.uint8 if dt is HIF8 else dt)
        x2 = rs.randint(1, 5, [k, n]).astype(np.uint8 if dt is HIF8 else dt)
        if tgt is not None:
            tm, tk, tn = tgt
            p1 = np.zeros((tm, tk), x1.dtype)
            p1[:m, :k] = x1
            p1[:m, k:] = rs.randint(1, 5, size=(m, tk - k), dtype=np.int32).astype(x1.dtype)
            p1[m:, k:] = rs.randint(1, 5, size=(tm - m, tk - k), dtype=np.int32).astype(x1.dtype)
            p2 = np.zeros((tk, tn), x2.dtype)
            p2[:k, :n] = x2
            p2[k:, :n] = rs.randint(1, 5, size=(tk - k, n), dtype=np.int32).astype(x2.dtype)
            p2[k:, n:] = rs.randint(1, 5, size=(tk - k, tn - n), dtype=np.int32).astype(x2.dtype)
            out[name] = (x1, x2, p1, p2)
        else:
            out[name] = (x1, x2, x1, x2)
    return out


def _values(x, dt):
    if dt is HIF8:  # codes 1..4 are the HiFloat8 subnormals 2**(code - 23)
        assert x.min() >= 1 and x.max() <= 4
        return np.ldexp(1.0, x.astype(np.int64) - 23)
    return x.astype(np.float64)


CASES = [c for c in GEN]


@pytest.mark.parametrize("case", params(CASES, fast={"TEXTRACTTest.case7", "TMOVTest.case12", "TEXTRACTTest.case19"}))
def test_textract(case):
    name, op, dt, m, k, n, sm, sk, sn, at, bt, tgt = case
    if dt in (FP4A, FP4B):
        _run_mx(case)
        return
    x1, x2, g1, g2 = _inputs()[name]
    core = aic()
    name_dt = DT[dt]
    gm_m, gm_k, gm_n = tgt if tgt is not None else (m, k, n)
    # GM: A is M x K (ND) or its transpose (DN); B is K x N transposed (DN) unless b_trans (ND)
    a_gm = gm_in(g1.T.copy() if at else g1, "a", name_dt)
    a_layout = ColumnMajor(gm_m, gm_k, gm_m) if at else RowMajor(gm_m, gm_k, gm_k)
    b_gm = gm_in(g2 if bt else g2.T.copy(), "b", name_dt)
    b_layout = RowMajor(gm_k, gm_n, gm_n) if bt else ColumnMajor(gm_k, gm_n, gm_k)
    a_mat = Tile.of("ZN" if at else "NZ", M_, name_dt, gm_m, gm_k).assign(core, 0)
    b_mat = Tile.of("NZ" if bt else "ZN", M_, name_dt, gm_k, gm_n).assign(core, 0x10000)
    tload(a_mat, a_gm, a_layout)
    tload(b_mat, b_gm, b_layout)
    acc_dt = "int32" if dt is I8 else "float32"
    if op == "extract":
        vm, vk, vn = m - sm, k - sk, n - sn
        a = tile_left(name_dt, vm, vk).assign(core, 0)
        b = tile_right(name_dt, vk, vn).assign(core, 0)
        c = tile_acc(acc_dt, vm, vn).assign(core, 0)
        textract(a, a_mat, sm, sk)
        textract(b, b_mat, sk, sn)
    else:
        vm, vk, vn = m, k, n
        a = tile_left(name_dt, gm_m, gm_k, valid=(gm_m, k)).assign(core, 0)
        b = tile_right(name_dt, gm_k, gm_n, valid=(k, gm_n)).assign(core, 0)
        c = tile_acc(acc_dt, gm_m, gm_n, valid=(m, n)).assign(core, 0)
        tmov(a, a_mat)
        tmov(b, b_mat)
    tmatmul(c, a, b)
    c.set_valid(vm, vn)
    buf, out = gm_out(vm * vn * 4, acc_dt)
    tstore(out, RowMajor(vm, vn), c)
    got = buf.raw.view(np.int32 if dt is I8 else np.float32).reshape(vm, vn)
    want = _values(x1[sm:, sk:], dt) @ _values(x2[sk:, sn:], dt)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=0)
    check_golden(FAMILY, name, "golden.bin", buf.raw)


def _run_mx(case):
    """The fp4 cases: data through TEXTRACT / TMOV, scales through TLOAD + TMOV into the scale tiles, TMATMUL_MX."""
    name, op, dt, m, k, n, sm, sk, sn, at, bt, tgt = case
    x1, x2, s1, s2 = _inputs()[name]
    core = aic()
    name_dt = DT[dt]
    a_host = x1.T.copy() if at else x1
    b_host = x2 if bt else x2.T.copy()
    a_gm = gm_in(_pack(a_host), "a", name_dt)
    b_gm = gm_in(_pack(b_host), "b", name_dt)
    a_mat = Tile.of("ZN" if at else "NZ", M_, name_dt, m, k).assign(core, 0)
    b_mat = Tile.of("NZ" if bt else "ZN", M_, name_dt, k, n).assign(core, 0x10000)
    tload(a_mat, a_gm, ColumnMajor(m, k, m) if at else RowMajor(m, k, k))
    tload(b_mat, b_gm, RowMajor(k, n, n) if bt else ColumnMajor(k, n, k))
    vm, vk, vn = m - sm, k - sk, n - sn
    a = tile_left(name_dt, vm, vk).assign(core, 0)
    b = tile_right(name_dt, vk, vn).assign(core, 0)
    if op == "extract":
        textract(a, a_mat, sm, sk)
        textract(b, b_mat, sk, sn)
    else:
        tmov(a, a_mat)
        tmov(b, b_mat)
    kg = vk // 32
    sa_mat = Tile.of("ZZ", M_, "float8_e8m0fnu", vm, kg, fractal=FRACTAL_MX).assign(core, 0x20000)
    sb_mat = Tile.of("NN", M_, "float8_e8m0fnu", kg, vn, fractal=FRACTAL_MX).assign(core, 0x30000)
    tload(sa_mat, gm_in(s1, "sa", "float8_e8m0fnu"), RowMajor(vm, kg))
    tload(sb_mat, gm_in(s2, "sb", "float8_e8m0fnu"), RowMajor(kg, vn))
    sa = tile_left_scale(vm, kg).assign(core, 0)
    sb = tile_right_scale(kg, vn).assign(core, 0)
    tmov(sa, sa_mat)
    tmov(sb, sb_mat)
    c = tile_acc("float32", vm, vn).assign(core, 0)
    tmatmul_mx(c, a, sa, b, sb)
    buf, out = gm_out(vm * vn * 4, "float32")
    tstore(out, RowMajor(vm, vn), c)
    got = buf.raw.view(np.float32).reshape(vm, vn)
    va = _fp4_values(x1[sm:, sk:], dt) * np.repeat(np.ldexp(1.0, s1.astype(np.int64) - 127), 32, axis=1)
    vb = _fp4_values(x2[sk:, sn:], dt) * np.repeat(np.ldexp(1.0, s2.astype(np.int64) - 127), 32, axis=0)
    np.testing.assert_allclose(got, va @ vb, rtol=1e-3, atol=0)
    check_golden(FAMILY, name, "golden.bin", buf.raw)


def _pack(codes):
    """fp4 codes (one per item) -> bytes, even element in the low nibble."""
    c = codes.astype(np.uint8).reshape(codes.shape[0], -1, 2)
    return (c[..., 0] | (c[..., 1] << 4)).astype(np.uint8)


def _fp4_values(codes, dt):
    c = codes.astype(np.int64)
    sign = np.where(c & 8, -1.0, 1.0)
    mag = c & 7
    if dt == FP4A:
        table = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])
    else:  # e1m2: 1 exponent bit, 2 mantissa bits, bias 1: subnormals 0, 0.25, 0.5, 0.75; normals 1..1.75
        table = np.array([0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75])
    return sign * table[mag]
