"""``Tensor``: a flat buffer, a layout over it and the coordinate of the tensor's origin.

TLA's ``tla::Tensor<BuiltinTensor, Layout, Coord, Position>`` (``include/tla/tensor.hpp`` of hicann/catlass)
is an AscendC ``GlobalTensor``/``LocalTensor`` (the *builtin tensor*: a typed address in one memory), a
TLA layout, an element coordinate and the memory position. Element ``c`` lives at
``data[layout(coord + c)]``: tiles keep their parent's strides and carry their place in ``coord``, so a
fractal layout is always evaluated at absolute coordinates. CuTe's ``cute::Tensor`` (``tensor_impl.hpp``
of NVIDIA/cutlass) is an engine and a layout without the coordinate.

Here the builtin tensor is a 1-D numpy array ``data`` plus an element ``offset`` into it (AscendC's
``tensor[offset]``), so tests and tools can check where every element lands. Nothing here touches the
simulator: a kernel wraps a simulated buffer's numpy view the same way.

Functions: :func:`make_tensor` (``MakeTensor``), :func:`get_tile` (``GetTile``), :func:`tile_view`
(``TileView``), :func:`make_tensor_like` (``MakeTensorLike``), :func:`local_tile` (CuTe ``local_tile``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from catlass_py.errors import ArgumentError, OutOfBoundsError
from catlass_py.numerics import get_dtype

from . import int_tuple as it
from .divides import zipped_divide
from .int_tuple import add, has_none, is_int, is_tuple, product, zero_none
from .layout import Layout, as_layout, slice_and_offset
from .makers import _flat, get_tile_layout, make_layout_tag

#: memory positions, as ``Catlass::Arch::Position*`` names them (AscendC: GM, A1, A2, B2, CO1, C2, VECCALC)
POSITIONS = ("GM", "L1", "L0A", "L0B", "L0C", "Bias", "UB")
_POSITION_BY_KEY = {p.upper(): p for p in POSITIONS}


def _position(value: Any) -> str:
    p = _POSITION_BY_KEY.get(value.upper()) if isinstance(value, str) else None
    if p is None:
        raise ArgumentError(f"position: expected one of {POSITIONS}, got {value!r}")
    return p


def _check_data(data: Any) -> np.ndarray:
    if not isinstance(data, np.ndarray) or data.ndim != 1:
        shape = getattr(data, "shape", None)
        raise ArgumentError(
            f"data: expected a 1-D numpy array (the buffer), got {type(data).__name__}"
            + (f" of shape {shape}" if shape is not None else "")
        )
    return data


class Tensor:
    """A TLA tensor: ``data`` (1-D numpy array), element ``offset`` into it, ``layout``, ``coord`` and
    ``position``.

    ``tensor(c0, c1, ...)`` reads element ``data[offset + layout(coord + c)]`` (TLA ``Tensor::operator()``);
    a coordinate containing ``None`` (TLA ``_``) returns the sub-tensor of the marked modes, starting at the
    fixed ones. :meth:`offsets`, :meth:`read` and :meth:`write` address every logical element at once
    (the layout's origin shape). Immutable (the buffer's contents are not).

    ``builtin`` is the device tensor ``data`` views, when there is one (TLA's ``Tensor::data()``, an AscendC
    ``GlobalTensor``/``LocalTensor``; a simulated GM or on-chip tensor in :mod:`catlass_py.tile.copy_tla`): tiles
    and slices keep it, so an instruction can name the memory it touches. None for a plain numpy buffer.
    """

    __slots__ = ("data", "offset", "layout", "coord", "position", "builtin")

    def __init__(self, data: Any, layout: Layout, coord: Any = None, position: str = "GM", offset: int = 0,
                 builtin: Any = None):
        data = _check_data(data)
        layout = as_layout("layout", layout)
        if coord is None:
            coord = (0,) * layout.rank
        else:
            coord = it.as_int_tuple("coord", coord, minimum=0)
            if not is_tuple(coord) or it.depth(coord) != 1 or len(coord) != layout.rank:
                raise ArgumentError(
                    f"coord: expected a flat tuple of {layout.rank} non-negative integers (one per mode of {layout}), "
                    f"got {coord!r}"
                )
        if not is_int(offset) or not 0 <= offset <= data.shape[0]:
            raise ArgumentError(f"offset: expected an element offset in [0, {data.shape[0]}], got {offset!r}")
        sa = object.__setattr__
        sa(self, "data", data)
        sa(self, "offset", int(offset))
        sa(self, "layout", layout)
        sa(self, "coord", coord)
        sa(self, "position", _position(position))
        sa(self, "builtin", builtin)

    @classmethod
    def _make(cls, data, layout, coord, position, offset, builtin=None) -> Tensor:
        obj = object.__new__(cls)
        sa = object.__setattr__
        sa(obj, "data", data)
        sa(obj, "offset", offset)
        sa(obj, "layout", layout)
        sa(obj, "coord", coord)
        sa(obj, "position", position)
        sa(obj, "builtin", builtin)
        return obj

    def __setattr__(self, name, value):
        raise AttributeError("Tensor is immutable; build a new one instead")

    def __repr__(self):
        return (
            f"Tensor({self.position}, {self.data.dtype}[{self.data.shape[0]}] + {self.offset}, {self.layout}, "
            f"origin_shape={self.layout.origin_shape}, coord={self.coord})"
        )

    # -- accessors (TLA Tensor::shape/stride/originShape) ---------------------------------------

    @property
    def rank(self) -> int:
        """Number of top-level modes (TLA ``Tensor::rank``)."""
        return self.layout.rank

    @property
    def shape(self):
        """The layout's shape (TLA ``Tensor::shape``)."""
        return self.layout.shape

    @property
    def stride(self):
        """The layout's stride (TLA ``Tensor::stride``)."""
        return self.layout.stride

    @property
    def origin_shape(self) -> tuple:
        """The logical extent, one entry per mode (TLA ``Tensor::originShape``)."""
        return self.layout.origin_shape

    @property
    def dtype(self) -> np.dtype:
        """numpy dtype of the buffer (TLA ``Tensor::Element``)."""
        return self.data.dtype

    # -- element access -----------------------------------------------------------------------

    def _full(self, crd: tuple) -> tuple:
        if len(crd) != self.rank:
            raise ArgumentError(
                f"coord: a rank-{self.rank} tensor takes {self.rank} coordinates (one per mode), got {crd!r}"
            )
        return add(self.coord, crd)

    def index(self, *crd: Any) -> int:
        """The position in ``data`` of element ``crd``: ``offset + layout(coord + crd)``."""
        crd = crd[0] if len(crd) == 1 and is_tuple(crd[0]) else crd
        crd = it.as_int_tuple("coord", tuple(crd), minimum=0)
        if it.depth(crd) != 1:
            raise ArgumentError(f"coord: a tensor takes a flat coordinate (one integer per mode), got {crd!r}")
        full = self._full(crd)
        return self.offset + self.layout._eval(full if is_tuple(self.layout.shape) else full[0])

    def _checked(self, idx: int) -> int:
        if not 0 <= idx < self.data.shape[0]:
            raise OutOfBoundsError(
                f"coord: element at data[{idx}] lies outside the {self.data.shape[0]}-element buffer ({self!r})"
            )
        return idx

    def __call__(self, *crd: Any):
        """Element ``crd`` (a scalar), or with ``None`` in ``crd`` the sub-tensor of the marked modes.

        TLA ``Tensor::operator()``: coordinates are flat, one entry per mode; a rank-1 tensor also takes
        a plain integer.
        """
        if not crd:
            raise ArgumentError("coord: a tensor is called with a coordinate, got nothing")
        if len(crd) == 1 and is_tuple(crd[0]):
            crd = crd[0]
        if has_none(crd):
            if any(is_tuple(c) for c in crd):
                raise ArgumentError(
                    f"coord: a tensor slices with a flat coordinate (one integer or None per mode), got {crd!r}"
                )
            sub, off = slice_and_offset(tuple(crd), self.layout, self.coord)
            return Tensor._make(self.data, sub, (0,) * sub.rank, self.position, self._checked_offset(self.offset + off),
                                self.builtin)
        return self.data[self._checked(self.index(*crd))]

    def _checked_offset(self, off: int) -> int:
        if not 0 <= off <= self.data.shape[0]:
            raise OutOfBoundsError(f"coord: the sub-tensor starts at data[{off}], outside the {self.data.shape[0]}-element buffer")
        return off

    def set(self, crd: Any, value: Any) -> None:
        """Write ``value`` to element ``crd`` (a flat coordinate tuple) of the buffer."""
        if not is_tuple(crd):
            crd = (crd,)
        self.data[self._checked(self.index(*crd))] = value

    # -- vectorised access ------------------------------------------------------------------------

    def offsets(self) -> np.ndarray:
        """int64 array of shape ``origin_shape``: the position in ``data`` of every logical element.

        Entry ``[c0, c1, ...]`` is ``offset + layout(coord + (c0, c1, ...))`` (no TLA counterpart; the
        vectorised form of ``Tensor::operator()``).
        """
        lay = self.layout
        origin = lay.origin_shape
        modes = [(lay.shape, lay.stride)] if not is_tuple(lay.shape) else list(zip(lay.shape, lay.stride))
        n = len(origin)
        total = np.full(origin, self.offset, dtype=np.int64)
        for k, ((s, d), c, o) in enumerate(zip(modes, self.coord, origin)):
            idx = np.arange(c, c + o, dtype=np.int64)
            vals = np.asarray(it._crd2idx(idx, s, d), dtype=np.int64) if o else idx
            total += vals.reshape(tuple(o if j == k else 1 for j in range(n)))
        return total

    def _gather_index(self) -> np.ndarray:
        idx = self.offsets()
        if idx.size and (idx.min() < 0 or idx.max() >= self.data.shape[0]):
            bad = int(idx.max()) if idx.max() >= self.data.shape[0] else int(idx.min())
            raise OutOfBoundsError(
                f"layout: the tensor reaches data[{bad}] but the buffer holds {self.data.shape[0]} elements ({self!r})"
            )
        return idx

    def read(self) -> np.ndarray:
        """A new array of shape ``origin_shape`` holding every logical element (gather)."""
        return self.data[self._gather_index()]

    def write(self, values: Any) -> None:
        """Store ``values`` (shape ``origin_shape``, the buffer's dtype) at every logical element (scatter).

        Elements outside the origin shape stay untouched. Values are never converted: a dtype other than
        the buffer's raises :class:`~catlass_py.errors.ArgumentError`.
        """
        values = np.asarray(values)
        if values.shape != tuple(self.origin_shape):
            raise ArgumentError(f"values: expected shape {tuple(self.origin_shape)}, got {values.shape}")
        if values.dtype != self.data.dtype:
            raise ArgumentError(
                f"values: dtype {values.dtype} differs from the buffer dtype {self.data.dtype}; tensors move "
                "elements and never convert them (cast first)"
            )
        if not self.data.flags.writeable:
            raise ArgumentError("data: the buffer is read-only")
        self.data[self._gather_index()] = values


