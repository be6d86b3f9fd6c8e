"""Hierarchical integer tuples: the shapes, strides and coordinates of the layout algebra.

An *int tuple* is an integer or a (possibly nested, possibly empty) tuple of int tuples, e.g. ``8``,
``(4, 2)`` or ``((16, 3), (8, 5))``. TLA keeps them in ``tla::tuple`` (``include/tla/tuple.hpp``,
``include/tla/int_tuple.hpp`` of hicann/catlass); CuTe in ``cute::tuple`` (``include/cute/int_tuple.hpp``
of NVIDIA/cutlass); pycute (``python/pycute/int_tuple.py``) in plain Python tuples, as here.

Every function is pure: it reads its arguments and builds new tuples. Public functions validate what
they receive (Python or numpy integers, never ``bool``) and raise :class:`ArgumentError` naming the
argument and the rule; numpy integers come back as Python ints. Where a value may be a coordinate or an
index (``crd2idx``, ``idx2crd``), an integer numpy array is accepted in place of an integer, which
evaluates the function on many points at once.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from catlass_py.errors import ArgumentError

# ---------------------------------------------------------------------------------------------------
# predicates and normalisation


def is_int(x: Any) -> bool:
    """True for a Python or numpy integer that is not a ``bool`` (CuTe/TLA ``is_integral``)."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def is_tuple(x: Any) -> bool:
    """True for a tuple (CuTe/TLA ``is_tuple``)."""
    return isinstance(x, tuple)


def _describe(x: Any) -> str:
    text = repr(x)
    return text if len(text) <= 80 else text[:77] + "..."


def as_int_tuple(name: str, value: Any, *, minimum: int | None = None) -> Any:
    """Return ``value`` as an int tuple of Python ints, or raise :class:`ArgumentError` naming ``name``.

    ``minimum`` bounds every integer from below (0 for shapes and coordinates, 1 for positive
    extents). Lists are refused: an int tuple is built from ints and tuples only, as in pycute.
    No TLA/CuTe counterpart (C++ checks this with the type system).
    """

    def norm(v, path):
        if is_tuple(v):
            return tuple(norm(x, f"{path}[{i}]") for i, x in enumerate(v))
        if not is_int(v):
            raise ArgumentError(
                f"{name}: expected an integer or a tuple of int tuples, got {_describe(value)} "
                f"({type(v).__name__} at {path or 'top level'})"
            )
        v = operator.index(v)
        if minimum is not None and v < minimum:
            what = "non-negative" if minimum == 0 else f">= {minimum}"
            raise ArgumentError(f"{name}: every integer must be {what}, got {v} at {path or 'top level'} of {value!r}")
        return v

    return norm(value, "")


# ---------------------------------------------------------------------------------------------------
# structure: flatten, rank, depth, get


def flatten(t: Any) -> tuple:
    """The terminals of ``t`` in order, as a flat tuple (``flatten(3) == (3,)``).

    CuTe ``flatten`` (``int_tuple.hpp``; CuTe keeps an integer as it is, pycute and this function wrap it).
    TLA has no flatten; its ``MakeLayout(shape, stride)`` flattens the origin shape by mode.
    """
    if is_tuple(t):
        out: list = []
        for x in t:
            out.extend(flatten(x))
        return tuple(out)
    return (t,)


def rank(t: Any) -> int:
    """Number of top-level modes: ``len(t)`` for a tuple, 1 for an integer.

    TLA ``rank`` (``int_tuple.hpp``), CuTe ``rank``.
    """
    return len(t) if is_tuple(t) else 1


def depth(t: Any) -> int:
    """Nesting depth: 0 for an integer, ``1 + max(depth of the modes)`` for a tuple (1 when empty).

    TLA ``depth`` (``int_tuple.hpp``), CuTe ``depth``.
    """
    if is_tuple(t):
        return 1 + max((depth(x) for x in t), default=0)
    return 0


def get(t: Any, *index: int) -> Any:
    """The sub-tuple at the path ``index``: ``get(t, i, j) == t[i][j]``; ``get(n, 0) == n`` for an integer.

    TLA ``get<I, J...>`` (``int_tuple.hpp``, ``tuple.hpp``), CuTe ``get``. Raises :class:`ArgumentError`
    when a step of the path is out of range.
    """
    cur = t
    for step, i in enumerate(index):
        if not is_int(i):
            raise ArgumentError(f"index: expected integers, got {index!r}")
        i = int(i)
        if is_tuple(cur):
            if not 0 <= i < len(cur):
                raise ArgumentError(f"index: mode {i} at step {step} is out of range for rank {len(cur)} ({t!r})")
            cur = cur[i]
        elif i == 0:
            continue
        else:
            raise ArgumentError(f"index: an integer has only mode 0, got {i} at step {step} ({t!r})")
    return cur


