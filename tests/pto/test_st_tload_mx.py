"""PTO-ISA conformance: ``tests/npu/a5/src/st/testcase/tload_mx_ND_DN``, ``tload_mx_gmtensor`` and ``tload_mx_NZ``
(TLOAD of e8m0 MX scales from GM into an L1 ZZ (left scales) or NN (right scales) tile with 16 x 2 boxes).

``tload_mx_ND_DN`` / ``tload_mx_gmtensor``: the GM scales are MX_A_ND ``[M][KG]``, MX_A_DN ``[KG/2][M][2]``, MX_A_ZZ,
MX_B_ND ``[KG/2][N][2]``, MX_B_DN ``[N][KG]`` or MX_B_NN, declared as the kernels declare them (explicit 5-D shapes and
strides, or ``TileShape2D`` / ``BaseShape2D``: :func:`~catlass_py.tile.pto.mx_gm_tensor` takes either as a 5-D shape
and stride). gen_data.py (seed 19) draws ``randint(1, 5)`` of the valid shape, then the whole GM matrix for the ND
forms (the DN / ZZ / NN forms hold each row's index), then the unused ``x2``. The kernel clears the tile's L1 bytes
(``create_cbuf_matrix``), TLOADs, and the harness copies the tile's bytes out (``copy_cbuf_to_ubuf``, a CCE intrinsic,
a byte copy here). Expected: the valid region in the tile's ZZ / NN box order, zeros elsewhere.

``tload_mx_NZ``: MX_A_ZZ / MX_B_NN tensors with ``shape[0] > 1`` (TLOAD stitches the slices along the tile's rows /
columns); gen_data.py has no seed: fresh draws here (``randint(10, 125)`` of the whole GM shape), upstream inputs with
``PTO_ST_GOLDEN_DIR``. The harness copies the valid boxes out with the kernel's strided ``copy_cbuf_to_ubuf``
bursts. Expected: the GM boxes of the sub-tensor in order.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from pto_helpers import aic
from st_common import case_input, check_golden, gm_in, params

from catlass_py.tile.pto import FRACTAL_MX, Tile, TileType, mx_gm_tensor, tload

E8 = "float8_e8m0fnu"
KINDS = {"AND2ZZ": "MX_A_ND", "ADN2ZZ": "MX_A_DN", "AZZ2ZZ": "MX_A_ZZ", "BND2NN": "MX_B_ND", "BDN2NN": "MX_B_DN",
         "BNN2NN": "MX_B_NN"}

# (case, format, valid rows, valid cols, ws3, ws4, tile rows, tile cols): gen_data.py's list; the kernels' template
# arguments (M, K, WN4, WN5, baseM, baseK) agree with it except where noted in _gm_shape.
_ND_DN = [
    ("1_1_1_16_4_uint8_AND2ZZ", "AND2ZZ", 16, 4, 16, 4, 16, 4),
    ("1_1_1_16_64_uint8_AND2ZZ", "AND2ZZ", 16, 64, 16, 64, 32, 158),
    ("1_1_1_32_128_uint8_AND2ZZ", "AND2ZZ", 32, 128, 160, 128, 64, 1008),
    ("1_1_1_128_128_uint8_AND2ZZ", "AND2ZZ", 128, 128, 128, 128, 128, 128),
    ("1_1_1_64_128_uint8_AND2ZZ", "AND2ZZ", 31, 118, 34, 126, 64, 128),
    ("1_1_1_16_4_uint8_ADN2ZZ", "ADN2ZZ", 1, 2, 1, 65534, 16, 8),
    ("1_1_1_16_64_uint8_ADN2ZZ", "ADN2ZZ", 16, 64, 16, 64, 16, 64),
    ("1_1_1_32_128_uint8_ADN2ZZ", "ADN2ZZ", 32, 128, 32, 128, 32, 128),
    ("1_1_1_128_128_uint8_ADN2ZZ", "ADN2ZZ", 27, 126, 128, 128, 128, 128),
    ("1_1_1_64_128_uint8_ADN2ZZ", "ADN2ZZ", 31, 118, 34, 126, 64, 128),
    ("1_1_1_4_64_uint8_BND2NN", "BND2NN", 4, 64, 4, 64, 4, 64),
    ("1_1_1_16_64_uint8_BND2NN", "BND2NN", 16, 64, 16, 64, 16, 64),
    ("1_1_1_32_128_uint8_BND2NN", "BND2NN", 32, 127, 32, 128, 32, 256),
    ("1_1_1_128_128_uint8_BND2NN", "BND2NN", 128, 128, 128, 128, 128, 128),
    ("1_1_1_128_64_uint8_BND2NN", "BND2NN", 116, 34, 130, 60, 128, 64),
    ("1_1_1_4_64_uint8_BDN2NN", "BDN2NN", 4, 64, 4, 64, 4, 64),
    ("1_1_1_16_64_uint8_BDN2NN", "BDN2NN", 16, 64, 16, 64, 16, 64),
    ("1_1_1_32_128_uint8_BDN2NN", "BDN2NN", 2, 128, 32, 128, 4, 1088),
    ("1_1_1_128_128_uint8_BDN2NN", "BDN2NN", 30, 127, 128, 128, 128, 128),
    ("1_1_1_128_64_uint8_BDN2NN", "BDN2NN", 116, 34, 130, 60, 128, 64),
]
_ZZ_NN = [
    ("1_1_1_16_4_uint8_AZZ2ZZ", "AZZ2ZZ", 16, 4, 16, 4, 16, 4),
    ("1_1_1_128_96_uint8_AZZ2ZZ", "AZZ2ZZ", 80, 66, 176, 80, 128, 96),
    ("1_1_1_4_64_uint8_BNN2NN", "BNN2NN", 4, 64, 4, 64, 4, 64),
    ("1_1_1_58_1088_uint8_BNN2NN", "BNN2NN", 58, 1024, 58, 1040, 58, 1088),
]
CASES = [("tload_mx_ND_DN", *c) for c in _ND_DN] + [("tload_mx_gmtensor", *c) for c in _ND_DN + _ZZ_NN]
FAST = {"tload_mx_ND_DN/1_1_1_64_128_uint8_AND2ZZ", "tload_mx_ND_DN/1_1_1_128_128_uint8_ADN2ZZ",
        "tload_mx_ND_DN/1_1_1_128_64_uint8_BND2NN", "tload_mx_gmtensor/1_1_1_128_128_uint8_BDN2NN",
        "tload_mx_gmtensor/1_1_1_128_96_uint8_AZZ2ZZ", "tload_mx_gmtensor/1_1_1_58_1088_uint8_BNN2NN"}


@functools.lru_cache(maxsize=None)
def _inputs(family: str):
    """gen_data.py's draws, in case order: GM input and the expected (valid rows x valid cols) matrix per case."""
    rs = np.random.RandomState(19)
    out = {}
    for name, fmt, vr, vc, ws3, ws4, _tr, _tc in (_ND_DN if family == "tload_mx_ND_DN" else _ND_DN + _ZZ_NN):
        rs.randint(1, 5, [vr, vc])
        if fmt in ("AND2ZZ", "BND2NN"):
            whole = rs.randint(1, 5, [ws3, ws4]).astype(np.uint8)
        else:
            whole = np.tile(np.arange(ws3)[:, None], (1, ws4)).astype(np.uint8)
        if fmt == "ADN2ZZ":
            gm = whole.reshape(ws3, ws4 // 2, 2).transpose(1, 0, 2)
        elif fmt == "AZZ2ZZ":
            gm = whole.reshape(ws3 // 16, 16, ws4 // 2, 2).transpose(0, 2, 1, 3)
        elif fmt == "BND2NN":
            gm = whole.reshape(ws3 // 2, 2, ws4).transpose(0, 2, 1)
        elif fmt == "BDN2NN":
            gm = whole.T
        elif fmt == "BNN2NN":
            gm = whole.reshape(ws3 // 2, 2, ws4 // 16, 16).transpose(2, 0, 3, 1)
        else:
            gm = whole
        rs.randint(1, 5, [vr, vc])
        out[name] = (np.ascontiguousarray(gm).reshape(-1), whole[:vr, :vc])
    return out


def _gm_shape(fmt, m, k, wn4, wn5):
    """The 5-D GM shape and stride of the kernel (M, K = valid rows / cols; WN4, WN5 = ws3, ws4)."""
    if fmt == "AND2ZZ":
        return (1, 1, m, k // 2, 2), (1, 1, wn5, 2, 1)
    if fmt == "ADN2ZZ":
        return (1, 1, k // 2, m, 2), (1, 1, 2 * wn4, 2, 1)
    if fmt == "AZZ2ZZ":
        return (1, m // 16, k // 2, 16, 2), (wn4 * wn5, 16 * wn5, 32, 2, 1)
    if fmt == "BND2NN":
        return (1, 1, m // 2, k, 2), (1, 1, 2 * wn5, 2, 1)
    if fmt == "BDN2NN":
        return (1, 1, k, m // 2, 2), (1, 1, wn4, 2, 1)
    return (1, k // 16, m // 2, 16, 2), (wn4 * wn5, 16 * wn4, 32, 2, 1)  # BNN2NN


def _box_image(mat: np.ndarray, a_side: bool) -> np.ndarray:
    """A matrix's bytes in ZZ (16 x 2 boxes, row-major boxes) or NN (2 x 16 boxes, column-major) order."""
    r, c = mat.shape
    if a_side:
        return mat.reshape(r // 16, 16, c // 2, 2).transpose(0, 2, 1, 3).reshape(-1)
    return mat.reshape(r // 2, 2, c // 16, 16).transpose(2, 0, 3, 1).reshape(-1)


def _mat_tile(core, a_side, rows, cols, valid):
    fmt = "ZZ" if a_side else "NN"
    t = Tile.of(fmt, TileType.Mat, E8, rows, cols, fractal=FRACTAL_MX, valid=valid).assign(core, 0)
    t.tensor.view().view(np.uint8)[:rows * cols] = 0  # create_cbuf_matrix
    return t


@pytest.mark.parametrize("case", params(CASES, fast=FAST, key=lambda c: f"{c[0]}/{c[1]}"))
def test_tload_mx(case):
    family, name, fmt, vr, vc, ws3, ws4, tr, tc = case
    gm_host, valid = _inputs(family)[name]
    full = f"TLOADMXTest.{name}"
    check_golden(family, full, "x1_gm.bin", gm_host)
    # ADN2ZZ case 1: gen_data's GM is 1 x 65534; the kernel declares WN4 = 65534, WN5 = 4 (only 2 scales are read).
    wn4, wn5 = (65534, 4) if name == "1_1_1_16_4_uint8_ADN2ZZ" else (ws3, ws4)
    shape, stride = _gm_shape(fmt, vr, vc, wn4, wn5)
    a_side = fmt.startswith("A")
    core = aic()
    mat = _mat_tile(core, a_side, tr, tc, (vr, vc))
    tload(mat, gm_in(gm_host, "x1", E8), mx_gm_tensor(KINDS[fmt], shape, stride))
    got = mat.tensor.view().view(np.uint8)[:tr * tc].copy()  # copy_cbuf_to_ubuf + TSTORE of the whole tile
    want = np.zeros((tr, tc), np.uint8)
    want[:vr, :vc] = valid
    np.testing.assert_array_equal(got, _box_image(want, a_side))
    check_golden(family, full, "golden.bin", got)


# tload_mx_NZ: (case, ZZ?, N0, N1, N2, WN0, WN1, WN2, tile rows, tile cols)
_NZ = [
    ("1_1_2_16_2_1_2_3_16_2_16_4_scale_ZZ2ZZ", True, 1, 1, 2, 1, 2, 3, 16, 4),
    ("1_2_1_16_2_1_3_2_16_2_2_32_scale_NN2NN", False, 1, 2, 1, 1, 3, 2, 2, 32),
    ("1_2_2_16_2_1_2_3_16_2_48_10_scale_ZZ2ZZ", True, 1, 2, 2, 1, 2, 3, 48, 10),
    ("1_2_2_16_2_1_3_2_16_2_8_64_scale_NN2NN", False, 1, 2, 2, 1, 3, 2, 8, 64),
    ("1_5_33_16_2_1_11_40_16_2_128_96_scale_ZZ2ZZ", True, 1, 5, 33, 1, 11, 40, 128, 96),
    ("1_64_29_16_2_1_65_59_16_2_58_1088_scale_NN2NN", False, 1, 64, 29, 1, 65, 59, 58, 1088),
    ("3_1_2_16_2_3_2_3_16_2_48_4_scale_ZZ2ZZ", True, 3, 1, 2, 3, 2, 3, 48, 4),
    ("4_2_1_16_2_4_3_2_16_2_2_128_scale_NN2NN", False, 4, 2, 1, 4, 3, 2, 2, 128),
    ("4_3_3_16_2_4_10_5_16_2_192_10_scale_ZZ2ZZ", True, 4, 3, 3, 4, 10, 5, 192, 10),
    ("7_5_3_16_2_7_7_11_16_2_12_560_scale_NN2NN", False, 7, 5, 3, 7, 7, 11, 12, 560),
]


@pytest.mark.parametrize("case", params(_NZ, fast={"4_3_3_16_2_4_10_5_16_2_192_10_scale_ZZ2ZZ",
                                                   "7_5_3_16_2_7_7_11_16_2_12_560_scale_NN2NN"}))
def test_tload_mx_nz(case):
    name, zz, n0, n1, n2, wn0, wn1, wn2, tr, tc = case
    full = f"TLOADSCALETest.{name}"
    rs = np.random.RandomState(19)
    gm_shape = (wn0, wn1, wn2, 16, 2)
    gm_host = case_input("tload_mx_NZ", full, "x1_gm.bin", np.uint8, gm_shape,
                         lambda: rs.randint(10, 125, gm_shape).astype(np.uint8))
    vr, vc = (n0 * n1 * 16, n2 * 2) if zz else (n2 * 2, n0 * n1 * 16)
    core = aic()
    mat = _mat_tile(core, zz, tr, tc, (vr, vc))
    stride = (wn1 * wn2 * 32, wn2 * 32, 32, 2, 1)
    tload(mat, gm_in(gm_host, "x1", E8), mx_gm_tensor("MX_A_ZZ" if zz else "MX_B_NN", (n0, n1, n2, 16, 2), stride))
    # the kernel's copy_cbuf_to_ubuf bursts: per slice, its valid boxes (16-row / 16-column box lines), compacted
    l1 = mat.tensor.view().view(np.uint8)
    line, pitch = (vc * 16, tc * 16) if zz else (vr * 16, tr * 16)
    per = n1
    got = np.concatenate([l1[(i * per + j) * pitch:(i * per + j) * pitch + line] for i in range(n0)
                          for j in range(per)])
    want = gm_host[:n0, :n1, :n2].reshape(-1)
    np.testing.assert_array_equal(got, want)
    check_golden("tload_mx_NZ", full, "golden.bin", got)
