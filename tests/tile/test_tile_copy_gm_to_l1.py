"""GM -> L1 copies: CopyGmToL1 for RowMajor->zN, ColumnMajor->nZ, zN->zN, nZ->nZ and the
three branches of CopyGmToL1GMMPTD.

Expected L1 images are built byte by byte from the fractal offset formulas, written out
here by hand (not through catlass_py.layout), over an arena pre-filled with a sentinel byte so that
"left untouched" is visible.
"""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catlass_py.arch import ATLAS_A2 as A2
from catlass_py.arch import GlobalBuffer, InstructionEvent, Observer, standalone_core
from catlass_py.errors import CapacityError, ConfigError, OutOfBoundsError
from catlass_py.gemm import GemmType
from catlass_py.layout import ColumnMajor, RowMajor, nZ, zN
from catlass_py.tile import CopyGmToL1, CopyGmToL1GMMPTD

SENTINEL = 0xA5
NP = {"int8": np.int8, "float16": np.float16, "float32": np.float32, "bfloat16": ml_dtypes.bfloat16}
C0 = {"int8": 32, "float16": 16, "bfloat16": 16, "float32": 8}


def rup(a, b):
    return -(-a // b) * b


def zn_off(r, c, panel_rows, c0):
    """zN with 16 x C0 fractals, panel height ``panel_rows`` (= roundup(L1 rows, 16))."""
    return (r // 16) * 16 * c0 + (c // c0) * panel_rows * c0 + (r % 16) * c0 + c % c0


def nz_off(r, c, row_width, c0):
    """nZ with C0 x 16 fractals, fractal-row width ``row_width`` (= roundup(L1 cols, 16))."""
    return (r // c0) * row_width * c0 + (c // 16) * 16 * c0 + (r % c0) + (c % 16) * c0


def rand(dtype, shape, rng):
    if dtype == "int8":
        return rng.integers(-128, 128, size=shape).astype(np.int8)
    return rng.standard_normal(shape).astype(np.float32).astype(NP[dtype])


class Core:
    """A standalone AIC with its L1 filled with the sentinel byte."""

    def __init__(self, observers=()):
        self.ctx = standalone_core(None, "AIC", observers=observers)
        self.raw = self.ctx.resource.l1_buf.raw
        self.raw[:] = SENTINEL

    def l1(self, dtype, byte_offset=0, count=None):
        return self.ctx.resource.l1_buf.get_buffer_by_byte(dtype, byte_offset, count)


def expected_image(raw, dtype, byte_offset, entries):
    """Copy of ``raw`` with element ``off`` (typed, from ``byte_offset``) set to ``value`` for each entry."""
    exp = raw.copy()
    typed = exp[byte_offset:].view(NP[dtype])
    for off, value in entries:
        typed[off] = value
    return exp


def assert_bytes_equal(actual, expected):
    bad = np.flatnonzero(actual != expected)
    assert bad.size == 0, f"{bad.size} bytes differ, first at byte {bad[:8]}"


# ---------------------------------------------------------------------------------------------------
# RowMajor -> zN

ROWMAJOR_CASES = [
    # (rows, cols in units of "c0 multiples + extra" resolved per dtype below)
    (1, 1), (5, 7), (16, "c0"), (17, "c0+3"), (40, "3c0+5"), (64, "4c0"),
]


def _cols(spec, c0):
    return {"c0": c0, "c0+3": c0 + 3, "3c0+5": 3 * c0 + 5, "4c0": 4 * c0}.get(spec, spec)


@pytest.mark.parametrize("dtype", ["int8", "float16", "float32", "bfloat16"])
@pytest.mark.parametrize("rows,cols_spec", ROWMAJOR_CASES)
def test_rowmajor_to_zn_places_tile_zero_fills_last_chunk_and_keeps_other_rows(dtype, rows, cols_spec):
    c0 = C0[dtype]
    cols = _cols(cols_spec, c0)
    l1_rows, l1_cols = 64, 4 * c0
    rng = np.random.default_rng(rows * 1000 + cols)
    # The tile sits at (3, 2) inside a larger GM matrix with a padded leading dimension.
    big = rand(dtype, (rows + 5, cols + 9), rng)
    ldm = big.shape[1]
    gm = GlobalBuffer.from_array(big, "A", read_only=True).tensor(dtype)
    core = Core()
    dst = core.l1(dtype, 1024)
    layout_dst = zN.make_layout(dtype, l1_rows, l1_cols)
    CopyGmToL1(A2, GemmType(dtype, RowMajor))(dst, gm[3 * ldm + 2], layout_dst, RowMajor(rows, cols, ldm))

    tile = big[3:3 + rows, 2:2 + cols]
    entries = [(zn_off(r, c, l1_rows, c0), tile[r, c]) for r in range(rows) for c in range(cols)]
    entries += [(zn_off(r, c, l1_rows, c0), 0) for r in range(rows) for c in range(cols, rup(cols, c0))]
    # Build the expectation from a fresh sentinel image (the copy must have touched nothing else).
    fresh = np.full_like(core.raw, SENTINEL)
    assert_bytes_equal(core.raw, expected_image(fresh, dtype, 1024, entries))


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 48), cols=st.integers(1, 96), extra_ld=st.integers(0, 40), seed=st.integers(0, 2**16))
def test_rowmajor_to_zn_property_int8(rows, cols, extra_ld, seed):
    rng = np.random.default_rng(seed)
    ldm = cols + extra_ld
    a = rng.integers(-128, 128, size=(rows, ldm)).astype(np.int8)
    gm = GlobalBuffer.from_array(a, "A", read_only=True).tensor("int8")
    core = Core()
    layout_dst = zN.make_layout("int8", 48, 96)
    CopyGmToL1(A2, GemmType("int8", RowMajor))(core.l1("int8"), gm, layout_dst, RowMajor(rows, cols, ldm))
    l1 = core.raw.view(np.int8)
    r, c = np.meshgrid(np.arange(rows), np.arange(rup(cols, 32)), indexing="ij")
    got = l1[zn_off(r, c, 48, 32)]
    want = np.zeros((rows, rup(cols, 32)), np.int8)
    want[:, :cols] = a[:, :cols]
    np.testing.assert_array_equal(got, want)
    # rows past the tile: every byte of their fractal rows is still the sentinel
    r2, c2 = np.meshgrid(np.arange(rows, 48), np.arange(96), indexing="ij")
    assert np.all(core.raw[zn_off(r2, c2, 48, 32)] == SENTINEL)
    # nothing beyond the L1 layout was written
    assert np.all(core.raw[48 * 96:] == SENTINEL)


# ---------------------------------------------------------------------------------------------------
# ColumnMajor -> nZ


@pytest.mark.parametrize("dtype", ["int8", "float16", "float32"])
@pytest.mark.parametrize("rows_spec,cols", [(1, 1), (7, 5), ("c0", 16), ("c0+3", 17), ("3c0+5", 40)])
def test_columnmajor_to_nz_places_tile_zero_fills_last_chunk_of_each_column(dtype, rows_spec, cols):
    c0 = C0[dtype]
    rows = _cols(rows_spec, c0)
    l1_rows, l1_cols = 4 * c0, 64
    rng = np.random.default_rng(rows * 77 + cols)
    ldm = rows + 6
    # Column-major storage: host array [col][row] with ldm elements per column.
    host = rand(dtype, (cols + 2, ldm), rng)
    gm = GlobalBuffer.from_array(host, "B", read_only=True).tensor(dtype)
    core = Core()
    layout_dst = nZ.make_layout(dtype, l1_rows, l1_cols)
    # The tile starts at (row 1, col 1) of the GM matrix: element offset 1 + 1*ldm.
    CopyGmToL1(A2, GemmType(dtype, ColumnMajor))(core.l1(dtype), gm[1 + ldm], layout_dst,
                                                   ColumnMajor(rows, cols, ldm))
    tile = host[1:1 + cols, 1:1 + rows].T  # tile[r, c] = element (1 + r, 1 + c)
    entries = [(nz_off(r, c, l1_cols, c0), tile[r, c]) for r in range(rows) for c in range(cols)]
    entries += [(nz_off(r, c, l1_cols, c0), 0) for c in range(cols) for r in range(rows, rup(rows, c0))]
    fresh = np.full_like(core.raw, SENTINEL)
    assert_bytes_equal(core.raw, expected_image(fresh, dtype, 0, entries))


# ---------------------------------------------------------------------------------------------------
# zN -> zN and nZ -> nZ (whole panels, padding travels with them)


@pytest.mark.parametrize("dtype", ["int8", "float16", "float32"])
@pytest.mark.parametrize("rows,cols_spec", [(16, "c0"), (20, "c0+3"), (5, 7), (33, "3c0+5")])
def test_zn_to_zn_copies_orgrows_of_every_whole_panel(dtype, rows, cols_spec):
    c0 = C0[dtype]
    cols = _cols(cols_spec, c0)
    rng = np.random.default_rng(cols * 31 + rows)
    big_rows, big_cols = 80, 6 * c0
    big = rand(dtype, (big_rows, big_cols), rng)
    gm_layout = zN.make_layout(dtype, big_rows, big_cols)  # GM "NZ" format of the whole matrix
    packed = np.zeros(big_rows * big_cols, NP[dtype])
    r, c = np.meshgrid(np.arange(big_rows), np.arange(big_cols), indexing="ij")
    packed[zn_off(r, c, big_rows, c0)] = big
    gm = GlobalBuffer.from_array(packed, "Anz", read_only=True).tensor(dtype)
    r0, col0 = 16, c0  # fractal-aligned tile origin
    src = gm[zn_off(r0, col0, big_rows, c0)]
    core = Core()
    l1_rows, l1_cols = 48, 4 * c0
    CopyGmToL1(A2, GemmType(dtype, zN))(core.l1(dtype), src, zN.make_layout(dtype, l1_rows, l1_cols),
                                          gm_layout.get_tile_layout(rows, cols))
    # blockLen = orgRows rows of each of ceil(cols, C0) panels, full C0 width (GM data, not zeros).
    entries = [(zn_off(i, j, l1_rows, c0), big[r0 + i, col0 + j]) for i in range(rows) for j in range(rup(cols, c0))]
    fresh = np.full_like(core.raw, SENTINEL)
    assert_bytes_equal(core.raw, expected_image(fresh, dtype, 0, entries))


@pytest.mark.parametrize("dtype", ["int8", "float16", "float32"])
@pytest.mark.parametrize("rows_spec,cols", [("c0", 16), ("c0+3", 20), (7, 5), ("3c0+5", 33)])
def test_nz_to_nz_copies_orgcols_of_every_whole_row_panel(dtype, rows_spec, cols):
    c0 = C0[dtype]
    rows = _cols(rows_spec, c0)
    rng = np.random.default_rng(cols * 13 + rows)
    big_rows, big_cols = 6 * c0, 80
    big = rand(dtype, (big_rows, big_cols), rng)
    gm_layout = nZ.make_layout(dtype, big_rows, big_cols)
    packed = np.zeros(big_rows * big_cols, NP[dtype])
    r, c = np.meshgrid(np.arange(big_rows), np.arange(big_cols), indexing="ij")
    packed[nz_off(r, c, big_cols, c0)] = big
    gm = GlobalBuffer.from_array(packed, "Bnz", read_only=True).tensor(dtype)
    r0, col0 = c0, 16
    src = gm[nz_off(r0, col0, big_cols, c0)]
    core = Core()
    l1_rows, l1_cols = 4 * c0, 48
    CopyGmToL1(A2, GemmType(dtype, nZ))(core.l1(dtype), src, nZ.make_layout(dtype, l1_rows, l1_cols),
                                          gm_layout.get_tile_layout(rows, cols))
    entries = [(nz_off(i, j, l1_cols, c0), big[r0 + i, col0 + j]) for i in range(rup(rows, c0)) for j in range(cols)]
    fresh = np.full_like(core.raw, SENTINEL)
    assert_bytes_equal(core.raw, expected_image(fresh, dtype, 0, entries))


# ---------------------------------------------------------------------------------------------------
# errors


def test_tile_larger_than_l1_layout_raises_capacity_error():
    a = np.zeros((40, 64), np.int8)
    gm = GlobalBuffer.from_array(a, "A", read_only=True).tensor("int8")
    core = Core()
    copy = CopyGmToL1(A2, GemmType("int8", RowMajor))
    with pytest.raises(CapacityError):
        copy(core.l1("int8"), gm, zN.make_layout("int8", 32, 64), RowMajor(40, 64))
    with pytest.raises(CapacityError):
        copy(core.l1("int8"), gm, zN.make_layout("int8", 48, 32), RowMajor(40, 64))
    assert np.all(core.raw == SENTINEL)


def test_l1_tensor_too_small_for_the_layout_raises_capacity_error():
    a = np.zeros((32, 64), np.int8)
    gm = GlobalBuffer.from_array(a, "A", read_only=True).tensor("int8")
    core = Core()
    small = core.l1("int8", 0, 1024)  # the 32x64 zN layout needs 2048 elements
    with pytest.raises(CapacityError):
        CopyGmToL1(A2, GemmType("int8", RowMajor))(small, gm, zN.make_layout("int8", 32, 64), RowMajor(32, 64))


@pytest.mark.parametrize("copy_cls", [CopyGmToL1, CopyGmToL1GMMPTD])
@pytest.mark.parametrize("rows,cols", [(4, 40), (1, 50)])
def test_gm_out_of_bounds_raises_naming_the_tensor(copy_cls, rows, cols):
    gm = GlobalBuffer.from_array(np.zeros(150, np.int8), "tensorA", read_only=True).tensor("int8")
    core = Core()
    with pytest.raises(OutOfBoundsError, match="tensorA"):
        copy_cls(A2, GemmType("int8", RowMajor))(core.l1("int8"), gm[110], zN.make_layout("int8", 32, 64),
                                                   RowMajor(rows, cols))


def test_columnmajor_out_of_bounds_names_tensor():
    gm = GlobalBuffer.from_array(np.zeros(100, np.float16), "colB", read_only=True).tensor("float16")
    core = Core()
    with pytest.raises(OutOfBoundsError, match="colB"):
        CopyGmToL1(A2, GemmType("float16", ColumnMajor))(core.l1("float16"), gm, nZ.make_layout("float16", 32, 32),
                                                           ColumnMajor(20, 6))


def test_unsupported_layout_pairs_raise_config_error():
    with pytest.raises(ConfigError):
        CopyGmToL1(A2, GemmType("int8", RowMajor), GemmType("int8", nZ))
    with pytest.raises(ConfigError):
        CopyGmToL1(A2, GemmType("int8", ColumnMajor), GemmType("int8", zN))
    with pytest.raises(ConfigError):
        CopyGmToL1GMMPTD(A2, GemmType("int8", ColumnMajor))


# ---------------------------------------------------------------------------------------------------
# CopyGmToL1GMMPTD


class Ops(Observer):
    def __init__(self):
        self.events = []

    def on_event(self, event):
        if isinstance(event, InstructionEvent):
            self.events.append(event)


@pytest.mark.parametrize("dtype", ["int8", "float16", "float32"])
def test_gmmptd_one_row_copies_whole_chunks_with_following_gm_bytes(dtype):
    c0 = C0[dtype]
    cols = 2 * c0 + 3  # three chunks, the last one mostly beyond the row
    rng = np.random.default_rng(5)
    flat = rand(dtype, 10 * c0, rng)
    start = c0 + 1  # not chunk-aligned in GM
    gm = GlobalBuffer.from_array(flat, "A", read_only=True).tensor(dtype)
    core = Core()
    l1_rows = 32
    layout_dst = zN.make_layout(dtype, l1_rows, 4 * c0)
    CopyGmToL1GMMPTD(A2, GemmType(dtype, RowMajor))(core.l1(dtype), gm[start], layout_dst, RowMajor(1, cols))
    # chunk p (C0 elements straight from GM) lands in row 0 of panel p; no zero fill
    entries = [(zn_off(0, j, l1_rows, c0), flat[start + j]) for j in range(3 * c0)]
    fresh = np.full_like(core.raw, SENTINEL)
    assert_bytes_equal(core.raw, expected_image(fresh, dtype, 0, entries))
    # on the valid region it equals the standard copy
    ref = Core()
    CopyGmToL1(A2, GemmType(dtype, RowMajor))(ref.l1(dtype), gm[start], layout_dst, RowMajor(1, cols))
    valid = np.array([zn_off(0, j, l1_rows, c0) for j in range(cols)])
    np.testing.assert_array_equal(core.raw.view(NP[dtype])[valid].view(np.uint8),
                                  ref.raw.view(NP[dtype])[valid].view(np.uint8))


def test_gmmptd_one_row_reads_poison_past_the_end_of_gm():
    flat = np.arange(1, 51, dtype=np.int8)  # 50 bytes
    gm = GlobalBuffer.from_array(flat, "A", read_only=True).tensor("int8")
    core = Core()
    layout_dst = zN.make_layout("int8", 16, 64)
    CopyGmToL1GMMPTD(A2, GemmType("int8", RowMajor))(core.l1("int8"), gm[10], layout_dst, RowMajor(1, 38))
    l1 = core.raw
    # panel 0 row 0 = flat[10:42]; panel 1 row 0 = flat[42:50] then 24 bytes past the end of GM = 0xFF
    np.testing.assert_array_equal(l1[0:32], flat[10:42].view(np.uint8))
    p1 = 16 * 32
    np.testing.assert_array_equal(l1[p1:p1 + 8], flat[42:50].view(np.uint8))
    assert np.all(l1[p1 + 8:p1 + 32] == 0xFF)
    # rows 1..15 of both panels untouched
    assert np.all(l1[32:p1] == SENTINEL) and np.all(l1[p1 + 32:2 * p1] == SENTINEL)


@pytest.mark.parametrize("dtype", ["int8", "float16"])
def test_gmmptd_one_panel_contiguous_branch(dtype):
    c0 = C0[dtype]
    rows = 21
    rng = np.random.default_rng(9)
    a = rand(dtype, (rows + 3, c0), rng)
    gm = GlobalBuffer.from_array(a, "A", read_only=True).tensor(dtype)
    obs = Ops()
    core = Core(observers=(obs,))
    layout_dst = zN.make_layout(dtype, 48, 2 * c0)
    CopyGmToL1GMMPTD(A2, GemmType(dtype, RowMajor))(core.l1(dtype, 512), gm[c0], layout_dst, RowMajor(rows, c0, c0))
    # one panel of zN == row-major: rows*C0 contiguous elements from byte 512
    nbytes = rows * 32
    np.testing.assert_array_equal(core.raw[512:512 + nbytes], a[1:1 + rows].reshape(-1).view(np.uint8))
    assert np.all(core.raw[:512] == SENTINEL) and np.all(core.raw[512 + nbytes:] == SENTINEL)
    assert [e.op for e in obs.events] == ["CopyGmToL1GMMPTD"]
    # identical to the standard copy
    ref = Core()
    CopyGmToL1(A2, GemmType(dtype, RowMajor))(ref.l1(dtype, 512), gm[c0], layout_dst, RowMajor(rows, c0, c0))
    assert_bytes_equal(core.raw, ref.raw)


@pytest.mark.parametrize("dtype", ["int8", "float16", "float32"])
@pytest.mark.parametrize("rows,cols,ldm", [(7, 45, 50), (2, 8, 8), (33, 32, 64), (16, 16, 16)])
def test_gmmptd_standard_branch_equals_copy_gm_to_l1(dtype, rows, cols, ldm):
    rng = np.random.default_rng(rows + cols)
    a = rand(dtype, (rows, ldm), rng)
    gm = GlobalBuffer.from_array(a, "A", read_only=True).tensor(dtype)
    layout_dst = zN.make_layout(dtype, 48, 64)
    got, ref = Core(), Core()
    CopyGmToL1GMMPTD(A2, GemmType(dtype, RowMajor))(got.l1(dtype), gm, layout_dst, RowMajor(rows, cols, ldm))
    CopyGmToL1(A2, GemmType(dtype, RowMajor))(ref.l1(dtype), gm, layout_dst, RowMajor(rows, cols, ldm))
    assert_bytes_equal(got.raw, ref.raw)
    # and the standard copy really wrote the tile (guards against both doing nothing)
    c0 = C0[dtype]
    typed = got.raw.view(NP[dtype])
    r, c = np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij")
    np.testing.assert_array_equal(typed[zn_off(r, c, 48, c0)].view(np.uint8), a[:, :cols].view(np.uint8))


def test_copy_reports_gm_read_range_and_op_name():
    a = np.arange(20 * 50, dtype=np.int32).astype(np.int8).reshape(20, 50)
    gm = GlobalBuffer.from_array(a, "A", read_only=True).tensor("int8")
    obs = Ops()
    core = Core(observers=(obs,))
    CopyGmToL1(A2, GemmType("int8", RowMajor))(core.l1("int8"), gm[2 * 50 + 3], zN.make_layout("int8", 32, 64),
                                                RowMajor(10, 40, 50))
    (ev,) = obs.events
    assert ev.op == "CopyGmToL1"
    (acc,) = ev.gm_reads
    assert (acc.buffer, acc.start, acc.length, acc.stride, acc.count) == ("A", 103, 40, 50, 10)


def test_large_ldm_falls_back_to_one_dma_per_row_with_the_same_result():
    rows, cols, ldm = 3, 40, 70000  # ldm >= STRIDE_LIMIT (65536)
    rng = np.random.default_rng(8)
    a = rng.integers(-128, 128, size=(rows, ldm)).astype(np.int8)
    gm = GlobalBuffer.from_array(a, "A", read_only=True).tensor("int8")
    obs = Ops()
    core = Core(observers=(obs,))
    CopyGmToL1(A2, GemmType("int8", RowMajor))(core.l1("int8"), gm, zN.make_layout("int8", 16, 64),
                                              RowMajor(rows, cols, ldm))
    entries = [(zn_off(r, c, 16, 32), a[r, c]) for r in range(rows) for c in range(cols)]
    entries += [(zn_off(r, c, 16, 32), 0) for r in range(rows) for c in range(cols, 64)]
    assert_bytes_equal(core.raw, expected_image(np.full_like(core.raw, SENTINEL), "int8", 0, entries))
    (ev,) = obs.events
    assert ev.info["dmas"] == rows
