"""PTO-ISA conformance: ``tests/npu/a5/src/st/testcase/textract_nd_vec`` (TEXTRACT Vec ND -> Vec ND at an offset, and the
1 x 1 scalar extraction into a wider tile).

gen_data.py draws without a seed, so the inputs here are fresh draws of the same distributions (or the upstream
input files when ``PTO_ST_GOLDEN_DIR`` is set). Kernel: TLOAD src and the destination's initial contents, TEXTRACT,
TSTORE; expected = the initial destination with its (valid) window replaced by the source window.
"""

import numpy as np
import pytest
from pto_helpers import aiv
from st_common import case_input, case_rng, check_golden, gm_in, gm_out, params, rand_like_gen

from catlass_py.layout import RowMajor
from catlass_py.tile.pto import Tile, TileType, textract, tload, tstore

FAMILY, SUITE, V = "textract_nd_vec", "TExtractNDVecTest", TileType.Vec
F32, F16, I8 = np.float32, np.float16, np.int8
CASES = [(f"case_nd_vec_{i + 1}", *p) for i, p in enumerate([
    (F32, 16, 16, 8, 8, 0, 0), (F32, 16, 16, 8, 8, 4, 8), (F16, 32, 32, 16, 16, 8, 16), (I8, 64, 64, 32, 32, 0, 32),
    (F16, 32, 48, 16, 16, 4, 16), (F32, 16, 24, 8, 8, 3, 8), (F32, 16, 24, 8, 8, 0, 3), (F16, 16, 48, 8, 16, 2, 5),
    (I8, 64, 64, 32, 32, 0, 7)])] + [
    (f"case_nd_vec_{10 + i}", dt, r, c, 1, 1, ir, ic) for i, (dt, r, c, ir, ic) in enumerate([
        (F32, 16, 16, 5, 7), (F16, 32, 32, 10, 15), (I8, 64, 64, 20, 30)])]


@pytest.mark.parametrize("case", params(CASES, fast={c[0] for c in CASES}))
def test_textract_nd_vec(case):
    name, dt, sr, sc, dr, dc, ir, ic = case
    full = f"{SUITE}.{name}"
    rng = case_rng(name)
    scalar = dr == 1 and dc == 1
    dcols = 32 // np.dtype(dt).itemsize if scalar else dc
    src_data = case_input(FAMILY, full, "src_input.bin", dt, (sr, sc), lambda: rand_like_gen(rng, dt, (sr, sc)))
    init = case_input(FAMILY, full, "dst_init.bin", dt, (dr, dcols), lambda: rand_like_gen(rng, dt, (dr, dcols)))
    core = aiv()
    src = Tile.of("ND", V, dt, sr, sc).assign(core, 0)
    at = -(-src.nbytes // 256) * 256
    load = Tile.of("ND", V, dt, dr, dcols).assign(core, at)
    dst = Tile.of("ND", V, dt, dr, dcols, valid=(1, 1) if scalar else None).assign(core, at)  # same bytes as load
    tload(src, gm_in(src_data), RowMajor(sr, sc))
    tload(load, gm_in(init), RowMajor(dr, dcols))
    textract(dst, src, ir, ic)
    buf, out = gm_out(load.nbytes, dt)
    tstore(out, RowMajor(dr, dcols), load)
    want = init.copy()
    want[:dr, :dc] = src_data[ir: ir + dr, ic: ic + dc]
    np.testing.assert_array_equal(buf.raw, want.view(np.uint8).reshape(-1))
    check_golden(FAMILY, full, "golden_output.bin", buf.raw)
