"""coalesce and filter: known results and the preserved function."""

import pytest
from hypothesis import given
from tla_helpers import SETTINGS, layouts, values

from catlass_py.errors import ArgumentError
from catlass_py.tla import Layout, coalesce, depth, filter_layout, size
from catlass_py.tla.layout import coalesce_x

# pycute test_coalesce.py's inputs
PYCUTE_CASES = [
    Layout(1, 0),
    Layout(1, 1),
    Layout((2, 4)),
    Layout((2, 4, 6)),
    Layout((2, 4, 6), (1, 6, 2)),
    Layout((2, 1, 6), (1, 7, 2)),
    Layout((2, 1, 6), (4, 7, 8)),
    Layout((2, (4, 6))),
    Layout((2, 4), (4, 1)),
    Layout((2, 4, 6), (24, 6, 1)),
    Layout((2, 1, 3), (2, 4, 4)),
    Layout(((2, 2), (2, 2)), ((1, 4), (8, 32))),
]


@pytest.mark.parametrize("lay", PYCUTE_CASES, ids=str)
def test_pycute_cases_keep_the_function(lay):
    r = coalesce(lay)
    assert size(r) == size(lay)
    assert values(r) == values(lay)
    assert depth(r) <= 1


@pytest.mark.parametrize(
    "lay, expected",
    [
        (Layout((2, (1, 6)), (1, (6, 2))), Layout(12, 1)),  # CuTe 02_layout_algebra.md
        (Layout((2, 4)), Layout(8, 1)),
        (Layout((2, 4, 6), (1, 6, 2)), Layout((2, 4, 6), (1, 6, 2))),
        (Layout((2, 1, 6), (1, 7, 2)), Layout(12, 1)),
        (Layout((2, 1, 6), (4, 7, 8)), Layout(12, 4)),
        (Layout((2, 1, 3), (2, 4, 4)), Layout(6, 2)),
        (Layout(((2, 2), (2, 2)), ((1, 4), (8, 32))), Layout((2, 4, 2), (1, 4, 32))),
        (Layout(1, 1), Layout(1, 0)),
        (Layout((1, 1), (3, 5)), Layout(1, 0)),
    ],
    ids=str,
)
def test_known_results(lay, expected):
    assert coalesce(lay) == expected


def test_by_mode_coalesce():
    lay = Layout((2, (1, 6)), (1, (6, 2)))
    assert coalesce(lay, (1, 1)) == Layout((2, 6), (1, 2))  # CuTe 02_layout_algebra.md
    assert coalesce(Layout(((2, 2), (3, 2), 5), ((1, 2), (4, 12), 100)), (1,)) == Layout((4, (3, 2), 5), (1, (4, 12), 100))
    with pytest.raises(ArgumentError, match="profile"):
        coalesce(Layout((2, 3)), (1, 1, 1))


def test_filter():
    assert filter_layout(Layout((2, 3, 4), (1, 0, 2))) == Layout(8, 1)
    assert filter_layout(Layout((4, 3), (0, 0))) == Layout(1, 0)
    assert filter_layout(Layout(((2, 1), (3, 4)), ((0, 9), (2, 6))), (1, 1)) == Layout((1, 12), (0, 2))


@SETTINGS
@given(layouts())
def test_coalesce_preserves_the_function(lay):
    r = coalesce(lay)
    assert size(r) == size(lay) and depth(r) <= 1
    assert values(r) == values(lay)


@SETTINGS
@given(layouts())
def test_coalesce_x_preserves_the_function_beyond_the_domain(lay):
    r = coalesce_x(lay)
    n = 2 * size(lay) + 3
    assert values(r, n) == values(lay, n)


@SETTINGS
@given(layouts())
def test_by_mode_coalesce_keeps_every_mode_function(lay):
    profile = tuple(1 for _ in range(lay.rank)) if isinstance(lay.shape, tuple) else 1
    r = coalesce(lay, profile)
    assert r.rank == lay.rank
    for a, b in zip(r, lay):
        assert values(a) == values(b)


@SETTINGS
@given(layouts())
def test_filter_keeps_the_image(lay):
    assert set(values(filter_layout(lay))) == set(values(lay))


def test_coalesce_does_not_mutate():
    lay = Layout(((2, 2), 3), ((1, 2), 4))
    before = (lay.shape, lay.stride)
    coalesce(lay)
    assert (lay.shape, lay.stride) == before
