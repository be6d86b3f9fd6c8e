"""Layout as a value: construction, evaluation, accessors, slicing, vectorised offsets, errors."""

import pickle

import numpy as np
import pytest
from hypothesis import given
from tla_helpers import SETTINGS, all_coords, layouts, scalar_values

from catlass_py.errors import ArgumentError
from catlass_py.tla import (
    Layout,
    append,
    cosize,
    crd2idx,
    depth,
    get,
    make_layout,
    offsets,
    origin_shape,
    rank,
    select,
    shape,
    size,
    slice_and_offset,
    stride,
    take,
    zip_layouts,
)


def test_default_stride_is_column_major_and_origin_is_mode_sizes():
    lay = Layout(((2, 3), 4))
    assert lay.stride == ((1, 2), 6)
    assert lay.origin_shape == (6, 4)
    assert Layout(8).origin_shape == (8,)
    assert make_layout(8) == Layout(8, 1)  # TLA MakeLayout(len)
    assert make_layout((4, 5), (5, 1), (3, 5)).origin_shape == (3, 5)


def test_evaluation_and_accessors():
    lay = Layout(((16, 2), (8, 4)), ((8, 128), (1, 256)), (20, 30))
    assert lay((17, 9)) == lay(17, 9) == 8 + 128 + 1 + 256
    assert lay(17) == 8 + 128  # a 1-D index runs through the first mode first
    assert len(lay) == lay.rank == rank(lay) == 2 and lay.depth == depth(lay) == 2
    assert lay.size() == size(lay) == 32 * 32 and size(lay, 1) == 32
    assert cosize(lay) == lay(size(lay) - 1) + 1
    assert shape(lay, 0) == (16, 2) and stride(lay, 1, 1) == 256 and origin_shape(lay, 1) == 30
    assert get(lay, 1) == Layout((8, 4), (1, 256))
    assert lay[0] == Layout((16, 2), (8, 128)) and list(lay) == [lay[0], lay[1]]
    assert str(lay) == "((16,2),(8,4)):((8,128),(1,256))"
    assert repr(lay) == "Layout(((16, 2), (8, 4)), ((8, 128), (1, 256)), origin_shape=(20, 30))"
    assert select(lay, 1, 0) == Layout(((8, 4), (16, 2)), ((1, 256), (8, 128)), (30, 20))
    assert take(lay, 1, 2) == Layout(((8, 4),), ((1, 256),), (30,))
    assert append(Layout(4, 2), 3) == Layout((4, 1, 1), (2, 0, 0))
    assert zip_layouts(Layout((2, 3), (1, 2)), Layout((4, 5), (6, 24))) == Layout(((2, 4), (3, 5)), ((1, 6), (2, 24)))


def test_slicing_with_none():
    lay = Layout((4, (2, 3)), (1, (4, 8)), (4, 5))
    # CuTe/pycute: a coordinate with None returns the layout of the marked modes
    assert lay(None, 1) == Layout((4,), (1,), (4,))
    assert lay(2, None) == Layout(((2, 3),), ((4, 8),), (5,))
    assert lay(2, (None, 1)) == Layout((2,), (4,))
    sub, off = slice_and_offset((None, (1, 2)), lay)
    assert sub == Layout((4,), (1,)) and off == 4 + 16
    # TLA: a base coordinate is added before the fixed coordinates are evaluated
    sub, off = slice_and_offset((None, 2), lay, (1, 1))
    assert sub == Layout((4,), (1,), (4,)) and off == lay((1, 3))


def test_value_semantics():
    lay = Layout((2, 3), (3, 1))
    with pytest.raises(AttributeError):
        lay.shape = (3, 2)
    assert lay == Layout((2, 3), (3, 1)) and hash(lay) == hash(Layout((2, 3), (3, 1)))
    assert lay != Layout((2, 3), (3, 1), (1, 3))
    assert pickle.loads(pickle.dumps(lay)) == lay
    assert len({lay, Layout((2, 3), (3, 1))}) == 1


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: Layout((2, 3), (1, 2, 3)), "stride: .* not congruent"),
        (lambda: Layout((2, (3, 4)), (1, 2)), "stride: .* not congruent"),
        (lambda: Layout((2, 3.5)), "shape: expected an integer"),
        (lambda: Layout((2, -3)), "shape: every integer must be non-negative"),
        (lambda: Layout((2, 3), (1, "2")), "stride: expected an integer"),
        (lambda: Layout((2, 3), None, (2, 3, 4)), "origin_shape: expected a flat tuple of 2"),
        (lambda: Layout((2, 3), None, ((2,), 3)), "origin_shape: expected a flat tuple"),
        (lambda: Layout((2, 3))((1, 2, 0)), "coord"),
        (lambda: Layout((2, 3))(-1), "non-negative"),
        (lambda: Layout((2, 3))(), "coord"),
        (lambda: Layout((2, 3))[2], "mode: expected an integer in \\[0, 2\\)"),
        (lambda: select(Layout((2, 3)), 0, 2), "modes"),
        (lambda: make_layout(Layout(2), (3, 4)), "either only layouts"),
        (lambda: append(Layout((2, 3)), 1), "cannot shrink"),
        (lambda: zip_layouts(Layout((2, 3)), Layout(4)), "equal ranks"),
        (lambda: slice_and_offset((None, 1), Layout((2, 3)), (0, 0, 0)), "base_coord"),
        (lambda: size([2, 3]), "expected an integer"),
    ],
)
def test_bad_input_raises_argument_error(call, match):
    with pytest.raises(ArgumentError, match=match):
        call()


@SETTINGS
@given(layouts(max_size=128))
def test_offsets_match_scalar_evaluation(lay):
    grid = offsets(lay)
    if isinstance(lay.shape, tuple):
        assert grid.shape == tuple(size(m) for m in lay)
        for crd in np.ndindex(*grid.shape):
            assert grid[crd] == lay(tuple(int(c) for c in crd))
    else:
        assert list(grid) == scalar_values(lay)


@SETTINGS
@given(layouts(max_size=128))
def test_every_natural_coordinate_agrees_with_its_index(lay):
    # crd2idx of the natural coordinate of i equals the 1-D evaluation at i
    for i, crd in enumerate(all_coords(lay.shape)):
        assert lay(crd) == lay(i) == crd2idx(crd, lay.shape, lay.stride)


@SETTINGS
@given(layouts())
def test_vectorised_call_matches_scalar(lay):
    n = lay.size()
    assert np.broadcast_to(np.asarray(lay(np.arange(n))), (n,)).tolist() == scalar_values(lay)
