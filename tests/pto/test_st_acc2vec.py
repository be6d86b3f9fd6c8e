"""PTO-ISA conformance: ``tests/npu/a5/src/st/testcase/textract_acc2vec`` and ``tinsert_acc2vec`` (TEXTRACT /
TINSERT of an Acc tile into a vector core's UB through the fixpipe, at a (row, column) offset: casts, relu, vector
quant (TEXTRACT_FP / TINSERT_FP), scalar quant, sub-block 1, and TINSERT's dual SplitM / SplitN modes).

Inputs as gen_data.py draws them (seed 19, case order): ``randint(-1, 2)`` operands for int8 outputs, else
``randint(1, 5)``; then, for vector quant, ``randint(1, 5, n)`` factors (their fp32 bits, bit 46 set for int8).
Kernel: the cube prologue (TLOAD into NZ, TMOV to L0A / L0B, TMATMUL; :func:`st_common.cube_acc`); the vector core
TLOADs the destination's initial contents (zeros) into a Vec ND tile; the cube core TEXTRACTs (the window at
``(indexRow, indexCol)``: the destination's valid shape is ``(m - indexRow, n - indexCol)``) or TINSERTs (the whole
product at ``(indexRow, indexCol)`` of the destination) with the case's quant form (TLOAD + TMOV of the quant words
into the fixpipe buffer for vector quant; the kernel's scalar word for scalar quant); the vector core of the case's
sub-block TSTOREs. The split cases TINSERT with ``DualModeSplitM`` / ``DualModeSplitN`` into a tile on each
sub-block and both store their halves. Expected: the exact product converted as the fixpipe does
(:func:`st_common.fixpipe_ref`), placed as the case says; compared bit for bit (the case's tolerance is 1e-3).
"""

from __future__ import annotations

import functools

import ml_dtypes
import numpy as np
import pytest
from pto_helpers import aic, aiv
from st_common import check_golden, cube_acc, fixpipe_ref, gm_in, gm_out, params, quant_m1, quant_word

from catlass_py.layout import RowMajor
from catlass_py.tile.pto import AccToVecMode, ReluPreMode, Tile, TileType, textract, tinsert, tload, tmov, tstore

F32, F16, BF16, I8 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.int8)
NAME = {F32: "float32", F16: "float16", BF16: "bfloat16", I8: "int8"}

# the kernels' instantiations: (case, form, out, operand, m, k, n, sub-block, relu, indexRow, indexCol, rows, cols,
# scalar); rows x cols is TEXTRACT's static destination (valid m - indexRow x n - indexCol) or TINSERT's destination
_EXTRACT = [
    ("case_nz2nd_1", "cast", F32, F16, 60, 127, 120, 0, True, 0, 16, 64, 128, None),
    ("case_nz2nd_2", "cast", F16, F16, 110, 100, 80, 0, True, 5, 0, 120, 96, None),
    ("case_nz2nd_3", "cast", F32, F16, 6, 7, 8, 1, True, 2, 0, 10, 16, None),
    ("case_nz2nd_4", "cast", BF16, F16, 111, 47, 96, 0, True, 3, 32, 150, 160, None),
    ("case_nz2nd_fb_quant_1", "vector", I8, I8, 30, 48, 64, 0, False, 0, 32, 40, 96, None),
    ("case_nz2nd_fb_quant_2", "vector", F16, I8, 60, 128, 32, 0, False, 5, 0, 70, 96, None),
    ("case_nz2nd_fb_quant_3", "vector", BF16, I8, 128, 64, 96, 0, False, 0, 0, 128, 96, None),
    ("case_nz2nd_fb_quant_4", "vector", I8, F32, 60, 128, 64, 0, True, 7, 32, 80, 256, None),
    ("case_nz2nd_fb_quant_5", "vector", F16, F32, 31, 128, 128, 0, True, 0, 64, 40, 256, None),
    ("case_nz2nd_sc_quant_1", "scalar", F16, F32, 128, 48, 96, 0, True, 0, 0, 128, 96, 2),
    ("case_nz2nd_sc_quant_2", "scalar", I8, F32, 60, 128, 64, 0, True, 0, 32, 128, 128, 5),
    ("case_nz2nd_sc_quant_3", "scalar", F16, I8, 30, 48, 64, 0, False, 5, 32, 40, 128, 3),
    ("case_nz2nd_sc_quant_4", "scalar", I8, I8, 60, 128, 32, 0, False, 3, 0, 64, 64, 1),
]
_INSERT = [
    ("case_nz2nd_1", "cast", F32, F16, 60, 127, 120, 0, True, 0, 8, 60, 128, None),
    ("case_nz2nd_2", "cast", F16, F16, 110, 100, 80, 0, True, 5, 0, 120, 96, None),
    ("case_nz2nd_3", "cast", F32, F16, 6, 7, 8, 1, True, 2, 0, 10, 16, None),
    ("case_nz2nd_4", "cast", BF16, F16, 111, 47, 96, 0, True, 3, 32, 150, 160, None),
    ("case_nz2nd_split_1", "splitM", F32, F16, 96, 32, 48, 0, False, 0, 0, 96, 48, None),
    ("case_nz2nd_split_2", "splitN", F32, F16, 48, 32, 128, 0, False, 0, 0, 48, 128, None),
    ("case_nz2nd_fb_quant_1", "vector", I8, I8, 30, 48, 64, 0, False, 0, 32, 40, 96, None),
    ("case_nz2nd_fb_quant_2", "vector", F16, I8, 60, 128, 32, 0, False, 5, 32, 70, 96, None),
    ("case_nz2nd_fb_quant_3", "vector", BF16, I8, 128, 64, 96, 0, False, 0, 0, 128, 96, None),
    ("case_nz2nd_fb_quant_4", "vector", I8, F32, 60, 128, 64, 0, True, 7, 64, 80, 256, None),
    ("case_nz2nd_fb_quant_5", "vector", F16, F32, 31, 128, 128, 0, True, 0, 64, 40, 256, None),
    ("case_nz2nd_sc_quant_1", "scalar", F16, F32, 128, 48, 96, 0, True, 0, 0, 128, 96, 2),
    ("case_nz2nd_sc_quant_2", "scalar", I8, F32, 60, 128, 64, 0, True, 0, 32, 128, 128, 5),
    ("case_nz2nd_sc_quant_3", "scalar", F16, I8, 30, 48, 64, 0, False, 5, 32, 40, 128, 3),
    ("case_nz2nd_sc_quant_4", "scalar", I8, I8, 60, 128, 32, 0, False, 3, 0, 64, 64, 1),
]
FAMILIES = {"textract_acc2vec": _EXTRACT, "tinsert_acc2vec": _INSERT}
CASES = [(fam, *c) for fam, cases in FAMILIES.items() for c in cases]
FAST = {"textract_acc2vec/case_nz2nd_3", "textract_acc2vec/case_nz2nd_fb_quant_1",
        "tinsert_acc2vec/case_nz2nd_split_2", "tinsert_acc2vec/case_nz2nd_sc_quant_3"}


