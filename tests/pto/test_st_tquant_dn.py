"""PTO-ISA conformance: ``tests/npu/a5/src/st/testcase/tquant_dn`` (TQUANT with axis-0 groups, the DN -> ZZ TMOV and the
interleaved exponent layout).

Inputs as gen_data.py draws them from the global stream seeded 42, case lists in its order: per-group log-uniform
maxima times uniform bases (x 10000 except the fp16 case), bf16 made by truncating fp32 bits, and the valid-shape
cases' uniform(-1, 1). The kernel pipeline: TLOAD, TQUANT<0, alg[, interleave]>, TMOV ND -> NZ (RowPlusOne) for the
data, TMOV<0> DN -> ZZ for the exponents (non-interleaved cases), TSTOREs; every stored tensor is compared bit for bit
with expectations computed here, the group maxima included.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from ml_dtypes import bfloat16
from pto_helpers import aiv
from st_common import bf16_trunc, check_golden, e2m1_codes, e4m3_bytes, e8m0_nv, e8m0_ocp, gm_in, gm_out, params

from catlass_py.layout import RowMajor
from catlass_py.numerics import pack_fp4
from catlass_py.tile.pto import CompactMode, MxQuantAlg, PadValue, Tile, TileType, pto_layout, tload, tmov, tmov_zz, \
    tquant, tstore

FAMILY = "tquant_dn"
V = TileType.Vec
SUITE = "TQUANTDNTest"

# (case, kind, dtype, M, N, nv, interleave, static rows) in gen_data's generation order
CASES = [
    ("case_bf16_64x128", "fp8", bfloat16, 64, 128, False, False, None),
    ("case_nv_fp32_128x128_interleaved", "fp8", np.float32, 128, 128, True, True, None),
    ("case_mxfp4_fp16_64x128", "fp4", np.float16, 64, 128, False, False, None),
    ("case_nv_mxfp4_bf16_128x128_interleaved", "fp4", bfloat16, 128, 128, True, True, None),
    ("case_validshape_bf16_s512x48_v64x24", "valid", bfloat16, 64, 24, False, True, 512),
    ("case_nv_validshape_fp16_s896x48_v896x34", "valid", np.float16, 896, 34, True, True, 896),
]


def _bf16_from_bits(x32):
    return bf16_trunc(x32).astype(bfloat16)  # truncation is exact in bf16


@functools.lru_cache(maxsize=1)
def _inputs() -> dict:
    rs = np.random.RandomState(42)
    out = {}
    for name, kind, dt, m, n, nv, inter, srows in CASES:
        if kind == "valid":
            x = rs.uniform(-1.0, 1.0, size=(m, n)).astype(np.float32)
            out[name] = _bf16_from_bits(x) if dt is bfloat16 else x.astype(dt)
            continue
        lgm = rs.uniform(np.log2(0.25), np.log2(16.0), size=(m // 32, n))
        gmax = (2.0 ** lgm).astype(np.float32)
        base = rs.uniform(0.1, 1.0, size=(m, n)).astype(np.float32)
        x = base * np.repeat(gmax, 32, axis=0)[:m]
        if dt is np.float16:  # the fp16-safe variant: same draws, no x 10000
            out[name] = x.astype(np.float16)
        else:
            x = x * 10000.0
            out[name] = x if dt is np.float32 else _bf16_from_bits(x)
    return out


def _expect(x, fp4: bool, nv: bool):
    """(scale bytes [M/32, N], element bytes / codes [M, N], group maxima as stored) of a DN quantisation."""
    x32 = np.asarray(x).astype(np.float32)
    m, n = x32.shape
    amax = np.max(np.abs(x32.reshape(m // 32, 32, n)), axis=1)
    if nv:
        e = e8m0_nv(amax, 6.0 if fp4 else 448.0)
    else:
        e = e8m0_ocp(bf16_trunc(amax) if x.dtype == np.float16 else amax, 2 if fp4 else 8)
    scaled = x32.astype(np.float64) * np.repeat(np.ldexp(1.0, 127 - e.astype(np.int64)), 32, axis=0)
    q = e2m1_codes(scaled) if fp4 else e4m3_bytes(scaled)
    if x.dtype == np.float32:
        stored_max = amax
    elif x.dtype == np.float16:
        stored_max = amax.astype(np.float16) if nv else (bf16_trunc(amax).view(np.uint32) >> 16).astype(np.uint16)
    else:
        stored_max = amax.astype(bfloat16)
    return e, q, np.asarray(stored_max)


def _interleave(e):
    h, n = e.shape
    return e.reshape(h // 2, 2, n).transpose(0, 2, 1).reshape(h // 2, 2 * n)


@pytest.mark.parametrize("case", params(CASES, fast={"case_bf16_64x128", "case_mxfp4_fp16_64x128"}))
def test_tquant_dn(case):
    name, kind, dt, m, n, nv, inter, srows = case
    full = f"{SUITE}.{name}"
    x = _inputs()[name]
    fp4 = kind == "fp4"
    core = aiv()
    alg = (MxQuantAlg.NvMxFp4E2M1 if nv else MxQuantAlg.OcpMxFp4E2M1) if fp4 else \
        (MxQuantAlg.NvMxFp8E4M3 if nv else MxQuantAlg.OcpMxFp8E4M3)
    esz = np.dtype(dt).itemsize
    if kind == "valid":  # RunTQuantDNValidShapeBody: static 48 columns, valid N
        scols = 48
        a_dst = srows * scols * esz  # the kernel's UB plan: src, dst, exp, max, scaling back to back
        a_exp = a_dst + srows * 64
        a_max = a_exp + -(-(srows // 64) * 96 // 32) * 32
        a_sc = a_max + (srows // 32) * scols * esz
        src = Tile.of("ND", V, dt, srows, scols, valid=(m, n), pad=PadValue.Zero).assign(core, 0)
        dst = Tile.of("ND", V, "int8", srows, 64, valid=(m, n)).assign(core, a_dst)  # fp8StaticCols = ceil32(48)
        e8 = Tile.of("ND", V, "uint8", srows // 64, 96, valid=(m // 64, 2 * n)).assign(core, a_exp)
        mx = Tile.of("ND", V, dt, srows // 32, scols, valid=(m // 32, n)).assign(core, a_max)
        sc = Tile.of("ND", V, dt, srows // 32, scols, valid=(m // 32, n)).assign(core, a_sc)
        tload(src, gm_in(x), RowMajor(m, n))
        tquant(dst, src, e8, mx, sc, alg=alg, grp_axis=0, interleave=True)
        dbuf, dt_ = gm_out(m * n, "int8")
        dst.set_valid(m, n)
        tstore(dt_, RowMajor(m, n), dst)
        ebuf, et = gm_out(m // 64 * 2 * n, "uint8")
        tstore(et, RowMajor(m // 64, 2 * n), e8)
        xp = np.zeros((m, scols), dt)
        xp[:, :n] = x
        e, q, _ = _expect(xp, False, nv)
        np.testing.assert_array_equal(dbuf.raw, q[:, :n].reshape(-1))
        np.testing.assert_array_equal(ebuf.raw, _interleave(e)[:, : 2 * n].reshape(-1))
        check_golden(FAMILY, full, "golden_fp8_nd.bin", dbuf.raw)
        check_golden(FAMILY, full, "golden_e8_dn_interleaved.bin", ebuf.raw)
        return
    hat = m // 32
    src = Tile.of("ND", V, dt, m, n, pad=PadValue.Zero).assign(core, 0)
    mx = Tile.of("ND", V, dt, hat, n).assign(core, 0x10000)
    sc = Tile.of("ND", V, dt, hat, n).assign(core, 0x11000)
    e_shape = (-(-m // 64), 2 * n) if inter else (hat, n)
    e8 = Tile.of("ND", V, "uint8", *e_shape).assign(core, 0x12000)
    e, q, stored_max = _expect(x, fp4, nv)
    tload(src, gm_in(x), RowMajor(m, n))
    pr16 = -(-m // 16) * 16
    if fp4:
        pc = n // 2  # packed bytes per row
        d = Tile.of("ND", V, "float4_e2m1fn", 1, -(-m * pc // 32) * 32 * 2).assign(core, 0x14000)
        tquant(d, src, e8, mx, sc, alg=alg, grp_axis=0, interleave=inter)
        as_bytes = Tile.of("ND", V, "uint8", m, pc).assign(core, 0x14000)  # the same UB bytes, a uint8 view
        nz = Tile.of("NZ", V, "uint8", pr16 + 1, pc, valid=(m, pc), compact=CompactMode.RowPlusOne).assign(core, 0x18000)
        tmov(nz, as_bytes)
        want_d = pack_fp4(q.reshape(-1)).reshape(m, pc)
        nd_buf, nd_t = gm_out(m * pc, "uint8")
        tstore(nd_t, RowMajor(m, pc), as_bytes)
        nz_buf, nz_t = gm_out(m * pc, "uint8")
        tstore(nz_t, pto_layout("NZ", m, pc, 16, 32), nz)
        nd_name, nz_name = "golden_fp4_nd.bin", "golden_fp4_nz.bin"
    else:
        d = Tile.of("ND", V, "int8", m, n).assign(core, 0x14000)
        tquant(d, src, e8, mx, sc, alg=alg, grp_axis=0, interleave=inter)
        nz = Tile.of("NZ", V, "int8", pr16 + 1, n, valid=(m, n), compact=CompactMode.RowPlusOne).assign(core, 0x18000)
        tmov(nz, d)
        want_d = q
        nd_buf, nd_t = gm_out(m * n, "int8")
        tstore(nd_t, RowMajor(m, n), d)
        nz_buf, nz_t = gm_out(m * n, "int8")
        tstore(nz_t, pto_layout("NZ", m, n, 16, 32), nz)
        pc = n
        nd_name, nz_name = "golden_fp8_nd.bin", "golden_fp8_nz.bin"
        if not inter:  # exponents DN -> ZZ, stored flat
            zz = Tile.of("ZZ", V, "uint8", n, hat, fractal=32).assign(core, 0x30000)
            tmp = Tile.of("ND", V, "uint8", 1, 64).assign(core, 0x38000)
            tmov_zz(zz, e8, tmp, grp_axis=0)
            flat = -(-m * (n // 32) // 32) * 32
            zbuf, zt = gm_out(flat, "uint8")
            tstore(zt, RowMajor(1, flat), Tile.of("ND", V, "uint8", 1, flat).assign(core, 0x30000))
            want_zz = np.zeros(flat, np.uint8)
            zzb = e.T.reshape(n // 16, 16, hat // 2, 2).transpose(0, 2, 1, 3).reshape(-1)
            want_zz[: zzb.size] = zzb
            np.testing.assert_array_equal(zbuf.raw, want_zz, err_msg="E8M0 ZZ")
            check_golden(FAMILY, full, "golden_e8_zz.bin", zbuf.raw)
    ebuf, et = gm_out(e_shape[0] * e_shape[1], "uint8")
    tstore(et, RowMajor(*e_shape), e8)
    mbuf, mt = gm_out(hat * n * esz, dt)
    tstore(mt, RowMajor(hat, n), mx)
    np.testing.assert_array_equal(nd_buf.raw, want_d.reshape(-1), err_msg="data ND")
    want_nz = want_d.reshape(m, pc // 32, 32).transpose(1, 0, 2)
    np.testing.assert_array_equal(nz_buf.raw, want_nz.reshape(-1), err_msg="data NZ")
    want_e = _interleave(e) if inter else e
    np.testing.assert_array_equal(ebuf.raw, want_e.reshape(-1), err_msg="E8M0 DN")
    np.testing.assert_array_equal(mbuf.raw, np.ascontiguousarray(stored_max).view(np.uint8).reshape(-1),
                                  err_msg="group maxima")
    check_golden(FAMILY, full, nd_name, nd_buf.raw)
    check_golden(FAMILY, full, nz_name, nz_buf.raw)
    check_golden(FAMILY, full, "golden_e8_dn_interleaved.bin" if inter else "golden_e8_dn.bin", ebuf.raw)
    check_golden(FAMILY, full, "golden_group_max.bin", mbuf.raw)