# ---------------------------------------------------------------------------------------------------
# arithmetic


def signum(a: int) -> int:
    """-1, 0 or 1 (CuTe ``signum``)."""
    return (a > 0) - (a < 0)


def ceil_div(a: int, b: int) -> int:
    """``ceil(a / b)`` for integers, ``b > 0`` (TLA/CATLASS ``CeilDiv``, CuTe ``ceil_div`` on integers)."""
    return -(-a // b)


def round_up(a: int, b: int) -> int:
    """``ceil(a / b) * b`` (CATLASS ``RoundUp``)."""
    return -(-a // b) * b


def product(t: Any) -> int:
    """Product of all terminals (1 for an empty tuple).

    TLA ``Product`` (``int_tuple.hpp``), CuTe ``product``.
    """
    if is_tuple(t):
        p = 1
        for x in t:
            p *= product(x)
        return p
    return t


def tuple_max(t: Any) -> int:
    """Largest terminal of ``t``. TLA ``max`` on a tuple (``int_tuple.hpp``), CuTe ``max``."""
    return max(flatten(t))


def _rank_mismatch(fn: str, a: Any, b: Any) -> ArgumentError:
    return ArgumentError(f"{fn}: a and b must have the same profile, got {a!r} and {b!r}")


def inner_product(a: Any, b: Any) -> int:
    """Sum of the products of matching terminals of the congruent ``a`` and ``b``.

    CuTe ``inner_product`` (``int_tuple.hpp``).
    """
    if is_tuple(a):
        if not is_tuple(b) or len(a) != len(b):
            raise _rank_mismatch("inner_product", a, b)
        return sum(inner_product(x, y) for x, y in zip(a, b))
    if is_tuple(b):
        raise _rank_mismatch("inner_product", a, b)
    return a * b


def add(a: Any, b: Any) -> Any:
    """Terminal-wise sum of the congruent ``a`` and ``b`` (coordinates of a tensor's origin plus an offset).

    TLA ``Add`` (``int_tuple.hpp``). Raises :class:`ArgumentError` when the profiles differ.
    """
    if is_tuple(a) and is_tuple(b):
        if len(a) != len(b):
            raise ArgumentError(f"add: mismatched ranks {len(a)} and {len(b)} ({a!r} + {b!r})")
        return tuple(add(x, y) for x, y in zip(a, b))
    if is_tuple(a) or is_tuple(b):
        raise ArgumentError(f"add: cannot add an integer and a tuple ({a!r} + {b!r})")
    return a + b


def elem_scale(a: Any, b: Any) -> Any:
    """``a`` with every terminal multiplied by the product of the matching mode of ``b``.

    CuTe ``elem_scale`` (``int_tuple.hpp``).
    """
    if is_tuple(a):
        if not is_tuple(b) or len(a) != len(b):
            raise _rank_mismatch("elem_scale", a, b)
        return tuple(elem_scale(x, y) for x, y in zip(a, b))
    return a * product(b)


def shape_div(a: Any, b: Any) -> Any:
    """Divide the shape ``a`` by ``b`` from the left, keeping the profile of ``a``.

    Integer by integer is ``ceil(a / b)`` and requires one to divide the other (CuTe's divisibility
    condition; :class:`ArgumentError` otherwise). A tuple by an integer divides mode by mode, passing
    what is left of ``b`` on: ``shape_div((4, 5, 6), 40) == (1, 1, 3)``. A tuple by a tuple works mode by
    mode; an integer by a tuple divides by the tuple's product. CuTe ``shape_div`` (``int_tuple.hpp``).
    """
    if is_tuple(a):
        if is_tuple(b):
            if len(a) != len(b):
                raise _rank_mismatch("shape_div", a, b)
            return tuple(shape_div(x, y) for x, y in zip(a, b))
        out = []
        for x in a:
            out.append(shape_div(x, b))
            b = shape_div(b, product(x))
        return tuple(out)
    if is_tuple(b):
        return shape_div(a, product(b))
    if a == 0 or b == 0:
        raise ArgumentError(f"shape_div: extents must be positive, got {a} / {b}")
    if a % b and b % a:
        raise ArgumentError(f"shape_div: {a} / {b} breaks the divisibility condition (one must divide the other)")
    return -(-a // b)


def shape_mod(a: Any, b: int) -> Any:
    """Keep the first ``b`` elements of the shape ``a`` (a "modulo" from the left, profile of ``a`` kept).

    ``shape_mod((6, 2), 3) == (3, 1)``, ``shape_mod((3, 6, 2, 8), 9) == (3, 3, 1, 1)``. Requires each step
    to divide (:class:`ArgumentError` otherwise). The "mod out" step of composition as CuTe's
    ``media/docs/cpp/cute/02_layout_algebra.md`` describes it (``(6,2) % 2 => (2,1)``); CuTe computes it
    inline in ``composition_impl`` (``layout.hpp``).
    """
    if is_tuple(a):
        out = []
        for x in a:
            m = shape_mod(x, b)
            out.append(m)
            b = shape_div(b, product(x)) if b > 1 else 1
        return tuple(out)
    if b <= 0:
        raise ArgumentError(f"shape_mod: the count must be positive, got {b}")
    if a % b and b % a:
        raise ArgumentError(f"shape_mod: {a} % {b} breaks the divisibility condition (one must divide the other)")
    return min(a, b)


def prefix_product(a: Any, init: Any = 1) -> Any:
    """Exclusive prefix product, congruent to ``a``: ``prefix_product(((2, 3), 4)) == ((1, 2), 6)``.

    The column-major compact strides of a shape. CuTe ``prefix_product`` / ``compact_col_major``
    (``int_tuple.hpp``, ``stride.hpp``).
    """
    if is_tuple(a):
        if is_tuple(init):
            if len(a) != len(init):
                raise _rank_mismatch("prefix_product", a, init)
            return tuple(prefix_product(x, i) for x, i in zip(a, init))
        out = []
        for x in a:
            out.append(prefix_product(x, init))
            init = init * product(x)
        return tuple(out)
    if is_tuple(init):
        raise ArgumentError(f"prefix_product: init {init!r} must be an integer for the integer {a!r}")
    return init


def suffix_product(a: Any, init: int = 1) -> Any:
    """Exclusive product from the right, congruent to ``a``: the row-major compact strides.

    ``suffix_product((2, 3, 4)) == (12, 4, 1)``. CuTe ``compact_row_major`` / ``compact_major<LayoutRight>``
    (``stride.hpp``).
    """
    if is_tuple(a):
        out = []
        for x in reversed(a):
            out.append(suffix_product(x, init))
            init = init * product(x)
        return tuple(reversed(out))
    return init


compact_col_major = prefix_product
compact_row_major = suffix_product


# ---------------------------------------------------------------------------------------------------
# profile relations


def congruent(a: Any, b: Any) -> bool:
    """True when ``a`` and ``b`` have the same profile (same nesting, ranks at every level).

    CuTe ``congruent`` (``int_tuple.hpp``).
    """
    if is_tuple(a) and is_tuple(b):
        return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))
    return not is_tuple(a) and not is_tuple(b)


def weakly_congruent(a: Any, b: Any) -> bool:
    """True when the profile of ``a`` is a coarsening of ``b`` (an integer in ``a`` matches anything).

    CuTe ``weakly_congruent`` (``int_tuple.hpp``).
    """
    if is_tuple(a) and is_tuple(b):
        return len(a) == len(b) and all(weakly_congruent(x, y) for x, y in zip(a, b))
    return not is_tuple(a)


def compatible(a: Any, b: Any) -> bool:
    """True when every coordinate of shape ``a`` is also a coordinate of shape ``b`` (equal size at every
    terminal of ``a``). CuTe ``compatible`` (``int_tuple.hpp``).
    """
    if is_tuple(a) and is_tuple(b):
        return len(a) == len(b) and all(compatible(x, y) for x, y in zip(a, b))
    if is_tuple(a):
        return False
    return a == product(b)


# ---------------------------------------------------------------------------------------------------
# coordinates <-> indices


def _coord_value(name: str, v: Any):
    """An integer coordinate/index, or an integer numpy array of them (all non-negative)."""
    if is_int(v):
        v = operator.index(v)
        if v < 0:
            raise ArgumentError(f"{name}: coordinates are non-negative, got {v}")
        return v
    if isinstance(v, np.ndarray):
        if v.dtype.kind not in "iu":
            raise ArgumentError(f"{name}: expected integer coordinates, got an array of dtype {v.dtype}")
        if v.size and v.min() < 0:
            raise ArgumentError(f"{name}: coordinates are non-negative, got minimum {int(v.min())}")
        return v.astype(np.int64, copy=False)
    raise ArgumentError(f"{name}: expected an integer, an integer array or a tuple of them, got {_describe(v)}")


def as_coord(name: str, value: Any) -> Any:
    """Validate a coordinate: an int tuple whose terminals are non-negative integers or integer arrays."""
    if is_tuple(value):
        return tuple(as_coord(name, v) for v in value)
    return _coord_value(name, value)


def _crd2idx(crd, shape, stride):
    if is_tuple(crd):
        if not is_tuple(shape) or len(crd) != len(shape):
            raise ArgumentError(
                f"coord: {_describe(crd)} does not match the shape {shape!r} (a tuple coordinate needs a tuple "
                "shape of the same rank)"
            )
        total = 0
        for c, s, d in zip(crd, shape, stride):
            total = total + _crd2idx(c, s, d)
        return total
    if is_tuple(shape):
        if not shape:
            return 0
        total = 0
        last = len(shape) - 1
        for i, (s, d) in enumerate(zip(shape, stride)):
            if i == last:
                total = total + _crd2idx(crd, s, d)
            else:
                n = product(s)
                if n == 0:
                    raise ArgumentError(f"coord: cannot split an index over the empty mode {s!r} of {shape!r}")
                total = total + _crd2idx(crd % n, s, d)
                crd = crd // n
        return total
    return crd * stride


def crd2idx(crd: Any, shape: Any, stride: Any = None) -> Any:
    """The index (offset) of coordinate ``crd`` in a layout of ``shape`` and ``stride``.

    ``crd`` is an integer (a 1-D index, split colexicographically over the modes of ``shape`` with the
    last mode unbounded) or a tuple congruent to ``shape`` down to any level. ``stride`` defaults to the
    compact column-major strides. Integer numpy arrays may stand for integers (vectorised evaluation).

    TLA ``crd2offset`` (``include/tla/layout.hpp``), CuTe ``crd2idx`` (``include/cute/stride.hpp``),
    pycute ``crd2idx``.
    """
    shape = as_int_tuple("shape", shape, minimum=0)
    stride = prefix_product(shape) if stride is None else as_int_tuple("stride", stride)
    if not congruent(shape, stride):
        raise ArgumentError(f"stride: {stride!r} is not congruent to the shape {shape!r}")
    return _crd2idx(as_coord("coord", crd), shape, stride)


crd2offset = crd2idx


def _idx2crd_strided(idx, shape, stride):
    if is_tuple(shape):
        return tuple(_idx2crd_strided(idx, s, d) for s, d in zip(shape, stride))
    if shape == 1:
        return 0 * idx
    if shape == 0 or stride == 0:
        raise ArgumentError(f"idx2crd: cannot take a coordinate in a mode of shape {shape} and stride {stride}")
    return (idx // stride) % shape


def _idx2crd(idx, shape):
    if is_tuple(shape):
        out = []
        last = len(shape) - 1
        for i, s in enumerate(shape):
            if i == last:
                out.append(_idx2crd(idx, s))
            else:
                n = product(s)
                if n == 0:
                    raise ArgumentError(f"idx2crd: cannot split an index over the empty mode {s!r} of {shape!r}")
                out.append(_idx2crd(idx % n, s))
                idx = idx // n
        return tuple(out)
    return idx


def idx2crd(idx: Any, shape: Any, stride: Any = None) -> Any:
    """The natural coordinate of index ``idx`` in ``shape`` (the inverse of :func:`crd2idx` on compact
    column-major layouts).

    Without ``stride``: a colexicographic split with the last mode unbounded, so
    ``crd2idx(idx2crd(i, s), s) == i`` for every ``i >= 0``. With ``stride``: ``(idx // d) % s`` at every
    terminal. A tuple ``idx`` congruent to ``shape`` converts mode by mode.

    CuTe ``idx2crd`` (``include/cute/stride.hpp``; pycute's ``idx2crd`` takes the last mode modulo its size
    as well); TLA has no counterpart.
    """
    shape = as_int_tuple("shape", shape, minimum=0)
    idx = as_coord("idx", idx)
    if stride is not None:
        stride = as_int_tuple("stride", stride)
        if not congruent(shape, stride):
            raise ArgumentError(f"stride: {stride!r} is not congruent to the shape {shape!r}")

    def go(i, s, d):
        if is_tuple(i):
            if not is_tuple(s) or len(i) != len(s):
                raise ArgumentError(f"idx: {_describe(i)} does not match the shape {s!r}")
            if d is None:
                return tuple(go(x, y, None) for x, y in zip(i, s))
            return tuple(go(x, y, z) for x, y, z in zip(i, s, d))
        return _idx2crd(i, s) if d is None else _idx2crd_strided(i, s, d)

    return go(idx, shape, stride)


# ---------------------------------------------------------------------------------------------------
# slicing with None (the underscore)


def has_none(a: Any) -> bool:
    """True when ``None`` (the slice marker, CuTe/TLA ``_``) appears anywhere in ``a``. pycute ``has_none``."""
    if is_tuple(a):
        return any(has_none(x) for x in a)
    return a is None


def slice_(crd: Any, trg: Any) -> tuple:
    """The parts of ``trg`` that ``crd`` marks with ``None``, flattened one level into a tuple.

    CuTe ``slice`` (``int_tuple.hpp``; ``_`` is ``None`` here), pycute ``slice_``.
    """
    if is_tuple(crd):
        if not is_tuple(trg) or len(crd) != len(trg):
            raise ArgumentError(f"coord: {_describe(crd)} does not match {trg!r} (slicing needs the same profile)")
        out: list = []
        for c, t in zip(crd, trg):
            out.extend(slice_(c, t))
        return tuple(out)
    if crd is None:
        return (trg,)
    return ()


def dice(crd: Any, trg: Any) -> tuple:
    """The parts of ``trg`` that ``crd`` fixes (not ``None``): the complement of :func:`slice_`.

    CuTe ``dice`` (``int_tuple.hpp``).
    """
    if is_tuple(crd):
        if not is_tuple(trg) or len(crd) != len(trg):
            raise ArgumentError(f"coord: {_describe(crd)} does not match {trg!r} (dicing needs the same profile)")
        out: list = []
        for c, t in zip(crd, trg):
            out.extend(dice(c, t))
        return tuple(out)
    if crd is None:
        return ()
    return (trg,)


def zero_none(crd: Any) -> Any:
    """``crd`` with every ``None`` replaced by 0 (TLA ``detail::replace_underscore_with_zero``)."""
    if is_tuple(crd):
        return tuple(zero_none(c) for c in crd)
    return 0 if crd is None else crd


# ---------------------------------------------------------------------------------------------------
# TLA makers


def make_shape(*extents: Any) -> tuple:
    """A shape from its modes (TLA ``MakeShape``, CuTe ``make_shape``); validated non-negative."""
    return as_int_tuple("shape", tuple(extents), minimum=0)


def make_stride(*strides: Any) -> tuple:
    """A stride from its modes (TLA ``MakeStride``, CuTe ``make_stride``)."""
    return as_int_tuple("stride", tuple(strides))


def make_coord(*coords: Any) -> tuple:
    """A coordinate from its modes (TLA ``MakeCoord``, CuTe ``make_coord``); ``None`` marks a slice."""

    def norm(v):
        if v is None:
            return None
        if is_tuple(v):
            return tuple(norm(x) for x in v)
        return _coord_value("coord", v)

    return tuple(norm(c) for c in coords)


__all__ = [
    "add",
    "as_coord",
    "as_int_tuple",
    "ceil_div",
    "compact_col_major",
    "compact_row_major",
    "compatible",
    "congruent",
    "crd2idx",
    "crd2offset",
    "depth",
    "dice",
    "elem_scale",
    "flatten",
    "get",
    "has_none",
    "idx2crd",
    "inner_product",
    "is_int",
    "is_tuple",
    "make_coord",
    "make_shape",
    "make_stride",
    "prefix_product",
    "product",
    "rank",
    "round_up",
    "shape_div",
    "shape_mod",
    "signum",
    "slice_",
    "suffix_product",
    "tuple_max",
    "weakly_congruent",
    "zero_none",
]
