"""complement, right_inverse, left_inverse: pycute's cases, CuTe's documented results, properties, errors."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tla_helpers import SETTINGS, compact_layouts, ev, image, injective_layouts, layouts, values

from catlass_py.errors import ArgumentError
from catlass_py.tla import (
    Layout,
    ceil_div,
    complement,
    filter_layout,
    flatten,
    left_inverse,
    make_layout,
    right_inverse,
    size,
)

L = Layout

# pycute test_complement.py's inputs
PYCUTE_COMPLEMENT = [
    L(1, 0),
    L(1, 1),
    L(4, 0),
    L((2, 4), (1, 2)),
    L((2, 3), (1, 2)),
    L((2, 4), (1, 4)),
    L((2, 4, 8), (8, 1, 64)),
    L(((2, 2), (2, 2)), ((1, 4), (8, 32))),
    L((2, (3, 4)), (3, (1, 6))),
    L((4, 6), (1, 6)),
    L((4, 10), (1, 10)),
]


@pytest.mark.parametrize("lay", PYCUTE_COMPLEMENT, ids=str)
def test_pycute_complements_are_disjoint(lay):
    r = complement(lay)
    assert image(lay) & image(r) <= {0}


@pytest.mark.parametrize(
    "lay, cotarget, expected",
    [
        # CuTe media/docs/cpp/cute/02_layout_algebra.md, "Complement Examples"
        (L(4, 1), 24, L(6, 4)),
        (L(6, 4), 24, L(4, 1)),
        (L((4, 6), (1, 4)), 24, L(1, 0)),
        (L(4, 2), 24, L((2, 3), (1, 8))),
        (L((2, 4), (1, 6)), 24, L(3, 2)),
        (L((2, 2), (1, 6)), 24, L((3, 2), (2, 12))),
        # the 1-D logical divide and product examples of the same document
        (L(4, 2), L((4, 2, 3), (2, 1, 8)), L((2, 3), (1, 8))),
        (L((2, 2), (4, 1)), 24, L((2, 3), (2, 8))),
        # pycute's inputs with their default cotarget
        (L((4, 6), (1, 6)), None, L(1, 0)),
        (L((4, 10), (1, 10)), None, L(2, 4)),
        (L(4, 0), None, L(1, 0)),
        (L(4, 0), 5, L(5, 1)),
        (L(1, 1), 6, L(6, 1)),
    ],
    ids=str,
)
def test_known_complements(lay, cotarget, expected):
    assert complement(lay, cotarget) == expected


def _span(lay):
    f = filter_layout(lay)
    return max(s * d for s, d in zip(flatten(f.shape), flatten(f.stride)))


@SETTINGS
@given(injective_layouts(), st.integers(1, 600))
def test_complement_tiles_the_codomain(lay, cotarget):
    r = complement(lay, cotarget)
    strides = flatten(r.stride)
    assert all(d > 0 for d in strides) or r == L(1, 0)
    rv = values(r)
    assert rv == sorted(rv) and len(set(rv)) == len(rv)  # ordered
    assert image(lay).isdisjoint(set(rv) - {0})  # disjoint
    both = make_layout(lay, r)
    span = _span(lay) if flatten(filter_layout(lay).stride) != (0,) else 1
    expected = span * ceil_div(cotarget, span)
    assert sorted(values(both)) == list(range(expected))  # (L, R) is a bijection onto the codomain


@SETTINGS
@given(layouts(), st.integers(1, 200))
def test_complement_of_any_layout_is_disjoint_and_ordered_or_refused(lay, cotarget):
    try:
        r = complement(lay, cotarget)
    except ArgumentError as e:
        assert "overlap" in str(e)
        return
    rv = values(r)
    assert rv == sorted(rv)  # ordered and disjoint always; the (L, R) cosize bound needs nested strides,
    assert image(lay).isdisjoint(set(rv) - {0})  # checked by test_complement_tiles_the_codomain


# pycute test_right_inverse.py's inputs
PYCUTE_RIGHT = [
    L(1, 0),
    L((1, 1), (0, 0)),
    L((3, 7), (0, 0)),
    L(1, 1),
    L(4, 0),
    L(4, 1),
    L(4, 2),
    L((2, 4), (0, 2)),
    L((8, 4), (1, 8)),
    L((8, 4), (4, 1)),
    L((2, 4, 6), (1, 2, 8)),
    L((2, 4, 6), (4, 1, 8)),
    L((4, 2), (1, 16)),
]


@pytest.mark.parametrize("lay", PYCUTE_RIGHT, ids=str)
def test_pycute_right_inverses(lay):
    r = right_inverse(lay)
    idx = np.arange(size(r))
    np.testing.assert_array_equal(ev(lay, ev(r, idx)), idx)


@pytest.mark.parametrize(
    "lay, expected",
    [
        (L((8, 4), (4, 1)), L((4, 8), (8, 1))),
        (L((8, 4), (1, 8)), L(32, 1)),
        (L((2, 4, 6), (4, 1, 8)), L((4, 2, 6), (2, 1, 8))),
        (L(4, 2), L(1, 0)),
        (L((2, 4), (0, 1)), L(4, 2)),
        (L((2, 4, 6), (1, 2, 8)), L(48, 1)),
    ],
    ids=str,
)
def test_known_right_inverses(lay, expected):
    assert right_inverse(lay) == expected


# pycute test_left_inverse.py's inputs
PYCUTE_LEFT = [
    L(1, 0),
    L((1, 1), (0, 0)),
    L(1, 1),
    L(4, 1),
    L(4, 2),
    L((8, 4), (1, 8)),
    L((8, 4), (4, 1)),
    L((2, 4, 6), (1, 2, 8)),
    L((2, 4, 6), (4, 1, 8)),
    L((4, 2), (1, 16)),
]


@pytest.mark.parametrize("lay", PYCUTE_LEFT, ids=str)
def test_pycute_left_inverses(lay):
    inv = left_inverse(lay)
    idx = np.arange(size(lay))
    np.testing.assert_array_equal(ev(inv, ev(lay, idx)), idx)


@pytest.mark.parametrize(
    "lay, expected",
    [
        (L(4, 2), L((2, 4), (0, 1))),
        (L((8, 4), (4, 1)), L((4, 8), (8, 1))),
        (L((4, 2), (1, 16)), L((16, 2), (1, 4))),
    ],
    ids=str,
)
def test_known_left_inverses(lay, expected):
    assert left_inverse(lay) == expected


@SETTINGS
@given(layouts())
def test_right_inverse_property(lay):
    r = right_inverse(lay)
    idx = np.arange(size(r))
    np.testing.assert_array_equal(ev(lay, ev(r, idx)), idx)


@SETTINGS
@given(compact_layouts())
def test_inverses_of_a_bijection_are_full_inverses(lay):
    r = right_inverse(lay)
    inv = left_inverse(lay)
    assert size(r) == size(lay)
    idx = np.arange(size(lay))
    np.testing.assert_array_equal(ev(r, ev(lay, idx)), idx)  # right_inverse(L)(L(i)) == i for a bijection
    np.testing.assert_array_equal(ev(inv, ev(lay, idx)), idx)
    np.testing.assert_array_equal(ev(lay, ev(r, idx)), idx)
    assert values(r) == values(inv, size(lay))


@SETTINGS
@given(injective_layouts())
def test_left_inverse_property(lay):
    inv = left_inverse(lay)
    idx = np.arange(size(lay))
    image_ = ev(lay, idx)
    np.testing.assert_array_equal(ev(inv, image_), idx)
    np.testing.assert_array_equal(ev(lay, ev(inv, image_)), image_)


@SETTINGS
@given(layouts())
def test_left_inverse_of_any_layout_is_correct_or_refused(lay):
    try:
        inv = left_inverse(lay)
    except ArgumentError as e:
        assert "not injective" in str(e) or "divisibility" in str(e)
        assert len(image(lay)) < size(lay) or "divisibility" in str(e)
        return
    idx = np.arange(size(lay))
    np.testing.assert_array_equal(ev(inv, ev(lay, idx)), idx)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: complement(L((2, 2), (1, 1))), "overlap"),
        (lambda: complement(L((3, 2), (2, 5))), "overlap"),
        (lambda: complement(L(4, -1)), "non-negative strides"),
        (lambda: complement(L((2, 0), (1, 2))), "positive extents"),
        (lambda: complement(L(4, 1), 2.5), "cotarget"),
        (lambda: left_inverse(L((2, 2), (1, 1))), "not injective"),
        (lambda: left_inverse(L((4, 3), (1, 0))), "not injective"),
        (lambda: left_inverse(L((2, 2), (2, 3))), "divisibility condition"),
        (lambda: right_inverse(L(4, -2)), "non-negative strides"),
        (lambda: right_inverse("4:1"), "expected a tla.Layout"),
    ],
)
def test_errors(call, match):
    with pytest.raises(ArgumentError, match=match):
        call()
