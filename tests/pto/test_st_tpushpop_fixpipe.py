"""PTO-ISA conformance: ``tests/npu/a5/src/st/testcase/tpushpop_fixpipe`` (TPUSH through the fixpipe with cast, scalar
and vector quant; the upstream test of SET_QUANT_SCALAR and SET_QUANT_VECTOR).

Inputs as gen_data.py draws them (global stream seeded 2026; cases 3 and 4 draw B before A; case 4 then draws its
per-column quant factors). Kernel: on the cube, TLOAD, TMOV to L0A / L0B, TMATMUL, then SET_QUANT_SCALAR<half>(2.0)
(case 3) or TLOAD + TMOV of the quant words into the fixpipe buffer and SET_QUANT_VECTOR (case 4), TPUSH with
``FixpipeParams<NZ2ND, F322F16 | F322BF16 | DEQF16 | VDEQF16>``; on vector sub-block 0, TPOP, TADDS(+1) and TSTORE.
TADDS is a PTO vector instruction outside this model's scope and is applied here by the harness (an element-wise add
in the tile's type). Expected: the exact product, converted as the fixpipe mode says, plus one in the output type.
"""

import functools

import numpy as np
import pytest
from pto_helpers import aic, aiv
from st_common import check_golden, gm_in, gm_out, params

from catlass_py.layout import RowMajor
from catlass_py.tile.pto import (
    FixpipeParams,
    LayoutMode,
    Tile,
    TileType,
    TPipe,
    set_quant_scalar,
    set_quant_vector,
    tile_acc,
    tile_left,
    tile_right,
    tload,
    tmatmul,
    tmov,
    tpop,
    tpush,
    tstore,
)
from catlass_py.tile.quant import QuantMode

FAMILY, SUITE = "tpushpop_fixpipe", "TPushPopFixpipeTest"
CASES = [("case1_matmul_64x64_f322f16_tadds", "float16", 64, QuantMode.F322F16),
         ("case2_matmul_64x64_f322bf16_tadds", "float16", 64, QuantMode.F322BF16),
         ("case3_matmul_128x128_deqf16_tadds", "int8", 128, QuantMode.DEQF16),
         ("case4_matmul_128x128_vdeqf16_tadds", "int8", 128, QuantMode.VDEQF16)]


@functools.lru_cache(maxsize=1)
def _inputs():
    rs = np.random.RandomState(2026)
    out = {}
    for name, in_dt, s, mode in CASES:
        if in_dt == "int8":
            b = rs.randint(-2, 3, [s, s]).astype(np.int8)
            a = rs.randint(-2, 3, [s, s]).astype(np.int8)
        else:
            a = rs.randint(-2, 3, [s, s]).astype(np.float16)
            b = rs.randint(-2, 3, [s, s]).astype(np.float16)
        q = rs.randint(1, 5, s).astype(np.float32) if mode is QuantMode.VDEQF16 else None
        out[name] = (a, b, q)
    return out


@pytest.mark.parametrize("case", params(CASES, fast={c[0] for c in CASES}))
def test_tpushpop_fixpipe(case):
    name, in_dt, s, mode = case
    a_host, b_host, q = _inputs()[name]
    out_dt = "bfloat16" if mode is QuantMode.F322BF16 else "float16"
    acc_dt = "int32" if in_dt == "int8" else "float32"
    cube, vec = aic(), aiv()
    a_mat = Tile.of("NZ", TileType.Mat, in_dt, s, s).assign(cube, 0)
    b_mat = Tile.of("NZ", TileType.Mat, in_dt, s, s).assign(cube, 0x10000)
    tload(a_mat, gm_in(a_host), RowMajor(s, s))
    tload(b_mat, gm_in(b_host), RowMajor(s, s))
    a, b = tile_left(in_dt, s, s).assign(cube, 0), tile_right(in_dt, s, s).assign(cube, 0)
    tmov(a, a_mat)
    tmov(b, b_mat)
    acc = tile_acc(acc_dt, s, s).assign(cube, 0)
    tmatmul(acc, a, b)
    if mode is QuantMode.DEQF16:
        set_quant_scalar(2.0, "float16", ctx=cube)
    elif mode is QuantMode.VDEQF16:
        words = q.view(np.uint32).astype(np.uint64)
        fb_mat = Tile.of("ND", TileType.Mat, "uint64", 1, s).assign(cube, 0x20000)
        tload(fb_mat, gm_in(words), RowMajor(1, s))
        fb = Tile.of("ND", TileType.Scaling, "uint64", 1, s).assign(cube, 0)
        tmov(fb, fb_mat)
        set_quant_vector(fb)
    pipe = TPipe(out_dt, depth=2)
    tpush(pipe, acc, FixpipeParams(layout=LayoutMode.NZ2ND, quant=mode))
    vt = Tile.of("ND", TileType.Vec, out_dt, s, s).assign(vec, 0)
    tpop(pipe, vt)
    out_t = Tile.of("ND", TileType.Vec, out_dt, s, s).assign(vec, 0x20000)
    npd = out_t.dtype.numpy
    out_t.write((vt.read() + npd.type(1.0)).astype(npd))  # TADDS(outTile, vecTile, 1.0), by the harness
    buf, gout = gm_out(s * s * 2, out_dt)
    tstore(gout, RowMajor(s, s), out_t)
    prod = a_host.astype(np.float64) @ b_host.astype(np.float64)
    if mode is QuantMode.DEQF16:
        prod = prod * 2.0
    elif mode is QuantMode.VDEQF16:
        prod = prod * q[None, :]
    conv = prod.astype(np.float32).astype(npd)
    want = (conv.astype(np.float32) + np.float32(1.0)).astype(npd)
    np.testing.assert_array_equal(buf.raw.view(npd).reshape(s, s).view(np.uint16), want.view(np.uint16))
    check_golden(FAMILY, f"{SUITE}.{name}", "golden.bin", buf.raw)
