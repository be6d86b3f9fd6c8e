"""PTO-ISA conformance: ``tests/npu/a5/src/st/testcase/tmov_zz`` (TQUANT MXFP8 + TMOV ND -> NZ + TMOV ND -> ZZ).

Inputs as gen_data.py draws them (global stream seeded 19; per case a lognormal(0, 2) magnitude and a uniform sign
draw, clipped to +-1e8). Each fp32 case runs the kernel's sequence: TLOAD, TQUANT into a flat exponent tile of
``ceil16(rows) * G`` bytes, TMOV ND -> NZ (RowPlusOne), TMOV ND -> ZZ reading that flat tile densely, TSTOREs; the ZZ
bytes and the NZ data (rows padded to 16) are compared bit for bit with expectations computed here.

The two ``case_e8m0_*`` cases type the exponent tiles float8_e8m0 and make the TQUANT exponent tile two-dimensional
(``ceil16(rows) x 32``). At PTO-ISA HEAD, TQUANT writes a 2-D exponent tile row by row at its row stride (the 2-D
path of ``TQuant.hpp``, added after these cases) and TMOV ND -> ZZ reads its source densely, so the reference code
cannot produce these cases' goldens (which assume packed exponents); they are listed as not applicable in
``docs/pto-conformance.md``. :func:`test_e8m0_cases_with_the_layout_reading` shows that ``tmov_zz(source="layout")``
(reading the exponents through the source tile) gives exactly their goldens.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from pto_helpers import aiv
from st_common import Bump, check_golden, e4m3_bytes, e8m0_ocp, gm_in, gm_out, params, scale_down

from catlass_py.layout import RowMajor
from catlass_py.tile.pto import CompactMode, PadValue, Tile, TileType, pto_layout, tload, tmov, tmov_zz, tquant, tstore

FAMILY = "tmov_zz"
SUITE = "TMOVZZTest"
V = TileType.Vec

SHAPES = [(32, 64), *[(64, 64 * k) for k in range(1, 15)], (128, 128), (128, 256), (128, 384), (256, 192), (8, 64),
          (6, 64), (13, 64), (3, 64), (29, 64), (31, 64), (47, 64), (31, 128), (47, 128), (31, 256), (47, 256)]
CASES = [(f"case_fp32_{r}x{c}", r, c) for r, c in SHAPES] + [("case_e8m0_64x128", 64, 128), ("case_e8m0_32x64", 32, 64)]
RUN = CASES[:-2]
assert len(CASES) == 32


@functools.lru_cache(maxsize=1)
def _inputs() -> dict:
    rs = np.random.RandomState(19)
    out = {}
    for name, r, c in CASES:
        mags = rs.lognormal(mean=0.0, sigma=2.0, size=(r, c))
        signs = np.where(rs.rand(r, c) < 0.5, -1.0, 1.0)
        out[name] = np.clip((mags * signs).astype(np.float32), -1e8, 1e8)
    return out


def _expect(x):
    r, c = x.shape
    amax = np.max(np.abs(x.reshape(r, c // 32, 32)), axis=-1)
    e = e8m0_ocp(amax, 8)
    q = e4m3_bytes(scale_down(x, e, axis=1))
    r16 = -(-r // 16) * 16
    qp, ep = np.zeros((r16, c), np.uint8), np.zeros((r16, c // 32), np.uint8)
    qp[:r], ep[:r] = q, e
    nz = qp.reshape(r16, c // 32, 32).transpose(1, 0, 2)
    zz = ep.reshape(r16 // 16, 16, c // 64, 2).transpose(0, 2, 1, 3)
    return nz.reshape(-1), zz.reshape(-1)


def _run(r, c, x, *, e8m0_2d=False, source="dense"):
    core = aiv()
    ub = Bump()
    g = c // 32
    r16 = -(-r // 16) * 16
    src = ub.tile(Tile.of("ND", V, "float32", r, c, pad=PadValue.Zero), core)
    fp8 = Tile.of("ND", V, "int8", r, c).assign(core, 0)  # the kernel quantises in place over the source
    mx = ub.tile(Tile.of("ND", V, "float32", 1, -(-r * g // 8) * 8), core)
    sc = ub.tile(Tile.of("ND", V, "float32", 1, -(-r * g // 8) * 8), core)
    edt = "float8_e8m0fnu" if e8m0_2d else "uint8"
    if e8m0_2d:
        e8 = ub.tile(Tile.of("ND", V, edt, r16, 32), core)
    else:
        e8 = ub.tile(Tile.of("ND", V, edt, 1, -(-r16 * g // 32) * 32, valid=(1, r16 * g)), core)
    tload(src, gm_in(x), RowMajor(r, c))
    tquant(fp8, src, e8, mx, sc)
    # the NZ tile goes after the work tiles, or (large cases, as the kernel's plan) into the dead source space
    nz_tile = Tile.of("NZ", V, "int8", r16 + 1, c, valid=(r, c), compact=CompactMode.RowPlusOne)
    big = ub.next + nz_tile.nbytes + 4096 > core.resource.ub_buf.size
    nz = nz_tile.assign(core, -(-(r * c + 256) // 256) * 256) if big else ub.tile(nz_tile, core)
    # TMovToVecNd2Nz stores the r valid rows only; gen_data's golden has zeros in rows r..r16, i.e. it assumes UB
    # bytes the kernel never writes read as zero: start the NZ tile zeroed (the simulator poisons fresh UB)
    nz.tensor.view().view(np.uint8)[: nz_tile.nbytes] = 0
    tmov(nz, fp8)
    ub.next = max(ub.next, -(-(nz.tensor.byte_offset + nz_tile.nbytes) // 256) * 256)
    zz_at = ub.next
    zz = ub.tile(Tile.of("ZZ", V, edt, r16, g, fractal=32, valid=(r, g)), core)
    tmp = ub.tile(Tile.of("ND", V, edt, 1, -(-((32 + (r16 // 16) * (g // 2)) * 2) // 32) * 32), core)
    if source == "layout":
        e8.set_valid(r, g)
    tmov_zz(zz, e8, tmp, source=source)
    ebuf, et = gm_out(r16 * g, "uint8")
    tstore(et, RowMajor(1, r16 * g), Tile.of("ND", V, "uint8", 1, -(-r16 * g // 32) * 32, valid=(1, r16 * g))
           .assign(core, zz_at))  # E8StoreTile: a flat alias of the ZZ tile
    dbuf, dt = gm_out(r16 * c, "int8")
    nz.set_valid(r16, c)
    tstore(dt, pto_layout("NZ", r16, c, 16, 32), nz)
    return dbuf.raw.copy(), ebuf.raw.copy()


@pytest.mark.parametrize("case", params(RUN, fast={"case_fp32_32x64", "case_fp32_13x64", "case_fp32_47x256"}))
def test_tmov_zz(case):
    name, r, c = case
    x = _inputs()[name]
    d, e = _run(r, c, x)
    want_d, want_e = _expect(x)
    np.testing.assert_array_equal(e, want_e, err_msg="E8M0 ZZ")
    np.testing.assert_array_equal(d, want_d, err_msg="fp8 NZ")
    check_golden(FAMILY, f"{SUITE}.{name}", "golden_e8_zz.bin", e)
    check_golden(FAMILY, f"{SUITE}.{name}", "golden_fp8_nz.bin", d)


@pytest.mark.parametrize("case", CASES[-2:], ids=lambda c: c[0])
def test_e8m0_cases_with_the_layout_reading(case):
    """The e8m0 cases: a 2-D exponent tile read through its layout reproduces their goldens; PTO-ISA's dense
    reading (the default) does not (see the module docstring)."""
    name, r, c = case
    x = _inputs()[name]
    want_d, want_e = _expect(x)
    d, e = _run(r, c, x, e8m0_2d=True, source="layout")
    np.testing.assert_array_equal(e, want_e)
    np.testing.assert_array_equal(d, want_d)
    check_golden(FAMILY, f"{SUITE}.{name}", "golden_e8_zz.bin", e)
    _, e_dense = _run(r, c, x, e8m0_2d=True)
    assert not np.array_equal(e_dense, want_e)
