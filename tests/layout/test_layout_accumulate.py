"""``Layout.accumulate``: in-place region += nd, the accumulator update of L0C."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catlass_py.errors import ArgumentError
from catlass_py.layout import L0C, RowMajor, nZ, zN
from catlass_py.layout.algebra import layout_to_index_map


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 40), cols=st.integers(1, 40), r=st.integers(1, 40), c=st.integers(1, 40),
       kind=st.sampled_from(["l0c", "zn", "nz", "rm"]))
def test_accumulate_adds_into_the_region_and_nowhere_else(rows, cols, r, c, kind):
    r, c = min(r, rows), min(c, cols)
    layout = {"l0c": L0C.make_layout(rows, cols), "zn": zN.make_layout("float32", rows, cols),
              "nz": nZ.make_layout("float32", rows, cols), "rm": RowMajor(rows, cols, cols + 3)}[kind]
    rng = np.random.default_rng(rows * 41 + cols)
    size = int(layout_to_index_map(layout, rows, cols).max()) + 1
    buf = rng.integers(-1000, 1000, size).astype(np.int32)
    before = buf.copy()
    delta = rng.integers(-1000, 1000, (r, c)).astype(np.int32)
    layout.accumulate(buf, delta)
    idx = layout_to_index_map(layout, r, c)
    expect = before.copy()
    expect[idx] += delta
    np.testing.assert_array_equal(buf, expect)


def test_int32_accumulation_wraps():
    layout = L0C.make_layout(16, 16)
    buf = np.full(layout.capacity, 2**31 - 1, np.int32)
    layout.accumulate(buf, np.ones((16, 16), np.int32))
    assert (buf == -(2**31)).all()


def test_accumulate_checks_shape_and_dtype():
    layout = L0C.make_layout(16, 16)
    buf = np.zeros(layout.capacity, np.float32)
    with pytest.raises(ArgumentError):
        layout.accumulate(buf, np.ones((17, 16), np.float32))
    with pytest.raises(ArgumentError):
        layout.accumulate(buf, np.ones((16, 16), np.float64))
