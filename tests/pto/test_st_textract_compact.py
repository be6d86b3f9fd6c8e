"""PTO-ISA conformance: ``tests/npu/a5/src/st/testcase/textract_compact`` (TEXTRACT into compact L0 tiles
(``CompactMode.Normal``: the valid region rounded up to whole boxes moves) with unaligned shapes, feeding TMATMUL).

Inputs as gen_data.py draws them (global stream seeded 19, list order: operands ``randint(1, 5)``, then the padding
fills of ``create_padded_tensors``: right, corner, down, corner). Kernel: TLOAD the padded operands into L1 (ZN for a
transposed A, NZ for a transposed B), TEXTRACT the ``(M - indexM) x (K - indexK)`` / ``(K - indexK) x (N - indexN)``
windows into compact Left / Right tiles, TMATMUL into a compact Acc tile, TSTORE. Expected: float64 product of the
unpadded slices (rtol 1e-3, the case's ResultCmp).
"""

import functools

import ml_dtypes
import numpy as np
import pytest
from pto_helpers import aic
from st_common import check_golden, gm_in, gm_out, params

from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.tile.pto import FRACTAL_C, CompactMode, Tile, TileType, textract, tload, tmatmul, tstore

FAMILY = "textract_compact"
F16, F32, I8, BF16, HIF8 = np.float16, np.float32, np.int8, ml_dtypes.bfloat16, np.uint8
E4, E5 = ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2
DT = {F16: "float16", F32: "float32", I8: "int8", BF16: "bfloat16", HIF8: "hifloat8", E4: "float8_e4m3fn",
      E5: "float8_e5m2"}
_P = [(F16, 63, 48, 66, 0, 0, 0, 0, 128, 64, 256), (F16, 68, 93, 97, 0, 0, 0, 1, 128, 128, 128),
      (F16, 75, 201, 79, 16, 16, 16, 0, 80, 256, 80), (F16, 59, 232, 61, 16, 16, 16, 1, 64, 256, 64),
      (F32, 68, 70, 69, 0, 0, 0, 0, 80, 128, 80), (F32, 20, 22, 21, 0, 0, 0, 1, 64, 96, 64),
      (F32, 49, 119, 63, 16, 32, 16, 0, 64, 128, 64), (F32, 127, 60, 102, 16, 16, 32, 1, 128, 64, 128),
      (I8, 97, 231, 83, 0, 0, 0, 0, 128, 256, 128), (I8, 71, 188, 82, 0, 0, 0, 1, 128, 256, 128),
      (I8, 63, 112, 98, 32, 32, 32, 0, 64, 128, 128), (I8, 106, 125, 60, 32, 32, 32, 1, 128, 128, 64)]
for _dt in (BF16,):
    _P += [(_dt, 23, 24, 25, 0, 0, 0, 0, 96, 64, 96), (_dt, 23, 24, 25, 0, 0, 0, 1, 96, 64, 96),
           (_dt, 39, 40, 41, 16, 16, 16, 0, 96, 64, 96), (_dt, 39, 40, 41, 16, 16, 16, 1, 96, 64, 96)]
for _dt in (HIF8, E4, E5):
    _P += [(_dt, 46, 40, 45, 0, 0, 0, 0, 128, 96, 128), (_dt, 46, 40, 45, 0, 0, 0, 1, 128, 96, 128),
           (_dt, 78, 72, 77, 32, 32, 32, 0, 128, 96, 128), (_dt, 78, 72, 77, 32, 32, 32, 1, 128, 96, 128)]
NAMES = [f"TEXTRACTTest.case{g}{i}" for g in range(1, 8) for i in range(1, 5)]
CASES = [(n, *p) for n, p in zip(NAMES, _P)]
assert len(CASES) == 28


@functools.lru_cache(maxsize=1)
def _inputs():
    rs = np.random.RandomState(19)
    out = {}
    for name, dt, m, k, n, sm, sk, sn, tr, bm, bk, bn in CASES:
        t = np.uint8 if dt is HIF8 else dt
        x1 = rs.randint(1, 5, [m, k]).astype(t)
        x2 = rs.randint(1, 5, [k, n]).astype(t)
        p1 = np.zeros((bm, bk), t)
        p1[:m, :k] = x1
        p1[:m, k:] = rs.randint(1, 5, size=(m, bk - k), dtype=np.int32).astype(t)
        p1[m:, k:] = rs.randint(1, 5, size=(bm - m, bk - k), dtype=np.int32).astype(t)
        p2 = np.zeros((bk, bn), t)
        p2[:k, :n] = x2
        p2[k:, :n] = rs.randint(1, 5, size=(bk - k, n), dtype=np.int32).astype(t)
        p2[k:, n:] = rs.randint(1, 5, size=(bk - k, bn - n), dtype=np.int32).astype(t)
        out[name] = (x1, x2, p1, p2)
    return out


def _values(x, dt):
    if dt is HIF8:  # codes 1..4: HiFloat8 subnormals 2**(code - 23)
        return np.ldexp(1.0, x.astype(np.int64) - 23)
    return x.astype(np.float64)


@pytest.mark.parametrize("case", params(CASES, fast={"TEXTRACTTest.case14", "TEXTRACTTest.case73"}))
def test_textract_compact(case):
    name, dt, m, k, n, sm, sk, sn, tr, bm, bk, bn = case
    x1, x2, p1, p2 = _inputs()[name]
    core = aic()
    d = DT[dt]
    a_mat = Tile.of("ZN" if tr else "NZ", TileType.Mat, d, bm, bk).assign(core, 0)
    b_mat = Tile.of("NZ" if tr else "ZN", TileType.Mat, d, bk, bn).assign(core, 0x20000)
    tload(a_mat, gm_in(p1.T.copy() if tr else p1, "a", d), ColumnMajor(bm, bk, bm) if tr else RowMajor(bm, bk))
    tload(b_mat, gm_in(p2 if tr else p2.T.copy(), "b", d), RowMajor(bk, bn) if tr else ColumnMajor(bk, bn, bk))
    vm, vk, vn = m - sm, k - sk, n - sn
    normal = CompactMode.Normal
    a = Tile.of("NZ", TileType.Left, d, bm, bk, valid=(vm, vk), compact=normal).assign(core, 0)
    b = Tile.of("ZN", TileType.Right, d, bk, bn, valid=(vk, vn), compact=normal).assign(core, 0)
    acc_dt = "int32" if dt is I8 else "float32"
    c = Tile.of("NZ", TileType.Acc, acc_dt, bm, bn, fractal=FRACTAL_C, valid=(vm, vn), compact=normal).assign(core, 0)
    textract(a, a_mat, sm, sk)
    textract(b, b_mat, sk, sn)
    tmatmul(c, a, b)
    buf, out = gm_out(vm * vn * 4, acc_dt)
    tstore(out, RowMajor(vm, vn), c)
    got = buf.raw.view(np.int32 if dt is I8 else np.float32).reshape(vm, vn)
    want = _values(x1[sm:, sk:], dt) @ _values(x2[sk:, sn:], dt)
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=0)
    check_golden(FAMILY, name, "golden.bin", buf.raw)
