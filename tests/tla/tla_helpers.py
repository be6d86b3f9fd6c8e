"""Hypothesis strategies and reference evaluators shared by the TLA tests."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import settings
from hypothesis import strategies as st

from catlass_py.tla import Layout, flatten, product

SETTINGS = settings(max_examples=120, deadline=None)


@st.composite
def int_tuples(draw, extents=st.integers(1, 4), max_depth=3, max_rank=3):
    """A hierarchical shape: an integer or a tuple of shapes."""
    if max_depth == 0 or draw(st.booleans()):
        return draw(extents)
    n = draw(st.integers(1, max_rank))
    return tuple(draw(int_tuples(extents, max_depth - 1, max_rank)) for _ in range(n))


def shapes(max_size=512, extents=st.integers(1, 4)):
    """Hierarchical shapes of at most ``max_size`` elements."""
    return int_tuples(extents).filter(lambda s: product(s) <= max_size)


def _strides_like(draw, shape, values):
    if isinstance(shape, tuple):
        return tuple(_strides_like(draw, s, values) for s in shape)
    return draw(values)


@st.composite
def layouts(draw, extents=st.integers(1, 4), strides=st.integers(0, 24), max_size=512):
    """Arbitrary layouts: random hierarchical shape (size bounded), random strides."""
    shape = draw(int_tuples(extents).filter(lambda s: product(s) <= max_size))
    return Layout(shape, _strides_like(draw, shape, strides))


POW2 = st.sampled_from([1, 2, 4, 8])


@st.composite
def pow2_layouts(draw, max_size=256, zero_strides=True):
    """Layouts with power-of-two extents and strides: every divisibility condition of the algebra holds."""
    shape = draw(int_tuples(POW2).filter(lambda s: product(s) <= max_size))
    values = st.sampled_from(([0] if zero_strides else []) + [1, 2, 4, 8, 16, 32, 64])
    return Layout(shape, _strides_like(draw, shape, values))


@st.composite
def compact_layouts(draw, extents=st.integers(1, 5), max_size=360):
    """Bijections onto [0, size): a random shape whose flattened modes get the compact strides of a random
    mode order, regrouped into the original hierarchy."""
    shape = draw(int_tuples(extents).filter(lambda s: product(s) <= max_size))
    flat = flatten(shape)
    order = draw(st.permutations(range(len(flat))))
    strides = [0] * len(flat)
    acc = 1
    for i in order:
        strides[i] = acc
        acc *= flat[i]
    it = iter(strides)

    def regroup(s):
        if isinstance(s, tuple):
            return tuple(regroup(x) for x in s)
        return next(it)

    return Layout(shape, regroup(shape))


@st.composite
def injective_layouts(draw, extents=st.integers(1, 5), max_size=240, gaps=st.sampled_from([1, 1, 2, 3])):
    """Injective layouts with holes: compact strides of a random mode order, each scaled up by a gap
    factor so every stride is a multiple of the span below it."""
    shape = draw(int_tuples(extents).filter(lambda s: product(s) <= max_size))
    flat = flatten(shape)
    order = draw(st.permutations(range(len(flat))))
    strides = [0] * len(flat)
    acc = 1
    for i in order:
        acc *= draw(gaps)
        strides[i] = acc
        acc *= flat[i]
    it = iter(strides)

    def regroup(s):
        if isinstance(s, tuple):
            return tuple(regroup(x) for x in s)
        return next(it)

    return Layout(shape, regroup(shape))


def ev(layout: Layout, idx) -> np.ndarray:
    """``layout`` evaluated at every index of the integer array ``idx`` (vectorised)."""
    idx = np.asarray(idx, dtype=np.int64)
    return np.broadcast_to(np.asarray(layout(idx), dtype=np.int64), idx.shape)


def values(layout: Layout, n: int | None = None) -> list[int]:
    """``layout(i)`` for ``i < n`` (default: its size), evaluated on an index array."""
    n = layout.size() if n is None else n
    return ev(layout, np.arange(n)).tolist()


def scalar_values(layout: Layout, n: int | None = None) -> list[int]:
    """``layout(i)`` for ``i < n``, one Python call at a time (the reference for the vectorised path)."""
    n = layout.size() if n is None else n
    return [layout(i) for i in range(n)]


def image(layout: Layout) -> set[int]:
    return set(values(layout))


def all_coords(shape):
    """Every natural coordinate of ``shape`` (an int tuple), colexicographic."""
    if isinstance(shape, tuple):
        parts = [list(all_coords(s)) for s in shape]
        for combo in itertools.product(*reversed(parts)):
            yield tuple(reversed(combo))
    else:
        yield from range(shape)


def as_array(layout: Layout) -> np.ndarray:
    return np.array(values(layout), dtype=np.int64)
