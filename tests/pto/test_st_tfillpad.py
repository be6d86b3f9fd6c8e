"""PTO-ISA conformance: ``tests/npu/a5/src/st/testcase/tfillpad`` (a link to the A2/A3 case directory: TLOAD with a pad value,
then TFILLPAD / TFILLPAD_INPLACE / TFILLPAD_EXPAND on Vec tiles, with Min / Max / Zero / custom pad values).

The input is the index ramp ``in[i][j] = i * cols + j`` in the element type (main.cpp's ``get_input_golden_case``);
expected: the input on the source's valid region, the destination's pad value everywhere else of the static
``rows x cols`` (Min / Max = -inf / +inf for floats, the integer limits otherwise; custom -1.0f), compared bit for bit.
Kernel: TLOAD into a tile with the load PadVal (which fills the rest of each row's 32-byte block), TFILLPAD into a
tile with the fill PadVal (in place on the same bytes, or into a wider tile for Expand), TSTORE the whole destination.
"""

import numpy as np
import pytest
from pto_helpers import aiv
from st_common import gm_in, gm_out, params

from catlass_py.layout import RowMajor
from catlass_py.tile.pto import PadValue, TFillPadMode, Tile, TileType, pad_custom, tfillpad, tload, tstore

V = TileType.Vec
MIN, MAX, ZERO, NULL, NEG1 = PadValue.Min, PadValue.Max, PadValue.Zero, PadValue.Null, pad_custom(-1.0)
N, IP, EX = TFillPadMode.Normal, TFillPadMode.InPlace, TFillPadMode.Expand
CASES = [
    ("case_float_GT_128_127_VT_128_128_BLK1_PADMAX_PADMAX", "float32", 128, 127, 128, 128, MAX, MAX, N),
    ("case_float_GT_128_127_VT_128_160_BLK1_PADMAX_PADMAX", "float32", 128, 127, 128, 160, MAX, MAX, N),
    ("case_float_GT_128_127_VT_128_160_BLK1_PADMIN_PADMAX", "float32", 128, 127, 128, 160, MIN, MAX, N),
    ("case_float_GT_260_7_VT_260_16_BLK1_PADMIN_PADMAX", "float32", 260, 7, 260, 16, MIN, MAX, N),
    ("case_float_GT_260_7_VT_260_16_BLK1_PADMIN_PADMAX_INPLACE", "float32", 260, 7, 260, 16, MIN, MAX, IP),
    ("case_u16_GT_260_7_VT_260_32_BLK1_PADMIN_PADMAX", "uint16", 260, 7, 260, 32, MIN, MAX, N),
    ("case_s8_GT_260_7_VT_260_64_BLK1_PADMIN_PADMAX", "int8", 260, 7, 260, 64, MIN, MAX, N),
    ("case_u16_GT_259_7_VT_260_32_BLK1_PADMIN_PADMAX_EXPAND", "uint16", 259, 7, 260, 32, MIN, MAX, EX),
    ("case_s8_GT_259_7_VT_260_64_BLK1_PADMIN_PADMAX_EXPAND", "int8", 259, 7, 260, 64, MIN, MAX, EX),
    ("case_s16_GT_260_7_VT_260_32_BLK1_PADMIN_PADMIN", "int16", 260, 7, 260, 32, MIN, MIN, N),
    ("case_s32_GT_260_7_VT_260_32_BLK1_PADMIN_PADMIN", "int32", 260, 7, 260, 32, MIN, MIN, N),
    ("case_float_GT_128_64_VT_128_128_PADCUSTOM_NEG1", "float32", 128, 64, 128, 128, NULL, NEG1, N),
    ("case_float_GT_128_127_VT_128_160_BLK1_PADCUSTOM_NEG1_PADCUSTOM_NEG1", "float32", 128, 127, 128, 160, NEG1, NEG1, N),
    ("case_s8_GT_1_15_VT_1_32_BLK1_PADZERO", "int8", 1, 15, 1, 32, NULL, ZERO, N),
    ("case_s8_GT_1_16_VT_1_32_BLK1_PADZERO", "int8", 1, 16, 1, 32, NULL, ZERO, N),
    ("case_u8_GT_1_15_VT_1_32_BLK1_PADZERO", "uint8", 1, 15, 1, 32, NULL, ZERO, N),
    ("case_u8_GT_1_16_VT_1_32_BLK1_PADZERO", "uint8", 1, 16, 1, 32, NULL, ZERO, N),
    ("case_s8_GT_1_15_VT_1_32_BLK1_PADMIN", "int8", 1, 15, 1, 32, NULL, MIN, N),
    ("case_s8_GT_1_15_VT_1_32_BLK1_PADMAX", "int8", 1, 15, 1, 32, NULL, MAX, N),
    ("case_u8_GT_1_15_VT_1_32_BLK1_PADMIN", "uint8", 1, 15, 1, 32, NULL, MIN, N),
    ("case_u8_GT_1_15_VT_1_32_BLK1_PADMAX", "uint8", 1, 15, 1, 32, NULL, MAX, N),
    ("case_s8_GT_1_40_VT_1_64_BLK1_PADMIN_PADMAX", "int8", 1, 40, 1, 64, MIN, MAX, N),
]
assert len(CASES) == 22


def _pad_value(pad, npd):
    """main.cpp's golden pad: +-inf for floats, numeric limits for integers, the custom float bits."""
    if pad is NEG1:
        return np.array([-1.0], np.float32).view(npd)[0]
    if pad is ZERO or pad is NULL:
        return npd.type(0)
    if npd.kind == "f":
        return npd.type(np.inf if pad is MAX else -np.inf)
    info = np.iinfo(npd)
    return npd.type(info.max if pad is MAX else info.min)


@pytest.mark.parametrize("case", params(CASES, fast={CASES[4][0], CASES[7][0], CASES[12][0], CASES[21][0]}))
def test_tfillpad(case):
    name, dt, vr, vc, rows, cols, load_pad, fill_pad, mode = case
    npd = np.dtype(dt)
    core = aiv()
    host = (np.arange(vr * vc, dtype=np.int64).reshape(vr, vc)).astype(npd)
    src_cols = -(-vc * npd.itemsize // 32) * 32 // npd.itemsize if mode is EX else cols
    src = Tile.of("ND", V, dt, rows, src_cols, valid=(vr, vc), pad=load_pad).assign(core, 0)
    at = 0 if mode is IP else 0x18000
    dst = Tile.of("ND", V, dt, rows, cols, pad=fill_pad).assign(core, at)
    tload(src, gm_in(host), RowMajor(vr, vc))
    tfillpad(dst, src, mode)
    buf, out = gm_out(rows * cols * npd.itemsize, dt)
    tstore(out, RowMajor(rows, cols), dst)
    want = np.full((rows, cols), _pad_value(fill_pad, npd), npd)
    want[:vr, :vc] = host
    np.testing.assert_array_equal(buf.raw.view(npd).reshape(rows, cols).view(f"u{npd.itemsize}"),
                                  want.view(f"u{npd.itemsize}"))
