"""Common machinery of every layout: validation, immutability, and the strided gather/scatter engine.

A layout maps a logical coordinate to an element offset in a flat buffer. Subclasses describe
themselves to this module as a list of *pieces*: rectangular strided blocks, each a numpy view of the
flat buffer (shape and element strides) paired with the matching block of a C-contiguous ``(rows, cols)``
array. ``read`` and ``write`` copy piece by piece with ``np.copyto`` between two strided views, so no
Python loop ever runs per element or per row. Plans are cached by geometry.

Trailing axes that are contiguous on both sides are folded into one raw ``V<n>`` item (a 32-byte
fractal row becomes a single item), which halves the cost of fractal copies; the bytes are copied
unchanged, so this is exact for every dtype.

Views are made with the ``np.ndarray(shape, dtype, buffer=..., offset=..., strides=...)`` constructor,
the same thing ``numpy.lib.stride_tricks.as_strided`` builds but about four times cheaper per call.
Like ``as_strided`` it trusts its strides, so the largest offset a plan touches is compared with the
buffer length first and a short buffer raises :class:`OutOfBoundsError`.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from catlass_py.errors import ArgumentError, OutOfBoundsError

# ---------------------------------------------------------------------------------------------------
# validation helpers


def as_size(name: str, value: Any) -> int:
    """Return ``value`` as a non-negative Python int or raise :class:`ArgumentError` naming ``name``."""
    if type(value) is int and value >= 0:  # the common case, on the simulator's hot path
        return value
    if isinstance(value, (bool, np.bool_)):
        raise ArgumentError(f"{name}: expected a non-negative integer, got {value!r}")
    try:
        v = operator.index(value)
    except TypeError:
        raise ArgumentError(f"{name}: expected a non-negative integer, got {value!r}") from None
    if v < 0:
        raise ArgumentError(f"{name}: expected a non-negative integer, got {v}")
    return v


def as_positive(name: str, value: Any) -> int:
    """Return ``value`` as a positive Python int or raise :class:`ArgumentError` naming ``name``."""
    v = as_size(name, value)
    if v == 0:
        raise ArgumentError(f"{name}: expected a positive integer, got 0")
    return v


def as_sizes(name: str, value: Any, n: int) -> tuple[int, ...]:
    """Return ``value`` as a tuple of ``n`` non-negative ints or raise :class:`ArgumentError`."""
    try:
        items = tuple(value)
    except TypeError:
        raise ArgumentError(f"{name}: expected a tuple of {n} non-negative integers, got {value!r}") from None
    if len(items) != n:
        raise ArgumentError(f"{name}: expected a tuple of {n} non-negative integers, got {value!r}")
    return tuple(as_size(f"{name}[{i}]", v) for i, v in enumerate(items))


def ceil_div(a: int, b: int) -> int:
    """CATLASS ``CeilDiv``."""
    return -(-a // b)


def round_up(a: int, b: int) -> int:
    """CATLASS ``RoundUp``."""
    return -(-a // b) * b


def as_coord(name: str, value: Any):
    """Return a coordinate as an int, or as an int64 array when ``value`` is array-like.

    Negative coordinates raise :class:`ArgumentError` (CATLASS coordinates are unsigned).
    """
    if type(value) is int:
        if value < 0:
            raise ArgumentError(f"{name}: expected a non-negative coordinate, got {value}")
        return value
    if isinstance(value, np.integer):
        v = int(value)
        if v < 0:
            raise ArgumentError(f"{name}: expected a non-negative coordinate, got {v}")
        return v
    arr = np.asarray(value)
    if arr.dtype.kind not in "iu":
        raise ArgumentError(f"{name}: expected integer coordinates, got dtype {arr.dtype}")
    arr = arr.astype(np.int64, copy=False)
    if arr.size and arr.min() < 0:
        raise ArgumentError(f"{name}: expected non-negative coordinates, got minimum {int(arr.min())}")
    return arr


# ---------------------------------------------------------------------------------------------------
# immutable value base


class Layout:
    """Base of every catlass_py layout (CATLASS ``layout::*`` structs): an immutable, hashable value.

    Subclasses set their fields once in ``__init__`` through :func:`object.__setattr__`; afterwards
    every attribute is read-only. Equality and hashing compare the class and :meth:`_key`.
    """

    __slots__ = ("_hash",)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable; build a new layout instead")

    def __delattr__(self, name):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _key(self) -> tuple:  # pragma: no cover - abstract
        raise NotImplementedError

    def __eq__(self, other):
        if self is other:
            return True
        if type(other) is not type(self):
            return NotImplemented
        return self._key() == other._key()

    def __ne__(self, other):
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    def __hash__(self):
        try:
            return self._hash
        except AttributeError:
            h = hash((type(self).__name__, self._key()))
            object.__setattr__(self, "_hash", h)
            return h

    def __reduce__(self):
        return (_rebuild, (type(self), self._key()))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def _rebuild(cls, key):
    return cls._from_key(key)


# ---------------------------------------------------------------------------------------------------
# plans: the strided pieces of a rectangular region


class Plan:
    """How to move a ``rows x cols`` region between a flat buffer and a C-contiguous 2-D array.

    No CATLASS counterpart: on the device the DMA engines walk these strides.

    ``pieces`` holds ``(shape, dtype, buf_offset, buf_strides, nd_offset, nd_strides)`` with offsets
    and strides in bytes; the two strided views of one piece have the same shape. ``dtype`` is
    ``None`` (use the buffer's dtype) or a raw ``V<n>`` dtype when the innermost axis is contiguous on
    both sides and has been folded into one opaque item (bit-exact, and about twice as fast for
    short fractal rows). ``max_offset`` is the largest element offset touched in the flat buffer
    (``-1`` for an empty region).
    """

    __slots__ = ("pieces", "max_offset")

    def __init__(self, pieces, max_offset):
        self.pieces = pieces
        self.max_offset = max_offset


_PLAN_CACHE: dict = {}
_PLAN_CACHE_LIMIT = 8192


def _fold(shape, bstr, nstr, itemsize):
    """Fold trailing axes that are contiguous on both sides into one raw item of ``V<bytes>``."""
    item = itemsize
    shape, bstr, nstr = list(shape), list(bstr), list(nstr)
    while shape and bstr[-1] == item and nstr[-1] == item:
        n = shape.pop()
        bstr.pop()
        nstr.pop()
        item *= n
    if item == itemsize:
        return tuple(shape), None, tuple(bstr), tuple(nstr)
    return tuple(shape), np.dtype(f"V{item}"), tuple(bstr), tuple(nstr)


def make_plan(elem_pieces, itemsize: int, fold: bool = True) -> Plan:
    """Turn pieces in element units into a :class:`Plan` in bytes for a given item size (``fold=False``
    keeps real element views, needed when the elements are computed on rather than copied)."""
    pieces = []
    max_off = -1
    for shape, boff, bstr, noff, nstr in elem_pieces:
        if 0 in shape:
            continue
        top = boff + sum((n - 1) * s for n, s in zip(shape, bstr))
        max_off = max(max_off, top)
        bstr_b, nstr_b = tuple(s * itemsize for s in bstr), tuple(s * itemsize for s in nstr)
        if fold:
            fshape, dt, fb, fn = _fold(shape, bstr_b, nstr_b, itemsize)
        else:
            fshape, dt, fb, fn = tuple(shape), None, bstr_b, nstr_b
        pieces.append((fshape, dt, boff * itemsize, fb, noff * itemsize, fn))
    return Plan(tuple(pieces), max_off)


def cached_plan(geom: tuple, rows: int, cols: int, itemsize: int, builder, fold: bool = True) -> Plan:
    """Return the cached plan for ``(geom, rows, cols, itemsize, fold)``, building it with ``builder`` once."""
    key = (geom, rows, cols, itemsize, fold)
    plan = _PLAN_CACHE.get(key)
    if plan is None:
        if len(_PLAN_CACHE) >= _PLAN_CACHE_LIMIT:
            _PLAN_CACHE.clear()
        plan = make_plan(builder(rows, cols), itemsize, fold)
        _PLAN_CACHE[key] = plan
    return plan


def piece_runs(shape, offset: int, strides) -> tuple[int, int, int, int]:
    """The element run ``(start, length, stride, count)`` covering one strided piece: ``count`` runs of
    ``length`` elements, ``stride`` apart, from ``start``.

    Axes are taken from the smallest stride up; while an axis continues the contiguous run it is merged in.
    The first axis that does not becomes the run axis when it is the last one; further axes are folded into
    the run length, which then covers a superset of the piece (the gaps between inner items). Exact for
    every 2-D layout and for whole fractal blocks of the fractal layouts.
    """
    axes = sorted((s, n) for n, s in zip(shape, strides) if n > 1)
    if any(n == 0 for n in shape):
        return (offset, 0, 0, 0)
    run = 1
    i = 0
    while i < len(axes) and axes[i][0] == run:
        run *= axes[i][1]
        i += 1
    if i == len(axes):
        return (offset, run, 0, 1)
    outer_stride, outer_n = axes[-1]
    extent = run + sum((n - 1) * s for s, n in axes[i:-1])
    if extent > outer_stride:  # the folded axes reach past the run axis: one dense bounding run
        return (offset, extent + (outer_n - 1) * outer_stride, 0, 1)
    return (offset, extent, outer_stride, outer_n)


_FOOTPRINT_CACHE: dict = {}


def cached_footprint(geom: tuple, rows: int, cols: int, builder) -> tuple[tuple[int, int, int, int], ...]:
    """Element runs of the region ``[0:rows, 0:cols]`` (one per piece of the copy plan), cached by geometry."""
    key = (geom, rows, cols)
    runs = _FOOTPRINT_CACHE.get(key)
    if runs is None:
        if len(_FOOTPRINT_CACHE) >= _PLAN_CACHE_LIMIT:
            _FOOTPRINT_CACHE.clear()
        runs = tuple(r for shape, boff, bstr, _no, _ns in builder(rows, cols)
                     if (r := piece_runs(shape, boff, bstr))[3])
        _FOOTPRINT_CACHE[key] = runs
    return runs


def check_buf(buf, *, writable: bool) -> np.ndarray:
    """Validate a flat buffer: a 1-D C-contiguous numpy array (writable when writing)."""
    if not isinstance(buf, np.ndarray):
        raise ArgumentError(f"buf: expected a 1-D numpy array, got {type(buf).__name__}")
    if buf.ndim != 1:
        raise ArgumentError(f"buf: expected a 1-D numpy array, got shape {buf.shape}")
    if not buf.flags.c_contiguous:
        raise ArgumentError("buf: expected a C-contiguous 1-D array (a typed view of an arena)")
    if writable and not buf.flags.writeable:
        raise ArgumentError("buf: the buffer is read-only")
    return buf


def check_bounds(layout, plan: Plan, buf: np.ndarray, what: str) -> None:
    """Raise :class:`OutOfBoundsError` when ``plan`` reaches past the end of ``buf``."""
    if plan.max_offset >= buf.shape[0]:
        raise OutOfBoundsError(
            f"{what} through {layout!r} touches element offset {plan.max_offset} "
            f"but buf holds only {buf.shape[0]} elements (needs at least {plan.max_offset + 1})"
        )


def run_read(plan: Plan, buf: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Gather: copy every piece of ``buf`` into the C-contiguous ``out``."""
    bdt = buf.dtype
    nd = np.ndarray
    for shape, dt, boff, bstr, noff, nstr in plan.pieces:
        dt = dt or bdt
        np.copyto(
            nd(shape, dt, buffer=out, offset=noff, strides=nstr),
            nd(shape, dt, buffer=buf, offset=boff, strides=bstr),
        )
    return out


def run_write(plan: Plan, buf: np.ndarray, src: np.ndarray) -> None:
    """Scatter: copy every piece of the C-contiguous ``src`` into ``buf``."""
    bdt = buf.dtype
    nd = np.ndarray
    for shape, dt, boff, bstr, noff, nstr in plan.pieces:
        dt = dt or bdt
        np.copyto(
            nd(shape, dt, buffer=buf, offset=boff, strides=bstr),
            nd(shape, dt, buffer=src, offset=noff, strides=nstr),
        )


def run_accumulate(plan: Plan, buf: np.ndarray, src: np.ndarray) -> None:
    """``buf[piece] += src[piece]`` for every piece (an unfolded plan); integer sums wrap like hardware."""
    bdt = buf.dtype
    nd = np.ndarray
    for shape, _dt, boff, bstr, noff, nstr in plan.pieces:
        view = nd(shape, bdt, buffer=buf, offset=boff, strides=bstr)
        np.add(view, nd(shape, bdt, buffer=src, offset=noff, strides=nstr), out=view)


def check_dtype(buf: np.ndarray, data: np.ndarray, name: str) -> None:
    """Layouts move elements and never convert them: ``data`` must have the dtype of ``buf``."""
    if data.dtype != buf.dtype:
        raise ArgumentError(
            f"{name}: dtype {data.dtype} differs from the buffer dtype {buf.dtype}; "
            "layouts move elements and never convert them (cast first)"
        )


# ---------------------------------------------------------------------------------------------------
# single strided views: a whole region as one numpy view (the simulator's fast path)
#
# Every layout here places (r, c) at ``(r // s_r) * T_r + (r % s_r) * t_r + (c // s_c) * T_c + (c % s_c) * t_c``
# (RowMajor and ColumnMajor with s = 1). Cutting the row index into digits at the fractal sizes of every layout
# taking part (r = d0 * B0 + d1 * B1 + ... with B0 > B1 > ... > 1, each dividing the one before) makes the
# offset linear in the digits for each of them, so a region whose extents are multiples of B0 is ONE strided
# view of the same N-D shape in each layout: a copy between two layouts is one ``np.copyto``, an operand read
# one cast. Regions that do not split (partial fractals, sizes that do not divide) keep the piecewise plans.


def split_sizes(*fractal_sizes: int) -> tuple[int, ...] | None:
    """The digit sizes ``(B0, B1, ..., 1)`` for fractal sides ``fractal_sizes`` (1 = no fractal), or None when
    they do not form a divisibility chain."""
    sizes = sorted({s for s in fractal_sizes if s > 1}, reverse=True)
    for a, b in zip(sizes, sizes[1:]):
        if a % b:
            return None
    return (*sizes, 1)


def split_axis(extent: int, sizes: tuple[int, ...], axis: tuple[int, int, int]):
    """``(shape, element strides)`` of one logical axis of ``extent`` cut at ``sizes`` in a layout whose axis
    is ``(s, T, t)`` (see :meth:`MatrixLayout.linear_axes`), or None when ``extent`` is not a multiple of the
    largest size not beyond it (a region ending inside a fractal, past its first)."""
    if sizes[0] > extent:  # digits at sizes beyond the extent are always 0: drop them
        sizes = tuple(b for b in sizes if b <= extent) or (1,)
    if extent % sizes[0]:
        return None
    s, big, small = axis
    shape = (extent // sizes[0], *(a // b for a, b in zip(sizes, sizes[1:])))
    strides = tuple((b // s) * big if b >= s else b * small for b in sizes)
    return shape, strides


# ---------------------------------------------------------------------------------------------------
# 2-D logical layouts


class MatrixLayout(Layout):
    """Base of the matrix layouts: a logical ``rows x cols`` matrix placed in a flat buffer.

    Fields ``shape`` and ``stride`` hold CATLASS's ``shape()``/``stride()`` in element units
    (2-D for RowMajor/ColumnMajor, 4-D for fractal and padding layouts); ``rows``/``cols`` are the
    logical shape (CATLASS ``orgShape`` of 4-D layouts, ``shape`` of 2-D ones). Counterpart: the
    common interface of the structs in CATLASS ``include/catlass/layout/matrix.hpp``.
    """

    __slots__ = ("rows", "cols", "shape", "stride", "_geom")

    # -- construction -------------------------------------------------------------------------

    @classmethod
    def _new(cls, rows: int, cols: int, shape: tuple, stride: tuple):
        """Build without validation (arguments already checked)."""
        obj = object.__new__(cls)
        sa = object.__setattr__
        sa(obj, "rows", rows)
        sa(obj, "cols", cols)
        sa(obj, "shape", shape)
        sa(obj, "stride", stride)
        sa(obj, "_geom", obj._make_geom())
        return obj

    @classmethod
    def _from_key(cls, key):
        return cls._new(*key)

    def _key(self) -> tuple:
        return (self.rows, self.cols, self.shape, self.stride)

    def _make_geom(self) -> tuple:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- geometry -------------------------------------------------------------------------------

    @property
    def org_shape(self) -> tuple[int, int]:
        """Logical ``(rows, cols)`` (CATLASS ``orgShape`` of 4-D layouts)."""
        return (self.rows, self.cols)

    @property
    def padded_shape(self) -> tuple[int, int]:  # pragma: no cover - abstract
        """Rows and columns of the full grid the layout addresses, padding included."""
        raise NotImplementedError

    @property
    def capacity(self) -> int:  # pragma: no cover - abstract
        """Number of elements the layout spans (CATLASS ``Capacity()``)."""
        raise NotImplementedError

    def offset(self, row, col):  # pragma: no cover - abstract
        """Linear element offset of ``(row, col)`` (CATLASS ``GetOffset``); vectorised over arrays."""
        raise NotImplementedError

    def get_tile_layout(self, rows, cols):  # pragma: no cover - abstract
        """Layout of a ``rows x cols`` tile with the same strides (CATLASS ``GetTileLayout``)."""
        raise NotImplementedError

    def _pieces(self, rows: int, cols: int) -> list:  # pragma: no cover - abstract
        raise NotImplementedError

    def linear_axes(self):
        """``((s_r, T_r, t_r), (s_c, T_c, t_c))`` with ``offset(r, c) = (r // s_r) * T_r + (r % s_r) * t_r +
        (c // s_c) * T_c + (c % s_c) * t_c``, or None for a layout that is not of that form (see
        :func:`split_axis`)."""
        return None

    def _region(self, rows, cols) -> tuple[int, int]:
        if rows is None:
            rows = self.rows
        elif type(rows) is not int or rows < 0 or rows > self.rows:
            rows = as_size("rows", rows)
            if rows > self.rows:
                raise ArgumentError(f"rows: region of {rows} rows exceeds the layout's {self.rows} rows ({self!r})")
        if cols is None:
            cols = self.cols
        elif type(cols) is not int or cols < 0 or cols > self.cols:
            cols = as_size("cols", cols)
            if cols > self.cols:
                raise ArgumentError(f"cols: region of {cols} cols exceeds the layout's {self.cols} cols ({self!r})")
        return rows, cols

    def footprint(self, rows=None, cols=None) -> tuple[tuple[int, int, int, int], ...]:
        """Element runs ``(start, length, stride, count)`` covering the region ``[0:rows, 0:cols]`` (default:
        all): what an instruction moving that region touches, for the pipe model's access records."""
        rows, cols = self._region(rows, cols)
        return cached_footprint(self._geom, rows, cols, self._pieces)

    # -- data movement (hot path) ---------------------------------------------------------------

    def plan(self, rows: int, cols: int, itemsize: int) -> Plan:
        """The cached copy plan of the region ``[0:rows, 0:cols]`` for ``itemsize``-byte elements."""
        return cached_plan(self._geom, rows, cols, itemsize, self._pieces)

    def read(self, buf: np.ndarray, rows=None, cols=None, *, out: np.ndarray | None = None) -> np.ndarray:
        """Gather the logical region ``[0:rows, 0:cols]`` (default: all) from the flat ``buf``.

        ``buf`` is a 1-D C-contiguous array whose element 0 is the layout origin. Returns a new
        C-contiguous ``(rows, cols)`` array of ``buf.dtype`` (or fills ``out``). Raises
        :class:`OutOfBoundsError` when the region reaches past the end of ``buf``.
        """
        rows, cols = self._region(rows, cols)
        check_buf(buf, writable=False)
        plan = cached_plan(self._geom, rows, cols, buf.itemsize, self._pieces)
        if plan.max_offset >= buf.shape[0]:
            check_bounds(self, plan, buf, "read")
        if out is None:
            out = np.empty((rows, cols), buf.dtype)
        else:
            if not isinstance(out, np.ndarray) or out.shape != (rows, cols):
                raise ArgumentError(
                    f"out: expected an array of shape {(rows, cols)}, got {getattr(out, 'shape', type(out).__name__)}"
                )
            check_dtype(buf, out, "out")
            if not (out.flags.c_contiguous and out.flags.writeable):
                raise ArgumentError("out: expected a writable C-contiguous array")
        return run_read(plan, buf, out)

    def write(self, buf: np.ndarray, nd: np.ndarray) -> None:
        """Scatter ``nd`` (shape ``(r, c)`` with ``r <= rows``, ``c <= cols``) into ``[0:r, 0:c]`` of ``buf``.

        Every element of ``buf`` outside that region is left untouched (CATLASS relies on stale rows).
        ``nd`` must have the dtype of ``buf``: layouts move elements, they never convert them.
        """
        run_write(*self._scatter_plan(buf, nd, fold=True))

    def accumulate(self, buf: np.ndarray, nd: np.ndarray) -> None:
        """``region += nd`` in place for region ``[0:r, 0:c]`` of ``buf`` (an accumulator update, e.g. the
        cube's ``C += A @ B`` in L0C); same rules as :meth:`write`. Integer sums wrap like hardware."""
        run_accumulate(*self._scatter_plan(buf, nd, fold=False))

    def check_fits(self, rows: int, cols: int) -> None:
        """The shape check of :meth:`write`: an ``ArgumentError`` unless a ``rows x cols`` array fits the logical
        shape (for a caller that checks a write it does not make, e.g. a timing-only core)."""
        if rows > self.rows or cols > self.cols:
            raise ArgumentError(f"nd: shape {(rows, cols)} does not fit in the layout's {self.rows}x{self.cols} "
                                f"logical shape ({self!r})")

    def _scatter_plan(self, buf: np.ndarray, nd: np.ndarray, *, fold: bool):
        """Validate a scatter of ``nd`` into ``buf``; return ``(plan, buf, contiguous nd)``."""
        if type(nd) is not np.ndarray:
            nd = np.asarray(nd)
        if nd.ndim != 2:
            raise ArgumentError(f"nd: expected a 2-D array, got shape {nd.shape}")
        r, c = nd.shape
        if r > self.rows or c > self.cols:
            self.check_fits(r, c)
        check_buf(buf, writable=True)
        if nd.dtype != buf.dtype:
            check_dtype(buf, nd, "nd")
        if not nd.flags.c_contiguous:
            nd = np.ascontiguousarray(nd)
        plan = cached_plan(self._geom, r, c, buf.itemsize, self._pieces, fold)
        if plan.max_offset >= buf.shape[0]:
            check_bounds(self, plan, buf, "write")
        return plan, buf, nd

    def pack(self, nd: np.ndarray, *, fill=0) -> np.ndarray:
        """Return a new flat buffer of ``capacity`` elements holding ``nd[r, c]`` at ``offset(r, c)``.

        ``nd`` must have shape ``(rows, cols)``; every other element is ``fill``. The buffer has the
        dtype of ``nd``.
        """
        nd = np.asarray(nd)
        if nd.shape != (self.rows, self.cols):
            raise ArgumentError(f"nd: expected shape {(self.rows, self.cols)} for {self!r}, got {nd.shape}")
        plan = self.plan(self.rows, self.cols, nd.itemsize)
        size = max(self.capacity, plan.max_offset + 1)
        buf = np.full(size, fill, dtype=nd.dtype)
        self.write(buf, nd)
        return buf

    def unpack(self, buf: np.ndarray) -> np.ndarray:
        """Inverse of :meth:`pack`: the ``(rows, cols)`` logical matrix stored in the flat ``buf``."""
        return self.read(buf)