@functools.lru_cache(maxsize=None)
def _inputs(family):
    rs = np.random.RandomState(19)
    out = {}
    for name, form, dst, _a, m, k, n, *_ in FAMILIES[family]:
        lo, hi = (-1, 2) if dst == I8 else (1, 5)
        x1, x2 = rs.randint(lo, hi, [m, k]), rs.randint(lo, hi, [k, n])
        q = rs.randint(1, 5, n).astype(np.float32) if form == "vector" else None
        out[name] = (x1, x2, q)
    return out


def _vector_words(q, dst):
    words = q.view(np.uint32).astype(np.uint64)
    return words | np.uint64(1 << 46) if dst == I8 else words


@pytest.mark.parametrize("case", params(CASES, fast=FAST, key=lambda c: f"{c[0]}/{c[1]}"))
def test_acc_to_vec(case):
    family, name, form, dst, a_dt, m, k, n, sub, relu, ir, ic, rows, cols, scalar = case
    insert = family == "tinsert_acc2vec"
    x1, x2, q = _inputs(family)[name]
    full = f"TMOVTest.{name}"
    check_golden(family, full, "x1_gm.bin", x1.astype(a_dt))
    cube = aic()
    acc = cube_acc(cube, x1.astype(a_dt), x2.astype(a_dt), NAME[a_dt], align=32 if a_dt == I8 else 16)
    product = x1.astype(np.float64) @ x2.astype(np.float64)
    dn = NAME[dst]
    relu_mode = ReluPreMode.NormalRelu if relu else ReluPreMode.NoRelu
    gm_layout = RowMajor(rows, cols)
    buf, out = gm_out(rows * cols * dst.itemsize, dn)

    if form in ("splitM", "splitN"):
        half = (m // 2, n) if form == "splitM" else (m, n // 2)
        vs = [aiv(sub=0), aiv(sub=1)]
        tiles = [Tile.of("ND", TileType.Vec, dn, m, n, valid=half).assign(v, 0) for v in vs]
        mode = AccToVecMode.DualModeSplitM if form == "splitM" else AccToVecMode.DualModeSplitN
        tinsert(tuple(tiles), acc, 0, 0, mode=mode)
        second = half[0] * n if form == "splitM" else half[1]
        tstore(out, RowMajor(*half, n), tiles[0])
        tstore(out[second], RowMajor(*half, n), tiles[1])
        want = fixpipe_ref(product, dst)
    else:
        vec = aiv(sub=sub)
        init = Tile.of("ND", TileType.Vec, dn, rows, cols).assign(vec, 0)
        tload(init, gm_in(np.zeros((rows, cols), dst), "dst", dn), RowMajor(rows, cols))
        valid = (rows, cols) if insert else (m - ir, n - ic)
        d = Tile.of("ND", TileType.Vec, dn, rows, cols, valid=valid).assign(vec, 0)
        kw = {"relu": relu_mode}
        if sub:
            kw["mode"] = AccToVecMode.SingleModeVec1
        m1 = None
        if form == "vector":
            words = _vector_words(q, dst)
            fb_mat = Tile.of("ND", TileType.Mat, "uint64", 1, -(-n // 16) * 16, valid=(1, n)).assign(cube, 0)
            tload(fb_mat, gm_in(words, "quant"), RowMajor(1, n))
            kw["fp"] = Tile.of("ND", TileType.Scaling, "uint64", 1, -(-n // 16) * 16, valid=(1, n)).assign(cube, 0)
            tmov(kw["fp"], fb_mat)
            m1 = quant_m1(words)
        elif form == "scalar":
            kw["pre_quant_scalar"] = quant_word(scalar, dst)
            m1 = quant_m1(kw["pre_quant_scalar"])
        (tinsert if insert else textract)(d, acc, ir, ic, **kw)
        tstore(out, gm_layout, d)
        # TEXTRACT to Vec without a mode or quant applies no relu (TEXTRACT_IMPL); the draws are positive there
        conv = fixpipe_ref(product, dst, m1, relu and not (not insert and form == "cast" and not sub))
        want = np.zeros((rows, cols), dst)
        if insert:
            want[ir:ir + m, ic:ic + n] = conv[: rows - ir, : cols - ic]
        else:
            want[: m - ir, : n - ic] = conv[ir:, ic:]
    got = buf.raw.view(dst).reshape(want.shape)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    check_golden(family, full, "golden.bin", buf.raw)
