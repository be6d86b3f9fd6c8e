"""1-D layout: CATLASS ``layout::VectorLayout`` (``layout/vector.hpp``): element ``i`` at ``i * stride``."""

from __future__ import annotations

import numpy as np

from catlass_py.errors import ArgumentError
from catlass_py.numerics.dtypes import get_dtype

from .base import (
    Layout,
    Plan,
    as_coord,
    as_positive,
    as_size,
    cached_footprint,
    cached_plan,
    check_bounds,
    check_buf,
    check_dtype,
    run_read,
    run_write,
)


_TILES: dict = {}  # get_tile_layout's results by (size, stride)


class VectorLayout(Layout):
    """CATLASS ``layout::VectorLayout``: ``size`` elements, element ``i`` at offset ``i * stride``.

    ``shape == (size,)`` and ``stride == (stride,)`` as in CATLASS; ``capacity = size * stride``.
    """

    __slots__ = ("shape", "stride", "_geom")

    def __init__(self, size, stride=1):
        size = as_size("size", size)
        if isinstance(stride, tuple):
            if len(stride) != 1:
                raise ArgumentError(f"stride: expected an int or a 1-tuple, got {stride!r}")
            stride = stride[0]
        stride = as_positive("stride", stride)
        sa = object.__setattr__
        sa(self, "shape", (size,))
        sa(self, "stride", (stride,))
        sa(self, "_geom", ("V", stride))

    @classmethod
    def _from_key(cls, key):
        return cls(*key)

    def _key(self):
        return (self.shape[0], self.stride[0])

    @property
    def size(self) -> int:
        """Number of logical elements (``shape[0]``)."""
        return self.shape[0]

    @property
    def capacity(self) -> int:
        """Elements spanned: ``size * stride`` (CATLASS defines none; this matches RowMajor's rule)."""
        return self.shape[0] * self.stride[0]

    def offset(self, index):
        """CATLASS ``GetOffset``: ``index * stride``; an int gives an int, an array an int64 array."""
        if type(index) is not int or index < 0:
            index = as_coord("index", index)
        return index * self.stride[0]

    def get_tile_layout(self, size) -> VectorLayout:
        """CATLASS ``GetTileLayout``: ``size`` elements with the same stride."""
        stride = self.stride[0]
        if type(size) is int and size >= 0:  # valid: a shared value
            key = (size, stride)
            hit = _TILES.get(key)
            if hit is None:
                if len(_TILES) >= 4096:
                    _TILES.clear()
                hit = _TILES[key] = VectorLayout(size, stride)
            return hit
        return VectorLayout(size, stride)

    @classmethod
    def make_layout(cls, dtype, size) -> VectorLayout:
        """A dense vector of ``size`` elements of ``dtype`` (the element type does not change it)."""
        get_dtype(dtype)
        return cls(size)

    @classmethod
    def make_layout_in_ub(cls, dtype, size) -> VectorLayout:
        """CATLASS ``VectorLayout::MakeLayoutInUb<Element>``, as intended: ``VectorLayout(size)``.

        The CATLASS version passes ``bool(C0 > size)`` as the size (shape 0 or 1); that is harmless
        there because the vector GM->UB copy reads only the source layout, and is not reproduced here.
        """
        get_dtype(dtype)
        return cls(size)

    def _pieces(self, n, _one):
        return [((n,), 0, (self.stride[0],), 0, (1,))]

    def footprint(self, size=None) -> tuple[tuple[int, int, int, int], ...]:
        """Element runs ``(start, length, stride, count)`` covering elements ``[0:size]`` (default: all)."""
        n = self._length(size)
        return cached_footprint(self._geom, n, 1, self._pieces)

    def plan(self, size: int, itemsize: int) -> Plan:
        """The cached copy plan of elements ``[0:size]`` for ``itemsize``-byte elements."""
        return cached_plan(self._geom, size, 1, itemsize, self._pieces)

    def _length(self, size):
        if size is None:
            return self.shape[0]
        size = as_size("size", size)
        if size > self.shape[0]:
            raise ArgumentError(f"size: {size} exceeds the layout's {self.shape[0]} elements ({self!r})")
        return size

    def read(self, buf: np.ndarray, size=None, *, out: np.ndarray | None = None) -> np.ndarray:
        """Gather elements ``[0:size]`` (default: all) from the flat ``buf`` into a new 1-D array."""
        n = self._length(size)
        check_buf(buf, writable=False)
        plan = cached_plan(self._geom, n, 1, buf.itemsize, self._pieces)
        if plan.max_offset >= buf.shape[0]:
            check_bounds(self, plan, buf, "read")
        if out is None:
            out = np.empty(n, buf.dtype)
        elif not isinstance(out, np.ndarray) or out.shape != (n,) or not out.flags.c_contiguous:
            raise ArgumentError(f"out: expected a C-contiguous array of shape {(n,)}")
        else:
            check_dtype(buf, out, "out")
        return run_read(plan, buf, out)

    def write(self, buf: np.ndarray, vec: np.ndarray) -> None:
        """Scatter the 1-D ``vec`` (length <= size) into elements ``[0:len(vec)]``; nothing else changes."""
        if type(vec) is not np.ndarray:
            vec = np.asarray(vec)
        if vec.ndim != 1:
            raise ArgumentError(f"vec: expected a 1-D array, got shape {vec.shape}")
        n = vec.shape[0]
        if n > self.shape[0]:
            raise ArgumentError(f"vec: length {n} exceeds the layout's {self.shape[0]} elements ({self!r})")
        check_buf(buf, writable=True)
        check_dtype(buf, vec, "vec")
        if not vec.flags.c_contiguous:
            vec = np.ascontiguousarray(vec)
        plan = cached_plan(self._geom, n, 1, buf.itemsize, self._pieces)
        if plan.max_offset >= buf.shape[0]:
            check_bounds(self, plan, buf, "write")
        run_write(plan, buf, vec)

    def pack(self, vec: np.ndarray, *, fill=0) -> np.ndarray:
        """New flat buffer of ``capacity`` elements with ``vec[i]`` at ``offset(i)``, ``fill`` elsewhere."""
        vec = np.asarray(vec)
        if vec.shape != self.shape:
            raise ArgumentError(f"vec: expected shape {self.shape} for {self!r}, got {vec.shape}")
        buf = np.full(self.capacity, fill, dtype=vec.dtype)
        self.write(buf, vec)
        return buf

    def unpack(self, buf: np.ndarray) -> np.ndarray:
        """Inverse of :meth:`pack`: the ``size`` logical elements stored in ``buf``."""
        return self.read(buf)

    def __repr__(self):
        return f"VectorLayout(size={self.shape[0]}, stride={self.stride[0]})"


__all__ = ["VectorLayout"]
