"""PTO-ISA conformance: ``tests/npu/a5/src/st/testcase/textract_ndto2xnz`` (TEXTRACT of two ND windows into two NZ
tiles in one instruction).

Inputs as gen_data.py draws them (global stream seeded 42; per case ``rows x cols x esize`` random bytes, in its case
order). Kernel: TLOAD the 64 x 128 source, TEXTRACT(dst0, dst1, src, ir0, ic0, ir1, ic1) into two 32 x 64 NZ tiles
(or 16 x C0 tiles with a 1 x 1 valid region), TSTORE both in the NZ GM layout. Expected: each window's bytes in NZ
order (16-row fractals of 32-byte blocks); for 1 x 1 windows the single element.
"""

import functools

import numpy as np
import pytest
from pto_helpers import aiv
from st_common import check_golden, gm_in, gm_out, params

from catlass_py.layout import RowMajor
from catlass_py.tile.pto import Tile, TileType, pto_layout, textract_2xnz, tload, tstore

FAMILY, SUITE, V = "textract_ndto2xnz", "TExtractNd2xNzTest", TileType.Vec
DT = {"half": "float16", "float": "float32", "bf16": "bfloat16", "int8": "int8", "int32": "int32",
      "hif8": "hifloat8", "fp8e4m3": "float8_e4m3fn", "fp8e5m2": "float8_e5m2", "fp8e8m0": "float8_e8m0fnu"}
A, B = (32, 64, 0, 0), (32, 64, 32, 64)
CASES = [("case_half_aligned", 2, [A, B]), ("case_half_unaligned", 2, [A, (32, 64, 16, 8)]),
         ("case_float_aligned", 4, [A, B]), ("case_float_unaligned", 4, [A, (32, 64, 16, 4)]),
         ("case_bf16_aligned", 2, [A, B]), ("case_int8_aligned", 1, [A, B]), ("case_int8_unaligned", 1, [A, (32, 64, 16, 16)]),
         ("case_int32_aligned", 4, [A, B]), ("case_hif8_aligned", 1, [A, B]), ("case_fp8e4m3_aligned", 1, [A, B]),
         ("case_fp8e5m2_aligned", 1, [A, B]), ("case_fp8e8m0_aligned", 1, [A, B]),
         ("case_half_1x1", 2, [(1, 1, 0, 0), (1, 1, 5, 7)]), ("case_float_1x1", 4, [(1, 1, 0, 0), (1, 1, 10, 3)]),
         ("case_int8_1x1", 1, [(1, 1, 0, 0), (1, 1, 20, 17)])]


@functools.lru_cache(maxsize=1)
def _inputs():
    rs = np.random.RandomState(42)
    return {name: rs.randint(0, 256, size=(64, 128, es), dtype=np.uint8) for name, es, _ in CASES}


@pytest.mark.parametrize("case", params(CASES, fast={"case_half_unaligned", "case_int8_1x1"}))
def test_textract_ndto2xnz(case):
    name, es, wins = case
    dt = DT[name.split("_")[1]]
    src_bytes = _inputs()[name]
    core = aiv()
    src = Tile.of("ND", V, dt, 64, 128).assign(core, 0)
    host = src_bytes.reshape(64, 128 * es)
    tload(src, gm_in(host, dtype=dt), RowMajor(64, 128))
    c0 = 32 // es
    dsts = []
    for k, (r, c, _, _) in enumerate(wins):
        if (r, c) == (1, 1):
            dsts.append(Tile.of("NZ", V, dt, 16, c0, valid=(1, 1)).assign(core, 0x20000 + k * 0x10000))
        else:
            dsts.append(Tile.of("NZ", V, dt, r, c).assign(core, 0x20000 + k * 0x10000))
    textract_2xnz(dsts[0], dsts[1], src, wins[0][2], wins[0][3], wins[1][2], wins[1][3])
    for k, (r, c, ir, ic) in enumerate(wins):
        d = dsts[k]
        buf, out = gm_out(d.nbytes, dt)
        d.set_valid(d.rows, d.cols)
        tstore(out, pto_layout("NZ", d.rows, d.cols, 16, c0), d)
        win = src_bytes[ir: ir + r, ic: ic + c, :]
        if (r, c) == (1, 1):
            got, want = buf.raw[:es], win.reshape(-1)
        else:
            got = buf.raw
            want = win.reshape(r // 16, 16, c // c0, c0, es).transpose(2, 0, 1, 3, 4).reshape(-1)
        np.testing.assert_array_equal(got, want, err_msg=f"dst{k}")
        check_golden(FAMILY, f"{SUITE}.{name}", f"golden{k}.bin", got)
