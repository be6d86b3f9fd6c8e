"""PTO-ISA conformance: ``tests/npu/a5/src/st/testcase/tinsert_zn`` (TINSERT of a Vec ZN tile into a Mat ZN tile, the
Ascend 950 UB -> L1 row-block bursts of ``TInsertZNImpl``: whole tiles for 2-, 4-, 1-byte and fp4 types, and windows
at (indexRow, indexCol) over a background, including valid column counts below the tile's).

gen_data.py draws without a seed: fresh draws here (``uniform(-10, 10)`` for floats, ``randint`` over the integer
range otherwise), upstream inputs with ``PTO_ST_GOLDEN_DIR``. The inputs are already in ZN order (boxes of
32 bytes of rows x 16 columns, row-major boxes, column-major inside). Kernel: TLOAD the bytes as a flat ND tile and
alias it as the ZN source; for the offset cases TLOAD the background too and seed the L1 tile with it
(``copy_ubuf_to_cbuf``, a harness byte copy); TINSERT; the cube core copies L1 back (``copy_cbuf_to_ubuf``) and the
vector core TSTOREs the bytes. Expected: the ZN image of the source (whole-tile cases) or of the background with the
window written, bit for bit.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from pto_helpers import aiv
from st_common import case_input, case_rng, check_golden, gm_in, gm_out, params

from catlass_py.layout import RowMajor
from catlass_py.tile.pto import Tile, TileType, tinsert, tload, tstore

FAMILY, SUITE = "tinsert_zn", "TInsertZNTest"
V, M = TileType.Vec, TileType.Mat
NP = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32, "int32": np.int32,
      "int8": np.int8, "float8_e4m3fn": np.uint8, "float8_e5m2": np.uint8, "hifloat8": np.uint8,
      "float8_e8m0fnu": np.uint8}

CASES = [(f"case_zn_{i + 1}", "whole", p) for i, p in enumerate([
    ("float16", 16, 16), ("float16", 16, 32), ("float32", 8, 16), ("float32", 16, 32), ("int32", 8, 16),
    ("int8", 32, 32), ("float16", 32, 64), ("bfloat16", 16, 32), ("float8_e4m3fn", 32, 32), ("float8_e5m2", 32, 32),
    ("hifloat8", 32, 64), ("float8_e8m0fnu", 32, 32)])]
CASES += [("case_zn_fp4_1", "fp4", ("float4_e2m1fn", 64, 32)), ("case_zn_fp4_2", "fp4", ("float4_e1m2", 64, 32))]
# (dtype, valid rows, valid cols, source cols, dst rows, dst cols, indexRow, indexCol)
CASES += [(f"case_zn_offset_{i + 1}", "offset", p) for i, p in enumerate([
    ("float16", 16, 16, 16, 32, 32, 0, 0), ("float16", 16, 16, 16, 32, 32, 16, 16), ("float32", 8, 16, 16, 16, 32, 8, 16),
    ("float16", 16, 15, 16, 16, 32, 0, 0), ("int8", 32, 32, 32, 64, 64, 32, 32), ("float16", 16, 32, 32, 32, 64, 0, 32),
    ("float16", 16, 16, 16, 32, 32, 16, 0), ("float32", 8, 15, 16, 16, 32, 8, 16), ("float16", 32, 32, 32, 64, 64, 0, 32),
    ("float16", 16, 16, 16, 16, 48, 0, 8), ("float32", 8, 16, 16, 8, 48, 0, 24), ("float16", 16, 16, 16, 32, 48, 16, 8),
    ("float32", 8, 13, 16, 8, 48, 0, 24)])]
assert len(CASES) == 27
FAST = {"case_zn_6", "case_zn_fp4_2", "case_zn_offset_8", "case_zn_offset_12"}


def _rand(rng, dt, shape):
    npd = np.dtype(NP[dt])
    if dt == "int8":
        return rng.integers(-128, 127, size=shape).astype(np.int8)
    if dt == "int32":
        return rng.integers(-128, 128, size=shape).astype(np.int32)
    if npd == np.uint8:
        return rng.integers(0, 256, size=shape, dtype=np.uint8)
    if dt == "bfloat16":
        return rng.integers(0, 65536, size=shape, dtype=np.uint16).view(ml_dtypes.bfloat16)
    return rng.uniform(-10, 10, size=shape).astype(npd)


def _zn(arr: np.ndarray) -> np.ndarray:
    """An ND matrix in ZN order: boxes of (32 bytes of rows) x 16 columns, column-major inside."""
    r, c = arr.shape
    ir = 32 // arr.dtype.itemsize
    return arr.reshape(r // ir, ir, c // 16, 16).transpose(0, 2, 3, 1).reshape(-1)


def _bytes(t: Tile) -> np.ndarray:
    return t.tensor.view().view(np.uint8)[: t.nbytes]


def _readback_store(v, mat: Tile, nbytes: int, at: int) -> np.ndarray:
    """copy_cbuf_to_ubuf of the L1 tile's bytes into a flat UB tile, TSTORE as a flat ND."""
    ub = Tile.of("ND", V, "uint8", 1, nbytes).assign(v, at)
    _bytes(ub)[:] = _bytes(mat)[:nbytes]
    buf, out = gm_out(nbytes, "uint8")
    tstore(out, RowMajor(1, nbytes), ub)
    return buf.raw.copy()


