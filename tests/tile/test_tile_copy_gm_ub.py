"""GM <-> UB copies of the vector cores (CopyGm2Ub, CopyUb2Gm; DataCopyPad semantics)."""

import ml_dtypes
import numpy as np
import pytest

from catlass_py.arch import ATLAS_A2 as A2
from catlass_py.arch import GlobalBuffer, standalone_core
from catlass_py.errors import AlignmentError, ConfigError, OutOfBoundsError
from catlass_py.gemm import GemmType
from catlass_py.layout import ColumnMajor, RowMajor, VectorLayout
from catlass_py.tile import CopyGm2Ub, CopyUb2Gm

SENT = 0x3C
NP = {"int32": np.int32, "float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "int8": np.int8}


def blk(dtype):
    return 32 // np.dtype(NP[dtype]).itemsize


def aiv():
    ctx = standalone_core(A2, "AIV")
    ctx.resource.ub_buf.raw[:] = SENT
    return ctx


def rand(dtype, shape, rng):
    if dtype in ("int32", "int8"):
        info = np.iinfo(NP[dtype])
        return rng.integers(info.min, info.max, size=shape, endpoint=True).astype(NP[dtype])
    return rng.standard_normal(shape).astype(np.float32).astype(NP[dtype])


@pytest.mark.parametrize("dtype", ["int32", "float16", "bfloat16", "int8"])
@pytest.mark.parametrize("rows,cols,gm_ld", [(1, 1, 2), (7, 13, 20), (32, 256, 260), (5, 40, 1000)])
def test_gm2ub_rowmajor_lands_rows_at_ub_pitch(dtype, rows, cols, gm_ld):
    rng = np.random.default_rng(rows * cols)
    b = blk(dtype)
    ub_ld = -(-cols // b) * b + b  # a whole number of blocks, wider than needed
    host = rand(dtype, (rows + 2, gm_ld), rng)
    gm = GlobalBuffer.from_array(host, "C", read_only=True).tensor(dtype)
    ctx = aiv()
    isz = np.dtype(NP[dtype]).itemsize
    ub = ctx.resource.ub_buf.get_buffer_by_byte(dtype, 64)
    CopyGm2Ub(A2, GemmType(dtype, RowMajor))(ub, gm[gm_ld + 1], RowMajor(rows, cols, ub_ld), RowMajor(rows, cols, gm_ld))
    raw = ctx.resource.ub_buf.raw
    exp = np.full_like(raw, SENT)
    typed = exp[64:].view(NP[dtype])
    for r in range(rows):
        typed[r * ub_ld:r * ub_ld + cols] = host[1 + r, 1:1 + cols]
    np.testing.assert_array_equal(raw, exp)
    assert isz * ub_ld % 32 == 0


@pytest.mark.parametrize("dtype", ["int32", "float16", "bfloat16"])
@pytest.mark.parametrize("rows,cols,gm_ld", [(1, 1, 3), (7, 13, 20), (32, 256, 300)])
def test_ub2gm_rowmajor_writes_exactly_rows_by_cols(dtype, rows, cols, gm_ld):
    rng = np.random.default_rng(rows + cols)
    b = blk(dtype)
    ub_ld = -(-cols // b) * b
    ctx = aiv()
    ub = ctx.resource.ub_buf.get_buffer_by_byte(dtype, 0)
    data = rand(dtype, rows * ub_ld, rng)
    ub.view(rows * ub_ld)[:] = data
    nelem = (rows + 2) * gm_ld
    buf = GlobalBuffer.empty(nelem * np.dtype(NP[dtype]).itemsize, "D", fill=SENT)
    gm = buf.tensor(dtype)
    origin = gm_ld + 2
    CopyUb2Gm(A2, GemmType(dtype, RowMajor))(gm[origin], ub, RowMajor(rows, cols, gm_ld), RowMajor(rows, cols, ub_ld))
    exp = np.full_like(buf.raw, SENT)
    typed = exp.view(NP[dtype])
    for r in range(rows):
        typed[origin + r * gm_ld:origin + r * gm_ld + cols] = data[r * ub_ld:r * ub_ld + cols]
    np.testing.assert_array_equal(buf.raw, exp)


def test_vector_layout_copies_are_one_dense_burst():
    rng = np.random.default_rng(1)
    vec = rng.standard_normal(100).astype(ml_dtypes.bfloat16)
    gm = GlobalBuffer.from_array(vec, "scale", read_only=True).tensor("bfloat16")
    ctx = aiv()
    ub = ctx.resource.ub_buf.get_buffer_by_byte("bfloat16", 256)
    # The UB layout is ignored (CATLASS's VectorLayout::MakeLayoutInUb is a dummy)
    CopyGm2Ub(A2, GemmType("bfloat16", VectorLayout))(ub, gm[10], VectorLayout(1), VectorLayout(37))
    raw = ctx.resource.ub_buf.raw
    np.testing.assert_array_equal(raw[256:256 + 74], vec[10:47].view(np.uint8))
    assert np.all(raw[:256] == SENT) and np.all(raw[256 + 74:] == SENT)
    out = GlobalBuffer.empty(200, "out", fill=SENT)
    CopyUb2Gm(A2, GemmType("bfloat16", VectorLayout))(out.tensor("bfloat16")[3], ub, VectorLayout(37), VectorLayout(0))
    np.testing.assert_array_equal(out.raw[6:80], vec[10:47].view(np.uint8))
    assert np.all(out.raw[:6] == SENT) and np.all(out.raw[80:] == SENT)


@pytest.mark.parametrize("dtype,bad_ld", [("float16", 20), ("int32", 12), ("float32", 4), ("int8", 48)])
def test_misaligned_ub_pitch_raises_alignment_error(dtype, bad_ld):
    gm = GlobalBuffer.from_array(np.zeros((4, 64), NP[dtype]), "C").tensor(dtype)
    ctx = aiv()
    ub = ctx.resource.ub_buf.get_buffer_by_byte(dtype, 0)
    with pytest.raises(AlignmentError):
        CopyGm2Ub(A2, GemmType(dtype, RowMajor))(ub, gm, RowMajor(4, 3, bad_ld), RowMajor(4, 3, 64))
    with pytest.raises(AlignmentError):
        CopyUb2Gm(A2, GemmType(dtype, RowMajor))(gm, ub, RowMajor(4, 3, 64), RowMajor(4, 3, bad_ld))
    assert np.all(ctx.resource.ub_buf.raw == SENT)


def test_gm_errors_name_the_tensor():
    ctx = aiv()
    ub = ctx.resource.ub_buf.get_buffer_by_byte("int32", 0)
    small = GlobalBuffer.from_array(np.zeros(50, np.int32), "smallC", read_only=True).tensor("int32")
    with pytest.raises(OutOfBoundsError, match="smallC"):
        CopyGm2Ub(A2, GemmType("int32", RowMajor))(ub, small, RowMajor(4, 8, 8), RowMajor(4, 8, 16))
    with pytest.raises(OutOfBoundsError, match="smallC"):  # read-only destination
        CopyUb2Gm(A2, GemmType("int32", RowMajor))(small, ub, RowMajor(2, 8, 8), RowMajor(2, 8, 8))


def test_non_rowmajor_gm_layout_rejected():
    with pytest.raises(ConfigError):
        CopyGm2Ub(A2, GemmType("int32", ColumnMajor))
    with pytest.raises(ConfigError):
        CopyUb2Gm(A2, GemmType("int32", ColumnMajor))


@pytest.mark.parametrize("layout", [VectorLayout(32), RowMajor(2, 16)])
def test_a_copy_never_converts_elements(layout):
    ctx = aiv()
    x = np.ones(32, np.float16)
    gm16 = GlobalBuffer.from_array(x, "x").tensor("float16")
    ub32 = ctx.resource.ub_buf.get_buffer_by_byte("float32", 0)
    ub16 = ctx.resource.ub_buf.get_buffer_by_byte("float16", 0)
    with pytest.raises(ConfigError, match=r"CopyGm2Ub: assembled for float32 elements, called with GM float16 -> UB"):
        CopyGm2Ub(A2, GemmType("float32", type(layout)))(ub32, gm16, layout, layout)
    with pytest.raises(ConfigError, match=r"CopyGm2Ub: assembled for float32 elements, called with GM float16 -> UB "
                                          r"float16"):
        CopyGm2Ub(A2, GemmType("float32", type(layout)))(ub16, gm16, layout, layout)
    with pytest.raises(ConfigError, match=r"CopyUb2Gm: assembled for float16 elements, called with UB float32 -> GM"):
        CopyUb2Gm(A2, GemmType("float16", type(layout)))(gm16, ub32, layout, layout)
    CopyGm2Ub(A2, GemmType("float16", type(layout)))(ub16, gm16, layout, layout)  # matching types copy
