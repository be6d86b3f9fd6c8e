"""PTO-ISA conformance: ``tests/npu/a5/src/st/testcase/textract_vec`` (TEXTRACT Vec -> Vec: ND and NZ windows, partial
valid regions, 1 x 1 extractions, 8-bit float / HiFloat8 / fp4 element types).

gen_data.py draws without a seed: fresh draws of the same distributions here (upstream inputs with
``PTO_ST_GOLDEN_DIR``). Kernels: ND - TLOAD src (and the destination's initial contents when only part of it is
valid), TEXTRACT, TSTORE the whole destination; NZ - TLOAD src ND, TMOV ND -> NZ, TEXTRACT into an NZ tile, TSTORE in
the NZ GM layout. 8-bit float / HiFloat8 NZ cases move bytes through int8 tiles and extract through a view of the same
bytes in the element type, as the kernel's byte alias. Expected = initial destination with the window replaced.
"""

import numpy as np
import pytest
from pto_helpers import aiv
from st_common import case_input, case_rng, check_golden, gm_in, gm_out, params

from catlass_py.layout import RowMajor
from catlass_py.tile.pto import Tile, TileType, textract, tmov, tstore

FAMILY, SUITE, V = "textract_vec", "TExtractVecTest", TileType.Vec
HOST = {"float32": np.float32, "float16": np.float16, "bfloat16": np.uint16, "int32": np.int32, "int8": np.int8,
        "hifloat8": np.uint8, "float8_e4m3fn": np.uint8, "float8_e5m2": np.uint8, "float4_e2m1fn": np.uint8,
        "float4_e1m2": np.uint8}

# (name, kind, dtype, src rows, src cols, dst rows, dst cols, valid rows, valid cols, idx row, idx col); fp4 sizes in
# bytes (two codes each), as gen_data.py writes them
ND = [("case_nd_aligned_1", "float32", 16, 16, 8, 8, 8, 8, 0, 0), ("case_nd_aligned_2", "float32", 16, 16, 8, 8, 8, 8, 4, 8),
      ("case_nd_aligned_3", "float16", 32, 32, 16, 16, 16, 16, 8, 16),
      ("case_nd_aligned_4", "bfloat16", 32, 32, 16, 16, 16, 16, 0, 16),
      ("case_nd_aligned_5", "int32", 16, 16, 8, 8, 8, 8, 4, 0), ("case_nd_aligned_6", "int8", 64, 64, 32, 32, 32, 32, 0, 32),
      ("case_nd_unaligned_validcol_1", "float32", 16, 16, 8, 8, 8, 6, 0, 0),
      ("case_nd_unaligned_validcol_2", "float16", 16, 32, 8, 16, 8, 12, 4, 0),
      ("case_nd_unaligned_indexcol_1", "float32", 16, 16, 8, 8, 8, 8, 0, 3),
      ("case_nd_unaligned_indexcol_2", "float16", 16, 48, 8, 16, 8, 16, 2, 5),
      ("case_nd_unaligned_indexcol_3", "int8", 64, 64, 32, 32, 32, 32, 0, 7),
      ("case_nd_unaligned_validcol_3", "int8", 64, 64, 32, 32, 32, 24, 8, 0),
      ("case_nd_aligned_hif8", "hifloat8", 32, 64, 16, 32, 16, 32, 8, 32),
      ("case_nd_aligned_fp8_e4m3", "float8_e4m3fn", 32, 64, 16, 32, 16, 32, 4, 0),
      ("case_nd_aligned_fp8_e5m2", "float8_e5m2", 32, 64, 16, 32, 16, 32, 0, 0),
      ("case_nd_partial_validrow", "float16", 32, 32, 16, 16, 4, 16, 2, 8),
      ("case_nd_aligned_fp4_e2m1", "float4_e2m1fn", 16, 64, 16, 32, 16, 32, 0, 32),
      ("case_nd_aligned_fp4_e1m2", "float4_e1m2", 16, 64, 16, 32, 16, 32, 0, 0)]
