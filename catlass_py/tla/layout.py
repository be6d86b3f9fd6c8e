"""``Layout``: a function from coordinates to offsets given by a hierarchical shape and stride.

TLA's ``tla::Layout<Shape, Stride, OriginShape>`` (``include/tla/layout.hpp`` of hicann/catlass) is CuTe's
``cute::Layout<Shape, Stride>`` (``include/cute/layout.hpp`` of NVIDIA/cutlass) plus an *origin shape*: a
flat tuple, one extent per top-level mode, holding the logical size of the data the layout describes
(a tail tile, or the unpadded matrix inside a fractal layout). The offset function ignores it; tensors
use it as their logical extent.

This module holds the value type and the questions one asks of it (size, cosize, rank, depth, modes,
evaluation), :func:`make_layout`, and the structural helpers (:func:`select`, :func:`append`,
:func:`zip_layouts`, :func:`coalesce`, :func:`filter_layout`). The algebra lives in
:mod:`~catlass_py.tla.composition`, :mod:`~catlass_py.tla.complement`, :mod:`~catlass_py.tla.divides` and
:mod:`~catlass_py.tla.products`. Results of the algebra carry the default origin shape (TLA defines no
algebra on origin shapes).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from catlass_py.errors import ArgumentError

from . import int_tuple as it
from .int_tuple import congruent, flatten, has_none, is_int, is_tuple, prefix_product, product


def default_origin_shape(shape: Any) -> tuple:
    """TLA's default origin shape: the size of every top-level mode (``(shape,)`` for an integer).

    What ``tla::MakeLayout(shape, stride)`` passes as ``originShape`` (``layout.hpp``). No CuTe counterpart.
    """
    if is_tuple(shape):
        return tuple(product(m) for m in shape)
    return (shape,)


class Layout:
    """A layout: ``shape`` and ``stride`` (congruent int tuples) and a flat ``origin_shape``.

    ``Layout(shape)`` has the compact column-major strides (CuTe's default, pycute ``Layout(shape)``);
    ``Layout(shape, stride, origin_shape)`` is TLA ``MakeLayout(shape, stride, originShape)``. The origin
    shape defaults to the size of each top-level mode. Shapes are non-negative, strides any integers.

    Calling a layout evaluates it (TLA ``Layout::operator()``, CuTe ``Layout::operator()``): an integer is
    a 1-D index split colexicographically over the modes (the last mode unbounded), a tuple a coordinate
    congruent to the shape down to any level; integer numpy arrays evaluate many points at once. A
    coordinate containing ``None`` (CuTe/TLA ``_``) slices instead and returns the layout of the marked
    modes. ``len`` is the rank, indexing and iteration give the top-level modes as layouts (pycute).

    Immutable and hashable; equality compares shape, stride and origin shape.
    """

    __slots__ = ("shape", "stride", "origin_shape", "_hash", "_depth")

    def __init__(self, shape: Any, stride: Any = None, origin_shape: Any = None):
        shape = it.as_int_tuple("shape", shape, minimum=0)
        if stride is None:
            stride = prefix_product(shape)
        else:
            stride = it.as_int_tuple("stride", stride)
            if not congruent(shape, stride):
                raise ArgumentError(f"stride: {stride!r} is not congruent to the shape {shape!r} (same profile needed)")
        if origin_shape is None:
            origin = default_origin_shape(shape)
        else:
            origin = it.as_int_tuple("origin_shape", origin_shape, minimum=0)
            if not is_tuple(origin):
                origin = (origin,)
            if it.depth(origin) > 1 or len(origin) != it.rank(shape):
                raise ArgumentError(
                    f"origin_shape: expected a flat tuple of {it.rank(shape)} extents (one per top-level mode of "
                    f"{shape!r}), got {origin_shape!r}"
                )
        sa = object.__setattr__
        sa(self, "shape", shape)
        sa(self, "stride", stride)
        sa(self, "origin_shape", origin)
        sa(self, "_hash", None)
        sa(self, "_depth", None)

    @classmethod
    def _make(cls, shape, stride, origin=None) -> Layout:
        """Build from already-validated parts (internal fast path)."""
        obj = object.__new__(cls)
        sa = object.__setattr__
        sa(obj, "shape", shape)
        sa(obj, "stride", stride)
        sa(obj, "origin_shape", default_origin_shape(shape) if origin is None else origin)
        sa(obj, "_hash", None)
        sa(obj, "_depth", None)
        return obj

    # -- value semantics ----------------------------------------------------------------------

    def __setattr__(self, name, value):
        raise AttributeError("Layout is immutable; build a new one instead")

    def __delattr__(self, name):
        raise AttributeError("Layout is immutable")

    def __eq__(self, other):
        if not isinstance(other, Layout):
            return NotImplemented
        return (self.shape, self.stride, self.origin_shape) == (other.shape, other.stride, other.origin_shape)

    def __hash__(self):
        h = self._hash
        if h is None:
            h = hash((self.shape, self.stride, self.origin_shape))
            object.__setattr__(self, "_hash", h)
        return h

    def __reduce__(self):
        return (Layout, (self.shape, self.stride, self.origin_shape))

    def __repr__(self):
        if self.origin_shape == default_origin_shape(self.shape):
            return f"Layout({self.shape!r}, {self.stride!r})"
        return f"Layout({self.shape!r}, {self.stride!r}, origin_shape={self.origin_shape!r})"

    def __str__(self):
        """CuTe's print format, ``shape:stride`` without spaces, e.g. ``((16,2),(8,4)):((8,128),(1,256))``."""
        return f"{_fmt(self.shape)}:{_fmt(self.stride)}"

    # -- structure ----------------------------------------------------------------------------

    def __len__(self) -> int:
        return it.rank(self.shape)

    def __getitem__(self, i: int) -> Layout:
        """Top-level mode ``i`` as a layout (CuTe ``layout<I>``, pycute ``Layout.__getitem__``)."""
        n = len(self)
        if not is_int(i) or not -n <= int(i) < n:
            raise ArgumentError(f"mode: expected an integer in [0, {n}) for a rank-{n} layout, got {i!r}")
        if not is_tuple(self.shape):
            return self
        return Layout._make(self.shape[int(i)], self.stride[int(i)])

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    @property
    def rank(self) -> int:
        """Number of top-level modes (TLA ``Layout::rank``, CuTe ``rank``)."""
        return it.rank(self.shape)

    @property
    def depth(self) -> int:
        """Nesting depth of the shape (TLA ``Layout::depth``, CuTe ``depth``)."""
        d = self._depth
        if d is None:
            d = it.depth(self.shape)
            object.__setattr__(self, "_depth", d)
        return d

    def size(self) -> int:
        """Size of the domain: the product of the shape (CuTe ``size``, pycute ``Layout.size``)."""
        return product(self.shape)

    def cosize(self) -> int:
        """Size of the codomain: ``layout(size - 1) + 1``, 0 for an empty layout (CuTe ``cosize``)."""
        n = self.size()
        return 0 if n == 0 else self._eval(n - 1) + 1

    # -- evaluation ---------------------------------------------------------------------------

    def _eval(self, crd):
        return it._crd2idx(crd, self.shape, self.stride)

    def __call__(self, *args):
        if not args:
            raise ArgumentError("coord: a layout is called with a coordinate, got nothing")
        crd = args[0] if len(args) == 1 else tuple(args)
        if has_none(crd):
            return slice_layout(self, crd)
        return self._eval(it.as_coord("coord", crd))


def _fmt(t: Any) -> str:
    if is_tuple(t):
        return "(" + ",".join(_fmt(x) for x in t) + ")"
    return str(t)


def is_layout(x: Any) -> bool:
    """True for a :class:`Layout` (TLA ``is_layout``, pycute ``is_layout``)."""
    return isinstance(x, Layout)


def as_layout(name: str, x: Any) -> Layout:
    """``x`` when it is a :class:`Layout`, else :class:`ArgumentError` naming ``name``."""
    if not isinstance(x, Layout):
        raise ArgumentError(f"{name}: expected a tla.Layout, got {type(x).__name__} {it._describe(x)}")
    return x


# ---------------------------------------------------------------------------------------------------
# construction


def make_layout(*args: Any, stride: Any = None, origin_shape: Any = None) -> Layout:
    """Make a layout.

    * ``make_layout(shape[, stride[, origin_shape]])`` — TLA ``MakeLayout(shape, stride[, originShape])``
      and ``MakeLayout(len)`` (``include/tla/layout.hpp``), CuTe ``make_layout(shape[, stride])``. The stride
      defaults to compact column-major (CuTe ``LayoutLeft``).
    * ``make_layout(layout0, layout1, ...)`` — CuTe ``make_layout(layouts...)``: the concatenation, one
      top-level mode per argument. Its origin shape collects the arguments' extents when every argument
      has an integer shape, else it is the default.

    The TLA makers for Ascend formats (``MakeLayout<Element, LayoutTag>(rows, cols)``) are
    :func:`catlass_py.tla.make_layout_tag`.
    """
    if args and all(isinstance(a, Layout) for a in args):
        if stride is not None or origin_shape is not None:
            raise ArgumentError("stride: make_layout(layouts...) concatenates layouts and takes no stride/origin_shape")
        return _concat(args)
    if len(args) == 1 and isinstance(args[0], list) and args[0] and all(isinstance(a, Layout) for a in args[0]):
        return _concat(tuple(args[0]))
    if not 1 <= len(args) <= 3:
        raise ArgumentError(f"shape: make_layout takes (shape[, stride[, origin_shape]]) or layouts, got {len(args)} args")
    if any(isinstance(a, Layout) for a in args):
        raise ArgumentError("shape: make_layout takes either only layouts or (shape, stride, origin_shape), not a mix")
    if len(args) >= 2:
        if stride is not None:
            raise ArgumentError("stride: given both positionally and by keyword")
        stride = args[1]
    if len(args) == 3:
        if origin_shape is not None:
            raise ArgumentError("origin_shape: given both positionally and by keyword")
        origin_shape = args[2]
    return Layout(args[0], stride, origin_shape)


def _concat(layouts: tuple) -> Layout:
    shape = tuple(a.shape for a in layouts)
    stride = tuple(a.stride for a in layouts)
    if all(not is_tuple(a.shape) for a in layouts):
        origin = tuple(a.origin_shape[0] for a in layouts)
    else:
        origin = None
    return Layout._make(shape, stride, origin)


# ---------------------------------------------------------------------------------------------------
# accessors (layouts or int tuples)


def _shape_of(x: Any, what: str = "x"):
    if isinstance(x, Layout):
        return x.shape
    return it.as_int_tuple(what, x)


def shape(x: Any, *index: int) -> Any:
    """The shape of a layout, or of the mode at path ``index`` (TLA ``shape<I...>``, CuTe ``shape<I...>``).

    An int tuple is its own shape.
    """
    return it.get(_shape_of(x), *index)


def stride(layout: Layout, *index: int) -> Any:
    """The stride of ``layout``, or of the mode at path ``index`` (TLA ``stride<I...>``, CuTe ``stride<I...>``)."""
    return it.get(as_layout("layout", layout).stride, *index)


def origin_shape(layout: Layout, *index: int) -> Any:
    """The origin shape of ``layout``, or its entry ``index`` (TLA ``originShape<I...>``; no CuTe counterpart)."""
    return it.get(as_layout("layout", layout).origin_shape, *index)


def size(x: Any, *index: int) -> int:
    """Size of a layout's domain or an int tuple's product, optionally of the mode at path ``index``.

    CuTe ``size<I...>``; TLA ``Product``. pycute ``size``.
    """
    return product(it.get(_shape_of(x), *index))


def cosize(layout: Layout, *index: int) -> int:
    """Size of the codomain of ``layout`` or of its mode at path ``index`` (CuTe ``cosize``)."""
    layout = as_layout("layout", layout)
    return get(layout, *index).cosize() if index else layout.cosize()


def rank(x: Any, *index: int) -> int:
    """Rank of a layout or int tuple, optionally of the mode at path ``index`` (TLA/CuTe ``rank<I...>``)."""
    return it.rank(it.get(_shape_of(x), *index))


def depth(x: Any, *index: int) -> int:
    """Depth of a layout or int tuple, optionally of the mode at path ``index`` (TLA/CuTe ``depth<I...>``)."""
    return it.depth(it.get(_shape_of(x), *index))


def get(x: Any, *index: int) -> Any:
    """The mode at path ``index``: a sub-layout of a layout (CuTe ``get<I...>``/``layout<I...>``) or the
    sub-tuple of an int tuple (TLA ``get<I...>``). ``get(x)`` is ``x``.
    """
    if not isinstance(x, Layout):
        return it.get(x, *index)
    if not index:
        return x
    return Layout._make(it.get(x.shape, *index), it.get(x.stride, *index))


def select(x: Any, *modes: int) -> Any:
    """The top-level ``modes`` of ``x``, in the given order, as a new layout or tuple.

    For a layout the origin shape keeps the matching entries (TLA ``detail::select_layout`` in
    ``tensor.hpp``); CuTe ``select<I...>``.
    """
    if isinstance(x, Layout):
        n = x.rank
        for m in modes:
            if not is_int(m) or not 0 <= m < n:
                raise ArgumentError(f"modes: expected mode numbers in [0, {n}), got {modes!r}")
        if not is_tuple(x.shape):
            return Layout._make(tuple(x.shape for _ in modes), tuple(x.stride for _ in modes),
                                tuple(x.origin_shape[0] for _ in modes))
        return Layout._make(
            tuple(x.shape[m] for m in modes),
            tuple(x.stride[m] for m in modes),
            tuple(x.origin_shape[m] for m in modes),
        )
    t = x if is_tuple(x) else (x,)
    for m in modes:
        if not is_int(m) or not 0 <= m < len(t):
            raise ArgumentError(f"modes: expected mode numbers in [0, {len(t)}), got {modes!r}")
    return tuple(t[m] for m in modes)


def take(layout: Layout, begin: int, end: int) -> Layout:
    """Top-level modes ``begin .. end-1`` of ``layout`` (CuTe ``take<B, E>``)."""
    layout = as_layout("layout", layout)
    return select(layout, *range(begin, end))


def append(layout: Layout, n: int, extra: Layout | None = None) -> Layout:
    """``layout`` extended to rank ``n`` with copies of ``extra`` (default ``1:0``) as new top-level modes.

    CuTe ``append<N>(layout, x)`` (``layout.hpp``). A rank-1 layout with an integer shape becomes a tuple.
    """
    layout = as_layout("layout", layout)
    extra = Layout._make(1, 0) if extra is None else as_layout("extra", extra)
    r = layout.rank
    if n < r:
        raise ArgumentError(f"n: append cannot shrink a rank-{r} layout to rank {n}")
    modes = list(layout) + [extra] * (n - r)
    if n == 1 and r == 1 and not is_tuple(layout.shape):
        return layout
    return Layout._make(tuple(m.shape for m in modes), tuple(m.stride for m in modes))


def zip_layouts(a: Layout, b: Layout) -> Layout:
    """Pair the top-level modes of ``a`` and ``b``: mode ``i`` of the result is ``(a[i], b[i])``.

    CuTe ``zip(layoutA, layoutB)`` (``layout.hpp``); the ranks must agree.
    """
    a = as_layout("a", a)
    b = as_layout("b", b)
    if a.rank != b.rank:
        raise ArgumentError(f"b: zip needs equal ranks, got {a.rank} ({a}) and {b.rank} ({b})")
    return Layout._make(
        tuple((x.shape, y.shape) for x, y in zip(a, b)),
        tuple((x.stride, y.stride) for x, y in zip(a, b)),
    )


def slice_layout(layout: Layout, crd: Any) -> Layout:
    """The layout of the modes ``crd`` marks with ``None`` (CuTe ``slice(crd, layout)``, pycute
    ``Layout.__call__`` with ``None``). A flat coordinate of the layout's rank keeps the matching origin
    entries, as TLA's underscore slicing does (``slice_and_offset`` in ``tensor.hpp``).
    """
    layout = as_layout("layout", layout)
    if not is_tuple(layout.shape) and is_tuple(crd) and len(crd) == 1:
        crd = crd[0]  # a rank-1 layout with an integer shape takes a 1-tuple coordinate as well
        origin = layout.origin_shape if crd is None else ()
        return Layout._make(it.slice_(crd, layout.shape), it.slice_(crd, layout.stride), origin)
    shp = it.slice_(crd, layout.shape)
    std = it.slice_(crd, layout.stride)
    origin = None
    if is_tuple(crd) and is_tuple(layout.shape) and len(crd) == len(layout.shape) and it.depth(crd) <= 1:
        origin = tuple(o for c, o in zip(crd, layout.origin_shape) if c is None)
    return Layout._make(shp, std, origin)


def slice_and_offset(crd: Any, layout: Layout, base_coord: Any = None) -> tuple[Layout, int]:
    """``(slice_layout(layout, crd), offset)``: the layout of the modes ``crd`` marks with ``None`` and the
    offset of their first element, ``layout(base_coord + crd)`` with ``None`` read as 0.

    TLA ``slice_and_offset(coord, layout[, baseCoord])`` (``include/tla/tensor.hpp``; flat coordinates of
    the layout's rank, the origin entries of the marked modes kept), CuTe/pycute ``slice_and_offset``
    (hierarchical coordinates, no base). ``base_coord`` needs a flat ``crd`` of the layout's rank. As in
    TLA, the whole base goes into the offset and the marked modes restart at coordinate 0: for a fractal
    layout that equals evaluating at ``base_coord + crd`` when the base of the marked modes sits on fractal
    boundaries.
    """
    layout = as_layout("layout", layout)
    fixed = it.zero_none(crd)
    if base_coord is not None:
        base = it.as_int_tuple("base_coord", base_coord, minimum=0)
        flat_ok = is_tuple(crd) and len(crd) == layout.rank and it.depth(fixed) <= 1
        if not flat_ok or not is_tuple(base) or len(base) != layout.rank or it.depth(base) != 1:
            raise ArgumentError(
                f"base_coord: needs a flat coordinate and base of {layout.rank} entries each, got {crd!r} and {base_coord!r}"
            )
        fixed = it.add(base, fixed)
    if not is_tuple(layout.shape) and is_tuple(fixed) and len(fixed) == 1:
        fixed = fixed[0]
    return slice_layout(layout, crd), layout._eval(it.as_coord("coord", fixed))


# ---------------------------------------------------------------------------------------------------
# vectorised evaluation


def offsets(layout: Layout) -> np.ndarray:
    """int64 array of ``layout`` evaluated on its whole domain, one axis per top-level mode.

    Entry ``[i0, i1, ...]`` is ``layout((i0, i1, ...))`` with ``ik`` a 1-D index into mode ``k``; a rank-1
    layout gives a 1-D array of ``layout(i)``. No TLA/CuTe counterpart (the vectorised form of evaluating
    a layout at every coordinate).
    """
    layout = as_layout("layout", layout)
    if not is_tuple(layout.shape):
        return np.asarray(layout._eval(np.arange(layout.shape, dtype=np.int64)), dtype=np.int64)
    n = len(layout.shape)
    sizes = tuple(product(m) for m in layout.shape)
    total = np.zeros(sizes, dtype=np.int64)
    for k, (s, d) in enumerate(zip(layout.shape, layout.stride)):
        idx = np.arange(sizes[k], dtype=np.int64)
        vals = np.asarray(it._crd2idx(idx, s, d), dtype=np.int64) if sizes[k] else idx
        total += vals.reshape(tuple(sizes[k] if j == k else 1 for j in range(n)))
    return total


# ---------------------------------------------------------------------------------------------------
# coalesce and filter


def _coalesce_flat(shapes, strides) -> Layout:
    rs, rd = [1], [0]
    for s, d in zip(shapes, strides):
        if s == 1:
            continue
        if rs[-1] == 1:
            rs[-1], rd[-1] = s, d
        elif rs[-1] * rd[-1] == d:
            rs[-1] *= s
        else:
            rs.append(s)
            rd.append(d)
    if len(rs) == 1:
        return Layout._make(rs[0], rd[0])
    return Layout._make(tuple(rs), tuple(rd))


def coalesce(layout: Layout, profile: Any = None) -> Layout:
    """Merge modes while keeping the function: same size, same value at every index ``< size``.

    Size-1 modes are dropped and a mode ``s1:d1`` following ``s0:d0`` with ``d1 == s0 * d0`` merges into
    ``s0*s1:d0``; the result has depth <= 1 (``1:0`` when nothing remains). With a tuple ``profile`` the
    first ``len(profile)`` modes are coalesced each against their entry of ``profile`` and the rest kept
    (by-mode coalesce). CuTe ``coalesce(layout[, trg_profile])`` (``layout.hpp``), pycute ``coalesce``;
    TLA has none.
    """
    layout = as_layout("layout", layout)
    if is_tuple(profile):
        if len(profile) > layout.rank:
            raise ArgumentError(f"profile: {profile!r} has more modes than the rank-{layout.rank} layout {layout}")
        modes = list(layout)
        parts = [coalesce(modes[i], profile[i]) for i in range(len(profile))] + modes[len(profile):]
        return Layout._make(tuple(m.shape for m in parts), tuple(m.stride for m in parts))
    return _coalesce_flat(flatten(layout.shape), flatten(layout.stride))


def coalesce_x(layout: Layout) -> Layout:
    """Like :func:`coalesce` but keeps the function beyond the domain too (a trailing size-1 mode of any
    stride is kept as a size-2 mode so the unbounded last mode still has that stride).

    CuTe ``detail::coalesce_x`` (``layout.hpp``); composition starts from it.
    """
    layout = as_layout("layout", layout)
    shapes = list(flatten(layout.shape))
    strides = list(flatten(layout.stride))
    if shapes and shapes[-1] == 1:
        shapes[-1] = 2
    return _coalesce_flat(shapes, strides)


def filter_zeros(layout: Layout) -> Layout:
    """``layout`` with every stride-0 mode's size set to 1 (CuTe ``filter_zeros``)."""
    layout = as_layout("layout", layout)

    def go(s, d):
        if is_tuple(s):
            return tuple(go(x, y) for x, y in zip(s, d))
        return 1 if d == 0 else s

    return Layout._make(go(layout.shape, layout.stride), layout.stride)


def filter_layout(layout: Layout, profile: Any = None) -> Layout:
    """Drop stride-0 and size-1 modes and coalesce (``1:0`` when nothing is left); by mode with a tuple
    ``profile``. CuTe ``filter`` (``layout.hpp``), pycute ``filter``.
    """
    layout = as_layout("layout", layout)
    if is_tuple(profile):
        if len(profile) > layout.rank:
            raise ArgumentError(f"profile: {profile!r} has more modes than the rank-{layout.rank} layout {layout}")
        modes = list(layout)
        parts = [filter_layout(modes[i], profile[i]) for i in range(len(profile))] + modes[len(profile):]
        return Layout._make(tuple(m.shape for m in parts), tuple(m.stride for m in parts))
    return coalesce(filter_zeros(layout))


__all__ = [
    "Layout",
    "append",
    "as_layout",
    "coalesce",
    "coalesce_x",
    "cosize",
    "default_origin_shape",
    "depth",
    "filter_layout",
    "filter_zeros",
    "get",
    "is_layout",
    "make_layout",
    "offsets",
    "origin_shape",
    "rank",
    "select",
    "shape",
    "size",
    "slice_and_offset",
    "slice_layout",
    "stride",
    "take",
    "zip_layouts",
]
