"""Integers as every argument check of catlass_py sees them: a Python ``int`` or a numpy integer scalar (such as
``np.int64(2)`` or an element of an array's shape arithmetic), never a ``bool``; values are kept as Python ints
so that sizes never wrap."""

from __future__ import annotations

import numbers

import numpy as np


def is_int(value) -> bool:
    """True for a Python ``int`` or a numpy integer scalar, False for ``bool`` / ``np.bool_`` and anything else."""
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_))


def as_int(value):
    """``int(value)`` for an integer accepted by :func:`is_int`; any other value unchanged (for the caller's
    check to reject with its own message)."""
    return int(value) if is_int(value) else value


def sorted_unique(values) -> np.ndarray:
    """The distinct values of an integer array, sorted (``np.unique`` of it, by a sort: numpy 2.4's hash-based
    ``np.unique`` takes hundreds of milliseconds on an array of half a million offsets)."""
    flat = np.sort(np.asarray(values).ravel())
    if flat.size < 2:
        return flat
    keep = np.empty(flat.size, bool)
    keep[0] = True
    np.not_equal(flat[1:], flat[:-1], out=keep[1:])
    return flat[keep]


def offset_runs(offsets) -> tuple[tuple[int, int, int, int], ...]:
    """The distinct element offsets ``offsets`` (any order, repeats allowed) as runs ``(start, length, stride,
    count)``: ``count`` runs of ``length`` consecutive offsets, ``stride`` apart (0 for a single run); consecutive
    runs of one length at one distance are one entry. The form of a :class:`~catlass_py.arch.events.MemAccess`."""
    flat = sorted_unique(offsets)
    if flat.size == 0:
        return ()
    cut = np.flatnonzero(np.diff(flat) != 1) + 1
    starts = flat[np.concatenate(([0], cut))].tolist()
    lengths = (flat[np.concatenate((cut - 1, [flat.size - 1]))] + 1).tolist()
    lengths = [e - s for s, e in zip(starts, lengths)]
    pieces, i, n = [], 0, len(starts)
    while i < n:
        j = i + 1
        if j < n and lengths[j] == lengths[i]:
            step = starts[j] - starts[i]
            while j < n and lengths[j] == lengths[i] and starts[j] - starts[j - 1] == step:
                j += 1
            pieces.append((starts[i], lengths[i], step, j - i))
        else:
            pieces.append((starts[i], lengths[i], 0, 1))
        i = j
    return tuple(pieces)


__all__ = ["as_int", "is_int", "offset_runs", "sorted_unique"]
