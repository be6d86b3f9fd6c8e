"""composition(A, B)(i) == A(B(i)): pycute's cases, CuTe's documented results, properties, errors."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tla_helpers import POW2, SETTINGS, compact_layouts, ev, layouts, pow2_layouts

from catlass_py.errors import ArgumentError
from catlass_py.tla import Layout, coalesce, compatible, composition, make_layout, size

L = Layout

# pycute test_composition.py's pairs
PYCUTE_CASES = [
    (L(1, 0), L(1, 0)),
    (L(1, 0), L(1, 1)),
    (L(1, 1), L(1, 0)),
    (L(1, 1), L(1, 1)),
    (L(4), L(4)),
    (L(4, 2), L(4)),
    (L(4), L(4, 2)),
    (L(4, 0), L(4)),
    (L(4), L(4, 0)),
    (L(1, 0), L(4)),
    (L(4), L(1, 0)),
    (L(4), L(2)),
    (L(4, 2), L(2)),
    (L(4), L(2, 2)),
    (L(4, 2), L(2, 2)),
    (L(12), L((4, 3))),
    (L(12, 2), L((4, 3))),
    (L(12), L((4, 3), (3, 1))),
    (L(12, 2), L((4, 3), (3, 1))),
    (L(12), L((2, 3), (2, 4))),
    (L((4, 3)), L((4, 3))),
    (L((4, 3)), L(12)),
    (L((4, 3)), L(6, 2)),
    (L((4, 3)), L((6, 2), (2, 1))),
    (L((4, 3), (3, 1)), L((4, 3))),
    (L((4, 3), (3, 1)), L(12)),
    (L((4, 3), (3, 1)), L(6, 2)),
    (L((4, 3), (3, 1)), L((6, 2), (2, 1))),
    (L((8, 8)), L(((2, 2, 2), (2, 2, 2)), ((1, 16, 4), (8, 2, 32)))),
    (L((8, 8), (8, 1)), L(((2, 2, 2), (2, 2, 2)), ((1, 16, 4), (8, 2, 32)))),
    (L(((2, 2, 2), (2, 2, 2)), ((1, 16, 4), (8, 2, 32))), L(8, 4)),
    (L((4, 2), (1, 16)), L((4, 2), (2, 1))),
    (L((2, 2), (2, 1)), L((2, 2), (2, 1))),
    (L((4, 8, 2)), L((2, 2, 2), (2, 8, 1))),
    (L((4, 8, 2), (2, 8, 1)), L((2, 2, 2), (1, 8, 2))),
    (L((4, 8, 2), (2, 8, 1)), L((4, 2, 2), (2, 8, 1))),
    (L((4, 6, 8), (1, 4, 7)), L(6, 1)),  # pre-coalesced left-hand side
    (L((4, 6, 8, 10), (2, 3, 5, 7)), L(6, 12)),  # mid-layout truncation
]


def _check(a, b, r):
    assert compatible(b.shape, r.shape)
    idx = np.arange(size(b))
    np.testing.assert_array_equal(ev(r, idx), ev(a, ev(b, idx)), err_msg=f"{a} o {b} = {r}")


@pytest.mark.parametrize("a, b", PYCUTE_CASES, ids=lambda x: str(x))
def test_pycute_cases(a, b):
    _check(a, b, composition(a, b))


@pytest.mark.parametrize(
    "a, b, expected",
    [
        # CuTe media/docs/cpp/cute/02_layout_algebra.md
        (L((6, 2), (8, 2)), L((4, 3), (3, 1)), L(((2, 2), 3), ((24, 2), 8))),
        (L(20, 2), L((5, 4), (4, 1)), L((5, 4), (8, 2))),
        (L((10, 2), (16, 4)), L((5, 4), (1, 5)), L((5, (2, 2)), (16, (80, 4)))),
        # "(3,6,2,8):(w,x,y,z) o 16:9 = (1,2,2,4):(9*w,3*x,y,z)" with w,x,y,z = 1000,100,10,1, size-1 modes dropped
        (L((3, 6, 2, 8), (1000, 100, 10, 1)), L(16, 9), L((2, 2, 4), (300, 10, 1))),
        (L((4, 6, 8), (1, 4, 7)), L(6, 1), L(6, 1)),
        (L((4, 6, 8, 10), (2, 3, 5, 7)), L(6, 12), L((2, 3), (9, 5))),
        (L(4, 2), L(4, 0), L(4, 0)),
    ],
    ids=str,
)
def test_known_results(a, b, expected):
    assert composition(a, b) == expected


def test_tilers():
    a = L((12, (4, 8)), (59, (13, 1)))
    # CuTe 02_layout_algebra.md: <3:4, 8:2> by mode, and a shape (3, 8) as a tiler of stride-1 layouts
    assert composition(a, (L(3, 4), L(8, 2))) == L((3, (2, 4)), (236, (26, 1)))
    assert composition(a, (3, 8)) == L((3, (4, 2)), (59, (13, 1)))
    assert composition(a, (None, 8)) == L((12, (4, 2)), (59, (13, 1)))
    assert composition(a, (L(3, 4),)) == L((3,), (236,))  # modes the tiler does not reach are dropped
    assert composition(a, None) == a
    assert composition(a, 5) == L(5, 59)


@pytest.mark.parametrize(
    "a, b, match",
    [
        (L((4, 3), (1, 10)), L(4, 3), "stride divisibility condition"),
        (L((4, 3), (1, 10)), L(6, 1), "shape divisibility condition"),
        (L((2, 3)), (1, 2, 3), "tiler of 3 modes"),
        (L((2, 3)), 0, "tile size must be positive"),
        (L((2, 0)), L(2), "positive extents"),
        (L((2, 3)), "x", "rhs: expected a tla.Layout"),
        (L((2, 2), (0, 1)), L((2, 2), (1, 1)), "not representable"),
        (L((4, 8), (8, 1)), L((2, 2), (2, 2)), "not representable"),
        (L((4, 8), (8, 1)), L((2, 2), (3, 2)), "stride divisibility"),
        (L((4, 8), (8, 1)), L(2, -1), "non-negative"),
        ((2, 3), L(2), "lhs: expected a tla.Layout"),
    ],
    ids=str,
)
def test_errors(a, b, match):
    with pytest.raises(ArgumentError, match=match):
        composition(a, b)


@SETTINGS
@given(pow2_layouts(), compact_layouts(extents=POW2, max_size=256))
def test_composition_with_a_power_of_two_bijection_always_exists(a, b):
    # power-of-two extents and strides meet the divisibility conditions, and the modes of a compact
    # power-of-two layout address disjoint bits, so nothing carries: composition always exists
    _check(a, b, composition(a, b))


@SETTINGS
@given(pow2_layouts(), pow2_layouts(max_size=64).filter(lambda b: b.rank == 1 or not isinstance(b.shape, tuple)))
def test_composition_with_one_mode_always_exists_pow2(a, b):
    b = coalesce(b)
    if isinstance(b.shape, tuple):
        return
    _check(a, b, composition(a, b))


@SETTINGS
@given(pow2_layouts(), pow2_layouts())
def test_composition_pow2_is_correct_or_refused(a, b):
    try:
        r = composition(a, b)
    except ArgumentError as e:
        assert "not representable" in str(e)
        return
    _check(a, b, r)


@SETTINGS
@given(layouts(), layouts(extents=st.integers(1, 6), strides=st.integers(0, 6)))
def test_composition_with_small_strides_is_correct_or_refused(a, b):
    try:
        r = composition(a, b)
    except ArgumentError:
        return
    _check(a, b, r)


@SETTINGS
@given(layouts(), layouts())
def test_composition_of_arbitrary_layouts_is_correct_or_refused(a, b):
    try:
        r = composition(a, b)
    except ArgumentError as e:
        assert "divisibility" in str(e) or "not representable" in str(e)
        return
    _check(a, b, r)


@SETTINGS
@given(compact_layouts(), compact_layouts())
def test_composition_with_a_bijection_reorders(a, b):
    if size(b) > size(a):
        return
    try:
        r = composition(a, b)
    except ArgumentError:
        return
    _check(a, b, r)


@SETTINGS
@given(pow2_layouts(), compact_layouts(extents=POW2, max_size=64), compact_layouts(extents=POW2, max_size=64))
def test_by_mode_composition_is_make_layout_of_modes(a, b0, b1):
    a2 = make_layout(a, a)
    r = composition(a2, (b0, b1))
    assert r == make_layout(composition(a, b0), composition(a, b1))


def test_inputs_are_not_mutated():
    a, b = L(((2, 2), 3), ((1, 4), 16)), L((2, 2), (2, 1))
    snap = (a.shape, a.stride, b.shape, b.stride)
    composition(a, b)
    assert (a.shape, a.stride, b.shape, b.stride) == snap
