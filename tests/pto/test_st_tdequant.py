"""PTO-ISA conformance: ``tests/npu/a5/src/st/testcase/tdequant`` (TDEQUANT int8 / int16 -> fp32 with per-row scale and
offset).

Inputs as gen_data.py draws them (global stream seeded 23, case order: the ``row x col`` source, then the scale and
offset columns, offsets zeroed over the valid rows when the case's flag is set). Kernel: TLOAD the valid region of the
source and the two ``valid rows x 1`` parameter columns (DN), TDEQUANT, TSTORE the valid region. Expected:
``fp32(fp32(x - offset) * scale)`` on the valid region, zeros elsewhere; compared bit for bit (the case's tolerance
is 1e-3).
"""

import functools

import numpy as np
import pytest
from pto_helpers import aiv
from st_common import check_golden, gm_in, gm_out, params

from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.tile.pto import Tile, TileType, tdequant, tload, tstore

FAMILY, SUITE, V = "tdequant", "TDEQUANTTest", TileType.Vec
CASES = [(f"case{i + 1}", *p) for i, p in enumerate([
    (np.int16, True, 64, 64, 64, 64), (np.int16, False, 128, 128, 64, 64), (np.int16, False, 128, 128, 63, 63),
    (np.int8, True, 64, 64, 64, 64), (np.int8, False, 128, 128, 64, 64), (np.int8, False, 128, 128, 63, 63),
    (np.int16, True, 51, 112, 51, 112)])]


@functools.lru_cache(maxsize=1)
def _inputs():
    rs = np.random.RandomState(23)
    out = {}
    for name, st, flag, r, c, vr, vc in CASES:
        x = rs.uniform(low=-100, high=100, size=(r, c)).astype(st)
        scale = rs.uniform(low=-100, high=100, size=(r, 1)).astype(np.float32)
        offset = rs.uniform(low=-100, high=100, size=(r, 1)).astype(np.float32)
        if flag:
            offset[:vr] = 0
        out[name] = (x, scale, offset)
    return out


@pytest.mark.parametrize("case", params(CASES, fast={"case3", "case6"}))
def test_tdequant(case):
    name, st, flag, r, c, vr, vc = case
    x, scale, offset = _inputs()[name]
    core = aiv()
    para_rows = -(-r * 4 // 32) * 32 // 4
    src = Tile.of("ND", V, np.dtype(st).name, r, c, valid=(vr, vc)).assign(core, 0)
    dst = Tile.of("ND", V, "float32", r, c, valid=(vr, vc)).assign(core, r * c * np.dtype(st).itemsize)
    sc = Tile.of("DN", V, "float32", para_rows, 1, valid=(vr, 1)).assign(core, r * c * (np.dtype(st).itemsize + 4))
    of = Tile.of("DN", V, "float32", para_rows, 1, valid=(vr, 1)).assign(core, r * c * (np.dtype(st).itemsize + 4)
                                                                         + para_rows * 4 + 224)
    tload(src, gm_in(x), RowMajor(vr, vc, c))
    tload(sc, gm_in(scale), ColumnMajor(vr, 1, r))
    tload(of, gm_in(offset), ColumnMajor(vr, 1, r))
    tdequant(dst, src, sc, of)
    buf, out = gm_out(r * c * 4, "float32")
    tstore(out, RowMajor(vr, vc, c), dst)
    want = np.zeros((r, c), np.float32)
    want[:vr, :vc] = (x[:vr, :vc].astype(np.float32) - offset[:vr]) * scale[:vr]
    np.testing.assert_array_equal(buf.raw.view(np.float32).reshape(r, c), want)
    check_golden(FAMILY, f"{SUITE}.{name}", "golden.bin", buf.raw)