@pytest.mark.parametrize("case", params(CASES, fast=FAST))
def test_tinsert_zn(case):
    name, kind, p = case
    full = f"{SUITE}.{name}"
    rng = case_rng(name)
    v = aiv()
    if kind in ("whole", "fp4"):
        dt, rows, cols = p
        brows = rows // 2 if kind == "fp4" else rows
        npd = np.uint8 if kind == "fp4" else NP[dt]
        flat = case_input(FAMILY, full, "input_arr.bin", npd, (brows * cols,),
                          lambda: (_zn(_rand(rng, dt, (rows, cols))) if kind == "whole"
                                   else rng.integers(0, 256, size=brows * cols, dtype=np.uint8)))
        ldt = "uint8" if kind == "fp4" or np.dtype(npd) == np.uint8 else dt
        nd = Tile.of("ND", V, ldt, brows, cols).assign(v, 0x0)
        tload(nd, gm_in(flat.view(NP.get(ldt, np.uint8)).reshape(brows, cols), "src", ldt), RowMajor(brows, cols))
        src = Tile.of("ZN", V, dt, rows, cols).assign(v, 0x0)
        mat = Tile.of("ZN", M, dt, rows, cols).assign(v, 0x0)
        tinsert(mat, src, 0, 0)
        got = _readback_store(v, mat, src.nbytes, 0x10000)
        want = flat.view(np.uint8)
        golden_file = "golden_output.bin"
    else:
        dt, vr, vc, sc, dr, dc, ir, ic = p
        npd = NP[dt]

        def make():
            bg = _rand(rng, dt, (dr, dc))
            data = np.zeros((vr, sc), npd)
            data[:, :vc] = _rand(rng, dt, (vr, vc))
            return np.concatenate([_zn(bg).view(np.uint8), _zn(data).view(np.uint8)]).view(npd)

        flat = case_input(FAMILY, full, "input_arr.bin", npd, (-1,), make)
        bg_zn, src_zn = flat[: dr * dc], flat[dr * dc:]
        bg_t = Tile.of("ND", V, dt, dr, dc).assign(v, 0x0)
        src_nd = Tile.of("ND", V, dt, vr, sc).assign(v, 0x10000)
        tload(bg_t, gm_in(bg_zn.reshape(dr, dc), "bg", dt), RowMajor(dr, dc))
        tload(src_nd, gm_in(src_zn.reshape(vr, sc), "src", dt), RowMajor(vr, sc))
        mat = Tile.of("ZN", M, dt, dr, dc).assign(v, 0x0)
        _bytes(mat)[:] = _bytes(bg_t)  # copy_ubuf_to_cbuf
        src = Tile.of("ZN", V, dt, vr, sc, valid=(vr, vc)).assign(v, 0x10000)
        tinsert(mat, src, ir, ic)
        got = _readback_store(v, mat, mat.nbytes, 0x20000)
        irow = 32 // np.dtype(npd).itemsize

        def nd_of(z, r, c):
            return z.reshape(r // irow, c // 16, 16, irow).transpose(0, 3, 1, 2).reshape(r, c)

        want_nd = nd_of(bg_zn, dr, dc).copy()
        want_nd[ir:ir + vr, ic:ic + vc] = nd_of(src_zn, vr, sc)[:, :vc]
        want = _zn(want_nd).view(np.uint8)
        golden_file = "golden_output.bin"
    np.testing.assert_array_equal(got, want)
    check_golden(FAMILY, full, golden_file, got)
