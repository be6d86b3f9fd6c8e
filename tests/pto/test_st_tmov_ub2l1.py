"""PTO-ISA conformance: ``tests/npu/a5/src/st/testcase/tmov_ub2l1`` (the Ascend 950 UB -> L1 move: TMOV / TEXTRACT from a
Vec NZ tile into a Mat tile).

gen_data.py draws without a seed (``uniform(-10, 10)`` cast to the type): fresh draws here, upstream inputs with
``PTO_ST_GOLDEN_DIR``. Kernel, on a vector core: TLOAD the ND source, TMOV ND -> NZ into a Vec tile (RowPlusOne when
it has an extra row), then TMOV (or TEXTRACT at the case's offset) into a Mat tile in the AI core's L1
(:meth:`~catlass_py.arch.CoreContext.cube_l1`). The cube core then copies L1 back to UB with the CCE intrinsic
``copy_cbuf_to_ubuf`` (not a PTO instruction: a byte copy by the harness here), and the vector core TSTOREs in the NZ
GM layout. Expected: the source window in NZ order.
"""

import numpy as np
import pytest
from pto_helpers import aiv
from st_common import case_input, case_rng, check_golden, gm_in, gm_out, params

from catlass_py.layout import RowMajor
from catlass_py.tile.pto import CompactMode, Tile, TileType, pto_layout, textract, tload, tmov, tstore

FAMILY, SUITE, V = "tmov_ub2l1", "TMovUb2l1Test", TileType.Vec
CASES = [(f"case{i + 1}", *p) for i, p in enumerate([
    ("float16", 16, 32, 17, 16, 32, 0, 0), ("float16", 64, 256, 65, 64, 256, 0, 0), ("float32", 48, 72, 48, 48, 72, 0, 0),
    ("float32", 96, 8, 97, 96, 8, 0, 0), ("int8", 32, 512, 32, 32, 512, 0, 0), ("int8", 64, 96, 64, 64, 96, 0, 0),
    ("float16", 64, 64, 65, 48, 48, 16, 16), ("float32", 128, 128, 128, 64, 64, 64, 64),
    ("int8", 256, 256, 256, 32, 32, 224, 224)])]


@pytest.mark.parametrize("case", params(CASES, fast={"case1", "case7", "case9"}))
def test_tmov_ub2l1(case):
    name, dt, rows, cols, extra, vr, vc, ir, ic = case
    full = f"{SUITE}.{name}"
    npd = np.dtype(dt)
    rng = case_rng(name)
    host = case_input(FAMILY, full, "input_arr.bin", npd, (rows, cols),
                      lambda: rng.uniform(-10, 10, size=(rows, cols)).astype(npd))
    core = aiv()
    src = Tile.of("ND", V, dt, rows, cols).assign(core, 0)
    compact = CompactMode.RowPlusOne if extra > rows else CompactMode.Null
    tmp = Tile.of("NZ", V, dt, extra, cols, valid=(rows, cols), compact=compact).assign(core, 0x10000)
    dst = Tile.of("NZ", V, dt, vr, vc).assign(core, 0x20000)
    mat = Tile.of("NZ", TileType.Mat, dt, vr, vc).assign(core, 0)  # the AI core's L1, from the vector core
    tload(src, gm_in(host), RowMajor(rows, cols))
    tmov(tmp, src)
    if ir or ic:
        textract(mat, tmp, ir, ic)
    else:
        tmov(mat, tmp)
    nbytes = vr * vc * npd.itemsize
    dst.tensor.view().view(np.uint8)[:nbytes] = mat.tensor.view().view(np.uint8)[:nbytes]  # copy_cbuf_to_ubuf
    buf, out = gm_out(nbytes, dt)
    c0 = 32 // npd.itemsize
    tstore(out, pto_layout("NZ", vr, vc, 16, c0), dst)
    win = host[ir: ir + vr, ic: ic + vc]
    want = win.reshape(vr // 16, 16, vc // c0, c0).transpose(2, 0, 1, 3).reshape(-1)
    np.testing.assert_array_equal(buf.raw.view(npd), want)
    check_golden(FAMILY, full, "golden_output.bin", buf.raw)
