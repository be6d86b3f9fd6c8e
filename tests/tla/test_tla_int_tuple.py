"""Int tuples: known results (pycute's test_int_tuple facts, CuTe's layout-algebra document) and properties."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tla_helpers import SETTINGS, all_coords, shapes

from catlass_py.errors import ArgumentError
from catlass_py.tla import (
    add,
    compatible,
    congruent,
    crd2idx,
    depth,
    elem_scale,
    flatten,
    get,
    idx2crd,
    inner_product,
    make_coord,
    make_shape,
    make_stride,
    prefix_product,
    product,
    rank,
    shape_div,
    shape_mod,
    slice_,
    suffix_product,
    tuple_max,
    weakly_congruent,
)
from catlass_py.tla.int_tuple import as_int_tuple, dice


@pytest.mark.parametrize(
    "value, expected",
    [(2, 2), ((3, 2), 6), (((2, 3), 4), 24), ((), 1)],
)
def test_product(value, expected):
    assert product(value) == expected


@pytest.mark.parametrize(
    "a, b, expected",
    [(2, 3, 6), ((1, 2), (3, 2), 7), (((2, 3), 4), ((2, 1), 2), 15)],
)
def test_inner_product(a, b, expected):
    assert inner_product(a, b) == expected


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ((3, 4), 6, (1, 2)),
        ((3, 4), 12, (1, 1)),
        ((3, 4), 36, (1, 1)),
        (((3, 4), 6), 36, ((1, 1), 2)),
        ((6, (3, 4)), 36, (1, (1, 2))),
        ((4, 5, 6), 40, (1, 1, 3)),  # CuTe int_tuple.hpp's shape_div example
        ((6, 2), 2, (3, 2)),  # the rest of these: CuTe 02_layout_algebra.md "(6,2) / 2 => (3,2)" ...
        ((6, 2), 3, (2, 2)),
        ((6, 2), 6, (1, 2)),
        ((6, 2), 12, (1, 1)),
        ((3, 6, 2, 8), 3, (1, 6, 2, 8)),
        ((3, 6, 2, 8), 6, (1, 3, 2, 8)),
        ((3, 6, 2, 8), 9, (1, 2, 2, 8)),
        ((3, 6, 2, 8), 72, (1, 1, 1, 4)),
    ],
)
def test_shape_div(a, b, expected):
    assert shape_div(a, b) == expected


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ((6, 2), 2, (2, 1)),
        ((6, 2), 3, (3, 1)),
        ((6, 2), 6, (6, 1)),
        ((6, 2), 12, (6, 2)),
        ((3, 6, 2, 8), 6, (3, 2, 1, 1)),
        ((3, 6, 2, 8), 9, (3, 3, 1, 1)),
        ((1, 2, 2, 8), 2, (1, 2, 1, 1)),
        ((1, 2, 2, 8), 16, (1, 2, 2, 4)),
    ],
)
def test_shape_mod_matches_the_cute_document(a, b, expected):
    assert shape_mod(a, b) == expected


@pytest.mark.parametrize(
    "a, expected",
    [
        (2, 1),
        ((3, 2), (1, 3)),
        ((3, 2, 4), (1, 3, 6)),
        (((2, 3), 4), ((1, 2), 6)),
        (((2, 3), (2, 1, 2), (5, 2, 1)), ((1, 2), (6, 12, 12), (24, 120, 240))),
    ],
)
def test_prefix_product(a, expected):
    assert prefix_product(a) == expected


def test_suffix_product_is_row_major():
    assert suffix_product((2, 3, 4)) == (12, 4, 1)
    assert suffix_product(((2, 3), 4)) == ((12, 4), 1)


def test_structure_helpers():
    t = ((16, 3), (8, (2, 5)))
    assert flatten(t) == (16, 3, 8, 2, 5)
    assert flatten(7) == (7,)
    assert rank(t) == 2 and rank(7) == 1
    assert depth(t) == 3 and depth(7) == 0 and depth(()) == 1
    assert get(t, 1, 1, 0) == 2 and get(7, 0) == 7
    assert tuple_max(t) == 16
    assert add((1, (2, 3)), (10, (20, 30))) == (11, (22, 33))
    assert elem_scale((2, 3), ((2, 2), 4)) == (8, 12)
    assert congruent((1, (2, 3)), (4, (5, 6))) and not congruent((1, 2), (1, (2, 3)))
    assert weakly_congruent((1, 2), (1, (2, 3))) and not weakly_congruent((1, (2, 3)), (1, 2))
    assert compatible(24, (4, 6)) and compatible((4, 6), (4, (2, 3))) and not compatible((4, 6), 24)
    assert slice_((None, 3, (None, 1)), (4, 5, (6, 7))) == (4, 6)
    assert dice((None, 3, (None, 1)), (4, 5, (6, 7))) == (5, 7)
    assert make_shape(2, (3, 4)) == (2, (3, 4)) and make_stride(1, 2) == (1, 2)
    assert make_coord(1, None) == (1, None)


def test_numpy_integers_become_python_ints():
    t = as_int_tuple("shape", (np.int64(3), (np.uint8(4),)))
    assert t == (3, (4,)) and type(t[0]) is int and type(t[1][0]) is int


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: as_int_tuple("shape", (2, 3.0)), "shape: expected an integer"),
        (lambda: as_int_tuple("shape", (2, True)), "shape: expected an integer"),
        (lambda: as_int_tuple("shape", [2, 3]), "shape: expected an integer"),
        (lambda: as_int_tuple("shape", (2, -1), minimum=0), "shape: every integer must be non-negative"),
        (lambda: shape_div(6, 4), "divisibility condition"),
        (lambda: shape_div((2, 3), (1, 2, 3)), "same profile"),
        (lambda: inner_product((1, 2), 3), "same profile"),
        (lambda: add((1, 2), (1, 2, 3)), "mismatched ranks"),
        (lambda: get((1, 2), 2), "out of range"),
        (lambda: crd2idx((1, 2, 3), (4, 5)), "coord"),
        (lambda: crd2idx(-1, (4, 5)), "non-negative"),
        (lambda: crd2idx(1.5, (4, 5)), "coord"),
        (lambda: crd2idx(np.array([1.0]), (4, 5)), "integer coordinates"),
        (lambda: crd2idx(1, (4, 5), (1, (2, 3))), "not congruent"),
        (lambda: idx2crd(3, (0, 4)), "empty mode"),
        (lambda: slice_((None, 1), (4, 5, 6)), "same profile"),
    ],
)
def test_bad_input_raises_argument_error(call, match):
    with pytest.raises(ArgumentError, match=match):
        call()


def test_crd2idx_known_values():
    # 1-D index split colexicographically, the last mode unbounded (TLA crd2offset, CuTe crd2idx)
    assert crd2idx(5, (2, 3), (1, 2)) == 5
    assert crd2idx((1, 2), (2, 3), (3, 1)) == 5
    assert crd2idx(17, ((16, 2), (8, 4)), ((8, 128), (1, 256))) == 8 + 128
    assert crd2idx((17, 9), ((16, 2), (8, 4)), ((8, 128), (1, 256))) == 8 + 128 + 1 + 256
    assert crd2idx(7, (2, 3), (1, 2)) == 1 + 3 * 2  # past the end: the last mode keeps counting
    assert idx2crd(7, (2, 3)) == (1, 3)
    assert idx2crd(11, (4, 3), (1, 4)) == (3, 2)
    assert idx2crd(13, (4, 3), (1, 4)) == (1, 0)  # with strides: modulo in every mode


@SETTINGS
@given(shapes(), st.data())
def test_idx2crd_inverts_crd2idx_on_compact_shapes(shape, data):
    n = product(shape)
    for i in range(n):
        assert crd2idx(idx2crd(i, shape), shape) == i
    i = data.draw(st.integers(0, 4 * n))
    assert crd2idx(idx2crd(i, shape), shape) == i


@SETTINGS
@given(shapes())
def test_natural_coordinates_enumerate_the_compact_layout(shape):
    got = [crd2idx(c, shape) for c in all_coords(shape)]
    assert got == list(range(product(shape)))


@SETTINGS
@given(shapes(), st.integers(0, 200))
def test_vectorised_crd2idx_matches_scalar(shape, n):
    stride = suffix_product(shape)
    idx = np.arange(n, dtype=np.int64)
    vec = crd2idx(idx, shape, stride)
    assert list(np.asarray(vec)) == [crd2idx(i, shape, stride) for i in range(n)]


def test_inputs_are_not_mutated():
    shape, stride = ((2, 3), 4), ((1, 2), 6)
    before = (shape, stride)
    crd2idx(5, shape, stride)
    assert shape_div(shape, 6) == ((1, 1), 4)
    prefix_product(shape)
    assert (shape, stride) == before