ND_SCALAR = [("case_nd_scalar_1", "float32", 16, 16, 5, 7), ("case_nd_scalar_2", "float16", 32, 32, 10, 15),
             ("case_nd_scalar_3", "bfloat16", 32, 32, 3, 11), ("case_nd_scalar_4", "int8", 64, 64, 20, 30),
             ("case_nd_scalar_5", "int32", 16, 16, 7, 9), ("case_nd_scalar_fp4_e2m1", "float4_e2m1fn", 16, 32, 4, 21),
             ("case_nd_scalar_fp4_e1m2", "float4_e1m2", 16, 32, 9, 13)]
NZ = [("case_nz_1", "float32", 32, 32, 16, 32, 16, 32, 0, 0), ("case_nz_2", "float32", 32, 32, 16, 32, 16, 32, 16, 0),
      ("case_nz_3", "float16", 32, 32, 16, 32, 16, 32, 0, 0), ("case_nz_4", "bfloat16", 32, 32, 16, 32, 16, 32, 16, 0),
      ("case_nz_5", "int8", 32, 64, 16, 64, 16, 64, 0, 0), ("case_nz_6", "int8", 32, 64, 16, 64, 16, 64, 16, 0),
      ("case_nz_indexcol_nonzero", "int8", 32, 64, 16, 32, 16, 32, 8, 32),
      ("case_nz_partial_valid", "float16", 32, 32, 16, 32, 8, 16, 4, 0),
      ("case_nz_multi_fractal_dst", "float16", 64, 32, 32, 32, 32, 32, 0, 0),
      ("case_nz_hif8", "hifloat8", 32, 64, 16, 64, 16, 64, 0, 0),
      ("case_nz_fp8_e4m3", "float8_e4m3fn", 32, 64, 16, 64, 16, 64, 16, 0),
      ("case_nz_fp8_e5m2", "float8_e5m2", 32, 64, 16, 64, 16, 64, 0, 0),
      ("case_nz_int32", "int32", 32, 16, 16, 8, 16, 8, 4, 8)]
NZ_SCALAR = [("case_nz_scalar_1", "float32", 32, 32, 16, 32, 5, 9), ("case_nz_scalar_2", "float16", 32, 32, 16, 32, 7, 14),
             ("case_nz_scalar_3", "bfloat16", 32, 32, 16, 32, 11, 3), ("case_nz_scalar_4", "int8", 32, 64, 16, 64, 20, 33),
             ("case_nz_scalar_5", "int32", 32, 16, 16, 16, 4, 7),
             ("case_nz_scalar_fp4_e2m1", "float4_e2m1fn", 16, 64, 16, 64, 5, 17),
             ("case_nz_scalar_fp4_e1m2", "float4_e1m2", 16, 64, 16, 64, 11, 40)]
CASES = [("nd", *c) for c in ND] + [("nd_scalar", *c) for c in ND_SCALAR] + [("nz", *c) for c in NZ] + \
        [("nz_scalar", *c) for c in NZ_SCALAR]
assert len(CASES) == 45


def _draw(rng, dt, shape):
    h = HOST[dt]
    if h is np.int8:
        return rng.integers(-128, 127, size=shape).astype(np.int8)
    if h is np.uint8:
        return rng.integers(0, 256, size=shape).astype(np.uint8)
    if h is np.uint16:
        return rng.integers(0, 65536, size=shape).astype(np.uint16)
    if h is np.int32:
        return rng.integers(-1000, 1000, size=shape).astype(np.int32)
    return rng.uniform(-10, 10, size=shape).astype(h)


def _tile(fmt, dt, rows, cols, core, at, valid=None):
    """A tile of ``rows x cols`` host elements (bytes for fp4: two codes each)."""
    k = 2 if dt.startswith("float4") else 1
    v = None if valid is None else (valid[0], valid[1] * k)
    return Tile.of(fmt, V, dt, rows, cols * k, valid=v).assign(core, at)


