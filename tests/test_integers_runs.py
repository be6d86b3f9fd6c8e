"""``catlass_py.integers.offset_runs`` / ``sorted_unique``: element offsets as the (start, length, stride, count)
runs of a MemAccess, checked against the offsets themselves."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from catlass_py.integers import offset_runs, sorted_unique


def _expand(runs) -> list[int]:
    return [s + c * d + i for s, n, d, c_ in runs for c in range(c_) for i in range(n)]


def test_runs_of_known_offsets():
    assert offset_runs(np.array([0, 1, 2, 8, 9, 10, 16, 17, 18])) == ((0, 3, 8, 3),)
    assert offset_runs(np.array([5, 4, 3, 4])) == ((3, 3, 0, 1),)  # any order, repeats allowed
    assert offset_runs(np.array([0, 2, 3])) == ((0, 1, 0, 1), (2, 2, 0, 1))
    assert offset_runs(np.array([[0, 1], [4, 5], [9, 10]])) == ((0, 2, 4, 2), (9, 2, 0, 1))
    assert offset_runs(np.array([], np.int64)) == ()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 200), max_size=60))
def test_runs_cover_exactly_the_distinct_offsets_in_order(values):
    offsets = np.array(values, np.int64)
    runs = offset_runs(offsets)
    expanded = _expand(runs)
    assert expanded == sorted(set(values))  # every offset once, in increasing order
    for (s, n, d, c), nxt in zip(runs, runs[1:]):
        assert n >= 1 and c >= 1 and (d == 0) == (c == 1)
        assert s + (c - 1) * d + n < nxt[0]  # a gap separates the entries: runs never touch
    np.testing.assert_array_equal(sorted_unique(offsets), np.unique(offsets))


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 8), st.integers(1, 12), st.integers(1, 9), st.integers(0, 50))
def test_a_strided_block_is_one_entry(length, gap, count, start):
    stride = length + gap  # runs separated by at least one missing offset
    offsets = (start + np.arange(count)[:, None] * stride + np.arange(length)[None, :]).ravel()
    assert offset_runs(np.random.default_rng(0).permutation(offsets)) == (
        (start, length, stride if count > 1 else 0, count),)