# ---------------------------------------------------------------------------------------------------
# makers and tiling


def make_tensor(data: Any, layout: Layout, position: str = "GM", coord: Any = None, *, offset: int = 0,
                builtin: Any = None) -> Tensor:
    """A tensor over ``data`` (1-D numpy array) starting at element ``offset``, with ``layout``.

    TLA ``MakeTensor(builtinTensor, layout[, coord], Position)`` (``include/tla/tensor.hpp``), CuTe
    ``make_tensor(engine, layout)``. ``coord`` defaults to zeros; ``position`` is one of :data:`POSITIONS`;
    ``builtin`` the device tensor ``data`` views (see :class:`Tensor`).
    """
    return Tensor(data, layout, coord, position, offset, builtin)


def get_tile(tensor: Tensor, coord: Any, shape: Any) -> Tensor:
    """The ``shape`` tile at element coordinate ``coord`` of ``tensor`` (relative to its origin).

    Same buffer and offset; layout :func:`~catlass_py.tla.makers.get_tile_layout` (the tail tile's
    logical size in its origin shape), coordinate ``tensor.coord + coord``. TLA ``GetTile(tensor, coord,
    shape)`` (``include/tla/tensor.hpp``).
    """
    if not isinstance(tensor, Tensor):
        raise ArgumentError(f"tensor: expected a tla.Tensor, got {type(tensor).__name__}")
    coord = _flat("coord", coord, tensor.rank)
    shape = _flat("shape", shape, tensor.rank)
    layout = get_tile_layout(tensor.layout, shape, coord)
    return Tensor._make(tensor.data, layout, add(tensor.coord, coord), tensor.position, tensor.offset, tensor.builtin)