def _put(tile, host):
    """Write host data (bytes for 8-bit / fp4 types) into a tile's storage through its layout."""
    if tile.dtype.packed:
        codes = np.stack([host & 0xF, host >> 4], axis=-1).reshape(host.shape[0], -1).astype(np.uint8)
        tile.write(codes)
    else:
        tile.write(host.view(tile.dtype.numpy))


@pytest.mark.parametrize("case", params(CASES, fast={"case_nd_aligned_2", "case_nd_aligned_fp4_e2m1", "case_nz_2",
                                                      "case_nz_partial_valid", "case_nz_scalar_fp4_e1m2",
                                                      "case_nd_scalar_3"}, key=lambda c: c[1]))
def test_textract_vec(case):
    kind, name = case[0], case[1]
    full = f"{SUITE}.{name}"
    rng = case_rng(name)
    if kind.endswith("scalar"):
        if kind == "nd_scalar":
            _, _, dt, sr, sc, ir, ic = case
            dr, dc = 1, 32 // np.dtype(HOST[dt]).itemsize
        else:
            _, _, dt, sr, sc, dr, dc, ir, ic = case
        vr, vc = 1, 1
    else:
        _, _, dt, sr, sc, dr, dc, vr, vc, ir, ic = case
    h = HOST[dt]
    k = 2 if dt.startswith("float4") else 1
    src_host = case_input(FAMILY, full, "src_input.bin", h, (sr, sc), lambda: _draw(rng, dt, (sr, sc)))
    partial = (vr, vc) != (dr, dc)
    init = None
    if partial:
        init_file = case_input(FAMILY, full, "dst_init.bin", h, (-1,), lambda: _draw(rng, dt, (dr * dc,)))
        init = init_file.reshape(dr, dc) if kind.startswith("nd") else \
            init_file.reshape(dc // (32 // h().itemsize), dr, 32 // h().itemsize).transpose(1, 0, 2).reshape(dr, dc)
    core = aiv()
    fmt = "ND" if kind.startswith("nd") else "NZ"
    src_nd = _tile("ND", dt, sr, sc, core, 0)
    _put(src_nd, src_host)
    if fmt == "NZ":  # TMOV ND -> NZ (through an int8 view for the 8-bit float / HiFloat8 byte alias)
        byte_alias = dt in ("hifloat8", "float8_e4m3fn", "float8_e5m2")
        src = _tile("NZ", dt, sr, sc, core, 0x10000)
        if byte_alias:
            tmov(_tile("NZ", "int8", sr, sc, core, 0x10000), _tile("ND", "int8", sr, sc, core, 0))
        elif dt.startswith("float4"):  # the fp4 cases load the NZ source bytes directly (their ND bytes repacked)
            _put(src, src_host)
        else:
            tmov(src, src_nd)
    else:
        src = src_nd
    at = 0x20000
    dst_full = _tile(fmt, dt, dr, dc, core, at)
    if partial:
        _put(dst_full, init)
    dst = _tile(fmt, dt, dr, dc, core, at, valid=(vr, vc))
    textract(dst, src, ir, ic * k)
    raw = dst_full.tensor.view().view(np.uint8) if not dst_full.dtype.packed else dst_full.tensor.view()
    want = init.copy() if partial else np.zeros((dr, dc), h)
    want[:vr, :vc] = src_host[ir: ir + vr, ic: ic + vc]
    if fmt == "NZ":
        c0 = 32 // h().itemsize
        want_bytes = want.reshape(dr, dc // c0, c0).transpose(1, 0, 2).reshape(-1).view(np.uint8)
        got = raw[: want_bytes.size]
    else:
        want_bytes = want.reshape(-1).view(np.uint8)
        got = raw[: want_bytes.size]
    np.testing.assert_array_equal(got, want_bytes)
    buf, out = gm_out(want_bytes.size, "uint8")
    store = Tile.of("ND", V, "uint8", 1, want_bytes.size).assign(core, at)
    tstore(out, RowMajor(1, want_bytes.size), store)
    check_golden(FAMILY, full, "golden_output.bin", buf.raw)  # full NZ tiles: GM NZ order = the tile's bytes
