"""Property tests: every layout is injective, fits its capacity, and its strided fast paths agree with
the slow index-map reference (including partial regions and stale data around them)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from catlass_py.layout import (
    L0C,
    ColumnMajor,
    PaddingColumnMajor,
    PaddingRowMajor,
    RowMajor,
    VectorLayout,
    layout_to_index_map,
    nN,
    nZ,
    padded_index_map,
    zN,
    zZ,
)

SETTINGS = settings(max_examples=300, deadline=None)
FRACTAL = [zN, nZ, zZ, nN]
DTYPES = ["int8", "fp16", "fp32"]
SENTINEL = -7

size = st.integers(0, 40)
small = st.integers(1, 5)


@st.composite
def base_layouts(draw):
    """Layouts as built by CATLASS: constructors, make_layout, compact with toy fractals."""
    rows, cols = draw(size), draw(size)
    kind = draw(st.sampled_from(["row", "col", "make", "compact", "l0c", "prm", "pcm"]))
    if kind == "row":
        return RowMajor(rows, cols, cols + draw(st.integers(0, 5)))
    if kind == "col":
        return ColumnMajor(rows, cols, rows + draw(st.integers(0, 5)))
    if kind == "make":
        return draw(st.sampled_from(FRACTAL)).make_layout(draw(st.sampled_from(DTYPES)), rows, cols)
    if kind == "compact":
        return draw(st.sampled_from(FRACTAL)).compact(rows, cols, draw(small), draw(small))
    if kind == "l0c":
        return L0C.make_layout(rows, cols)
    cls = PaddingRowMajor if kind == "prm" else PaddingColumnMajor
    return cls(rows, cols, draw(small), draw(small))


@st.composite
def layouts(draw):
    """Base layouts, or a tile (no larger than the parent) of one, as GetTileLayout produces."""
    lay = draw(base_layouts())
    if draw(st.booleans()):
        lay = lay.get_tile_layout(draw(st.integers(0, lay.rows)), draw(st.integers(0, lay.cols)))
    return lay


def matrix_for(lay, rng, dtype=np.int32):
    return rng.integers(0, 1000, (lay.rows, lay.cols)).astype(dtype)


@SETTINGS
@given(layouts())
def test_injective_and_within_capacity(lay):
    m = padded_index_map(lay)
    assert np.unique(m).size == m.size
    if m.size:
        assert m.max() < lay.capacity
        assert m.min() >= 0


@SETTINGS
@given(layouts(), st.integers(0, 2**32 - 1))
def test_pack_unpack_round_trip(lay, seed):
    rng = np.random.default_rng(seed)
    x = matrix_for(lay, rng)
    buf = lay.pack(x, fill=SENTINEL)
    assert buf.shape == (lay.capacity,) and buf.dtype == x.dtype
    np.testing.assert_array_equal(lay.unpack(buf), x)
    idx = layout_to_index_map(lay)
    expected = np.full(lay.capacity, SENTINEL, x.dtype)
    expected[idx] = x
    np.testing.assert_array_equal(buf, expected)


@SETTINGS
@given(layouts(), st.data(), st.sampled_from([np.int8, np.float16, np.float32, np.int32]))
def test_read_write_match_index_map(lay, data, dtype):
    r = data.draw(st.integers(0, lay.rows), label="r")
    c = data.draw(st.integers(0, lay.cols), label="c")
    rng = np.random.default_rng(r * 1000 + c)
    x = rng.integers(0, 100, (r, c)).astype(dtype)
    idx = layout_to_index_map(lay, r, c)
    n = max(lay.capacity, 1) + data.draw(st.integers(0, 3), label="slack")
    buf = np.full(n, SENTINEL, dtype)
    lay.write(buf, x)
    expected = np.full(n, SENTINEL, dtype)
    expected[idx] = x
    np.testing.assert_array_equal(buf, expected)  # and nothing else changed
    # read of any sub-region equals a gather through the index map
    rr = data.draw(st.integers(0, lay.rows), label="rr")
    cc = data.draw(st.integers(0, lay.cols), label="cc")
    noise = rng.integers(0, 100, n).astype(dtype)
    got = lay.read(noise, rr, cc)
    assert got.shape == (rr, cc) and got.flags.c_contiguous
    np.testing.assert_array_equal(got, noise[layout_to_index_map(lay, rr, cc)])


@SETTINGS
@given(layouts(), st.data())
def test_write_non_contiguous_source(lay, data):
    x = np.arange(lay.rows * lay.cols, dtype=np.int32).reshape(lay.cols, lay.rows).T  # F-ordered
    buf = np.full(lay.capacity + 1, SENTINEL, np.int32)
    lay.write(buf, x)
    np.testing.assert_array_equal(lay.read(buf), x)


@SETTINGS
@given(base_layouts(), st.data())
def test_tile_offsets_equal_parent(lay, data):
    tr = data.draw(st.integers(0, lay.rows))
    tc = data.draw(st.integers(0, lay.cols))
    tile = lay.get_tile_layout(tr, tc)
    assert (tile.rows, tile.cols) == (tr, tc)
    assert tile.stride == lay.stride
    np.testing.assert_array_equal(layout_to_index_map(tile), layout_to_index_map(lay, tr, tc))
    # a tile at a (fractal-aligned) origin addresses parent memory shifted by the origin's offset
    s0, s2 = getattr(lay, "fractal_shape", (1, 1))
    r0 = s0 * data.draw(st.integers(0, (lay.rows - tr) // s0))
    c0 = s2 * data.draw(st.integers(0, (lay.cols - tc) // s2))
    x = matrix_for(lay, np.random.default_rng(0))
    buf = lay.pack(x)
    base = lay.offset(r0, c0)
    np.testing.assert_array_equal(tile.read(buf[base:]), x[r0 : r0 + tr, c0 : c0 + tc])


@SETTINGS
@given(size, size, small, small)
def test_padding_formulas(rows, cols, br, bc):
    r = np.arange(rows)[:, None]
    c = np.arange(cols)[None, :]
    rcols = -(-cols // bc) * bc
    rrows = -(-rows // br) * br
    prm = PaddingRowMajor(rows, cols, br, bc)
    np.testing.assert_array_equal(
        layout_to_index_map(prm), (r // br) * br * rcols + (c // bc) * br * bc + (r % br) * bc + c % bc
    )
    pcm = PaddingColumnMajor(rows, cols, br, bc)
    np.testing.assert_array_equal(
        layout_to_index_map(pcm), (r // br) * br * bc + (c // bc) * rrows * bc + r % br + (c % bc) * br
    )
    assert prm.capacity == rrows * rcols == pcm.capacity


@SETTINGS
@given(layouts(), st.data())
def test_scalar_and_vector_offsets_agree(lay, data):
    r = data.draw(st.integers(0, 2 * lay.rows + 3))
    c = data.draw(st.integers(0, 2 * lay.cols + 3))
    assert lay.offset(r, c) == int(lay.offset(np.array([r]), np.array([c]))[0])


@SETTINGS
@given(st.integers(0, 60), st.integers(1, 4), st.data())
def test_vector_layout(size_, stride, data):
    v = VectorLayout(size_, stride)
    x = np.arange(size_, dtype=np.float32) + 1
    buf = v.pack(x, fill=-1)
    assert buf.shape == (size_ * stride,)
    np.testing.assert_array_equal(v.unpack(buf), x)
    n = data.draw(st.integers(0, size_))
    dst = np.full(size_ * stride + 2, -5, np.float32)
    v.write(dst, x[:n])
    expected = np.full_like(dst, -5)
    expected[np.arange(n) * stride] = x[:n]
    np.testing.assert_array_equal(dst, expected)
    np.testing.assert_array_equal(v.read(dst, n), x[:n])


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(FRACTAL + [L0C]),
    st.sampled_from(["int8", "fp16", "bf16", "fp32", "int4", "fp8_e4m3fn"]),
    st.integers(1, 300),
    st.integers(1, 300),
    st.data(),
)
def test_cube_sized_layouts_in_an_arena(cls, dtype, rows, cols, data):
    """Real fractal sizes and ml_dtypes element types, with buf a typed view into a byte arena."""
    from catlass_py.numerics.dtypes import get_dtype

    dt = get_dtype(dtype)
    lay = L0C.make_layout(rows, cols) if cls is L0C else cls.make_layout(dt, rows, cols)
    np_dt = dt.numpy
    item = np_dt.itemsize
    rng = np.random.default_rng(rows * 301 + cols)
    x = rng.integers(0, 7, (rows, cols)).astype(np.float32).astype(np_dt)
    start = 32 * data.draw(st.integers(0, 3))
    arena = np.full(start + lay.capacity * item + 64, 0xA5, np.uint8)
    buf = arena[start : start + lay.capacity * item].view(np_dt)
    r = data.draw(st.integers(0, rows))
    c = data.draw(st.integers(0, cols))
    lay.write(buf, x[:r, :c])
    touched = np.zeros(lay.capacity, bool)
    touched[layout_to_index_map(lay, r, c)] = True
    assert (buf.view(np.uint8).reshape(lay.capacity, item)[~touched] == 0xA5).all()
    assert (arena[:start] == 0xA5).all() and (arena[start + lay.capacity * item :] == 0xA5).all()
    np.testing.assert_array_equal(lay.read(buf, r, c).view(np.uint8), x[:r, :c].view(np.uint8))
