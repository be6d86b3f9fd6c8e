"""A little layout algebra in the pycute spirit: layouts as functions from coordinates to offsets.

No CATLASS counterpart (the closest relative is the separate ``include/tla`` CuTe-like algebra).

These are the slow, obviously-correct references (explicit index maps built from ``offset``) that the
tests hold the strided fast paths against, plus a few questions one asks of a layout: is it
injective, which logical element lives at each offset.
"""

from __future__ import annotations

import numpy as np

from catlass_py.errors import ArgumentError
from catlass_py.integers import sorted_unique

from .base import MatrixLayout, as_size
from .vector import VectorLayout


def layout_to_index_map(layout, rows=None, cols=None) -> np.ndarray:
    """int64 array ``(rows, cols)`` whose ``[r, c]`` is ``layout.offset(r, c)`` (default: logical shape).

    For a :class:`VectorLayout` pass ``rows`` as the length (``cols`` is ignored); the map is 1-D.
    Coordinates beyond the logical shape are allowed (padding has addresses too). The slow reference
    of ``read``/``write``: CATLASS ``GetOffset`` evaluated at every coordinate.
    """
    if isinstance(layout, VectorLayout):
        n = layout.size if rows is None else as_size("rows", rows)
        return np.asarray(layout.offset(np.arange(n, dtype=np.int64)), dtype=np.int64)
    if not isinstance(layout, MatrixLayout):
        raise ArgumentError(f"layout: expected a catlass_py layout, got {type(layout).__name__}")
    rows = layout.rows if rows is None else as_size("rows", rows)
    cols = layout.cols if cols is None else as_size("cols", cols)
    r = np.arange(rows, dtype=np.int64)[:, None]
    c = np.arange(cols, dtype=np.int64)[None, :]
    return np.broadcast_to(layout.offset(r, c), (rows, cols)).astype(np.int64)


def padded_index_map(layout: MatrixLayout) -> np.ndarray:
    """Index map over the full padded grid (``layout.padded_shape``), padding included (no CATLASS
    counterpart)."""
    return layout_to_index_map(layout, *layout.padded_shape)


def is_injective(layout, rows=None, cols=None) -> bool:
    """True when no two coordinates of the region (default: the padded grid) share an offset (no CATLASS
    counterpart)."""
    if rows is None and cols is None and isinstance(layout, MatrixLayout):
        m = padded_index_map(layout)
    else:
        m = layout_to_index_map(layout, rows, cols)
    return sorted_unique(m).size == m.size


def inverse_map(layout: MatrixLayout, size=None) -> np.ndarray:
    """int64 array ``(size, 2)``: the logical ``(row, col)`` stored at each offset, ``(-1, -1)`` for gaps.

    ``size`` defaults to ``layout.capacity``. Offsets of coordinates outside the logical shape count
    as gaps (no CATLASS counterpart). Raises :class:`ArgumentError` when the layout is not injective on its logical shape.
    """
    n = layout.capacity if size is None else as_size("size", size)
    m = layout_to_index_map(layout)
    flat = m.ravel()
    if sorted_unique(flat).size != flat.size:
        raise ArgumentError(f"layout: {layout!r} maps two logical elements to one offset")
    out = np.full((n, 2), -1, dtype=np.int64)
    keep = flat < n
    rr, cc = np.divmod(np.arange(flat.size, dtype=np.int64), max(layout.cols, 1))
    out[flat[keep], 0] = rr[keep]
    out[flat[keep], 1] = cc[keep]
    return out


__all__ = ["layout_to_index_map", "padded_index_map", "is_injective", "inverse_map"]