def tile_view(tensor: Tensor, tile_coord: Any, tile_shape: Any) -> Tensor:
    """Tile number ``tile_coord`` of ``tile_shape`` tiles: ``get_tile(tensor, tile_coord * tile_shape,
    tile_shape)`` (element-wise product). TLA ``TileView`` (``include/tla/tensor.hpp``); CuTe's closest
    relative is ``local_tile``.
    """
    if not isinstance(tensor, Tensor):
        raise ArgumentError(f"tensor: expected a tla.Tensor, got {type(tensor).__name__}")
    tc = _flat("tile_coord", tile_coord, tensor.rank)
    ts = _flat("tile_shape", tile_shape, tensor.rank)
    return get_tile(tensor, tuple(c * s for c, s in zip(tc, ts)), ts)


def make_tensor_like(
    tag: Any, data: Any, like: Tensor, position: str = "GM", *, dtype: Any = None, layout_base: Layout | None = None
) -> Tensor:
    """A tensor over ``data`` for the logical extent of ``like`` in the format ``tag``.

    Without ``layout_base`` the layout is ``make_layout_tag(dtype, tag, *like.origin_shape)`` (a rank-1
    ``like`` gives a vector); with it, ``layout_base``'s shape and stride with ``like``'s origin shape.
    ``dtype`` (TLA's ``ElementDst``) defaults to ``like``'s and must match ``data``. TLA
    ``MakeTensorLike<LayoutTagDst[, ElementDst]>(builtinTensor, likeTensor, Position[, layoutBase])``
    (``include/tla/tensor.hpp``).
    """
    if not isinstance(like, Tensor):
        raise ArgumentError(f"like: expected a tla.Tensor, got {type(like).__name__}")
    data = _check_data(data)
    if like.rank not in (1, 2):
        raise ArgumentError(f"like: make_tensor_like takes a rank-1 or rank-2 tensor, got rank {like.rank}")
    if dtype is None:
        if data.dtype != like.data.dtype:
            raise ArgumentError(
                f"dtype: data holds {data.dtype} but like holds {like.data.dtype}; pass dtype= (TLA's ElementDst)"
            )
        dt = get_dtype(like.data.dtype)
    else:
        dt = get_dtype(dtype)
        if dt.numpy != data.dtype:
            raise ArgumentError(f"dtype: {dt.name} is stored as {dt.numpy}, but data holds {data.dtype}")
    if layout_base is not None:
        base = as_layout("layout_base", layout_base)
        if base.rank != like.rank:
            raise ArgumentError(f"layout_base: rank {base.rank} differs from like's rank {like.rank}")
        layout = Layout._make(base.shape, base.stride, like.origin_shape)
    elif like.rank == 1:
        layout = make_layout_tag(dt, "VectorLayout", 1, like.origin_shape[0])
    else:
        layout = make_layout_tag(dt, tag, *like.origin_shape)
    return Tensor._make(data, layout, (0,) * layout.rank, _position(position), 0)


def _fold_coord(tensor: Tensor) -> tuple[int, Layout]:
    """``(offset, layout)`` with ``data[offset + layout(c)] == tensor(c)`` on the layout's whole domain."""
    if not any(tensor.coord):
        return tensor.offset, tensor.layout
    lay = tensor.layout
    modes = [(lay.shape, lay.stride)] if not is_tuple(lay.shape) else list(zip(lay.shape, lay.stride))
    base = 0
    for (s, d), c in zip(modes, tensor.coord):
        n = product(s)
        idx = np.arange(n, dtype=np.int64)
        shifted = np.asarray(it._crd2idx(idx + c, s, d)) - it._crd2idx(c, s, d)
        plain = np.asarray(it._crd2idx(idx, s, d))
        if not np.array_equal(shifted, plain):
            raise ArgumentError(
                f"tensor: its coord {tensor.coord} does not sit on the mode boundaries of {lay}, so the tile cannot "
                "be re-based for CuTe-style tiling; use get_tile/tile_view"
            )
        base += it._crd2idx(c, s, d)
    return tensor.offset + base, lay


def local_tile(tensor: Tensor, tiler: Any, coord: Any) -> Tensor:
    """Tile ``tensor`` by ``tiler`` and keep the tile at ``coord`` of the remainder.

    ``zipped_divide(tensor.layout, tiler)`` sliced at ``(_, coord)``: the result's layout is the tile
    (followed by any modes the tiler did not reach when ``coord`` is a tuple), its offset the tile's first
    element. CuTe ``local_tile(tensor, tiler, coord)`` (``include/cute/tensor_impl.hpp``); TLA writes the
    same with ``TileView`` (:func:`tile_view`), which also clips the tail tile's origin shape. A tensor
    with a non-zero ``coord`` is re-based first (exact when the coordinate sits on mode boundaries;
    :class:`~catlass_py.errors.ArgumentError` otherwise).
    """
    if not isinstance(tensor, Tensor):
        raise ArgumentError(f"tensor: expected a tla.Tensor, got {type(tensor).__name__}")
    offset, layout = _fold_coord(tensor)
    z = zipped_divide(layout, tiler)
    tile, rest = z[0], z[1]
    kept: list = []
    if is_tuple(coord):
        if len(coord) > rest.rank:
            raise ArgumentError(f"coord: {coord!r} has more modes than the {rest.rank} tile-grid modes of {z}")
        full = tuple(coord) + (None,) * (rest.rank - len(coord))
        if any(c is not None and has_none(c) for c in full):
            raise ArgumentError(f"coord: None may only stand for a whole top-level mode, got {coord!r}")
        kept = [rest[i] for i, c in enumerate(full) if c is None]
        fixed = zero_none(full)
        off = rest._eval(it.as_coord("coord", fixed if is_tuple(rest.shape) else fixed[0]))
    else:
        off = rest._eval(it.as_coord("coord", coord))
    parts = list(tile) + kept
    out = Layout._make(tuple(p.shape for p in parts), tuple(p.stride for p in parts))
    return Tensor._make(tensor.data, out, (0,) * out.rank, tensor.position, offset + off, tensor.builtin)


__all__ = [
    "POSITIONS",
    "Tensor",
    "get_tile",
    "local_tile",
    "make_tensor",
    "make_tensor_like",
    "tile_view",
]
