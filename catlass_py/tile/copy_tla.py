"""The TLA tile copies and the TLA Mmad: tile operations whose operands are :class:`catlass_py.tla.Tensor`.

CATLASS 2.x moves tiles with ``Gemm::Tile::TileCopyTla<ArchTag, TensorSrc, TensorDst>``, specialised on the
positions and the TLA layouts of the two tensors (``include/catlass/gemm/tile/atlasa2/copy_gm_to_l1.hpp``,
``copy_l1_to_l0a.hpp``, ``copy_l1_to_l0b.hpp``, ``copy_l0c_to_gm.hpp``; the bundle
``Gemm::Tile::PackedTileCopyTla`` in ``gemm/tile/tile_copy.hpp``) and multiplies with
``Gemm::Tile::TileMmadTla`` (``gemm/tile/tile_mmad.hpp``). Each instruction addresses its operands as
``tensor.data()[tensor.layout()(tensor.coord())]`` and takes its extents from the tensors' origin shapes and
strides.

Here a device tensor is a TLA tensor over a simulated tensor (:func:`make_tensor`): ``data`` is the numpy view
of the simulated tensor from its pointer on, ``builtin`` the simulated tensor itself (TLA's ``data()``), so an
instruction gathers and scatters its region through the TLA layouts (numpy fancy indexing over the offsets of
the region, :meth:`catlass_py.tla.Tensor.offsets`) and declares the bytes it touches on the simulated memory
(runs of consecutive elements derived from the same offsets, cached by layout and extent).

On a core of a timing-only launch (``LaunchParams(numerics=False)``) the tensors hold shape-only stand-ins of their
views (:func:`make_tensor`) and each copy makes the checks its gather and scatter would make (:func:`check_gather`,
:func:`check_scatter`: the region fits the destination's layout and the memory, the memory is writable) without
moving a byte; the events and their declared accesses are the full run's.

===================  =============================================  ==========================================
copy                 layouts (source -> destination)                region moved
===================  =============================================  ==========================================
GM -> L1 (MTE2)      RowMajor -> zN, ColumnMajor -> nZ (ND2NZ)      the source's origin shape; L1 receives it
                                                                    with the last 32-byte chunk of each row
                                                                    (column) zero-filled
                     zN -> zN, nZ -> nZ (strided DataCopy)          the origin shape widened to whole 32-byte
                                                                    panels
L1 -> L0A (MTE1)     zN -> zZ, nZ -> zZ (LoadData, transposed       the destination's origin shape in whole
                     for nZ)                                        fractals
L1 -> L0B (MTE1)     zN -> nZ (transposed), nZ -> nZ                the same
L0C -> GM (FIX)      L0C -> RowMajor (or zN: whole fractals)        the destination's origin shape, converted
                                                                    by the fixpipe (:mod:`catlass_py.tile.quant`)
===================  =============================================  ==========================================
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from catlass_py.arch.memory import GlobalTensor, LocalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.arch.spec import get_arch
from catlass_py.errors import CapacityError, ConfigError, OutOfBoundsError
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.gemm.helper import element_accumulator
from catlass_py.integers import offset_runs
from catlass_py.layout import RowMajor
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.tile.copy_gm_to_l1 import STRIDE_LIMIT
from catlass_py.tile.mmad import TileMmad
from catlass_py.tile.quant import VECTOR_MODES, ScaleGranularity, fixpipe_convert, m1_scale, quant_mode_atlas_a2
from catlass_py.tile.quant import scalar_quant_word
from catlass_py.tla import Layout, Tensor, make_layout_l0c, make_layout_tag
from catlass_py.tla import make_tensor as _tla_make_tensor
from catlass_py.tla.int_tuple import is_tuple, product
from catlass_py.virtual import is_virtual, virtual_array

#: simulated memory name -> TLA position (``Arch::Position*``)
_POSITION = {"GM": "GM", "L1": "L1", "L0A": "L0A", "L0B": "L0B", "L0C": "L0C", "BT": "Bias", "UB": "UB"}


def _shape_only(builtin, count: int) -> np.ndarray:
    """A shape-only stand-in (:func:`~catlass_py.virtual.virtual_array`) for the numpy view of ``count`` elements
    of ``builtin``: what :meth:`view` would give (packed 4-bit types as bytes), without the bytes."""
    dtype = builtin.dtype
    if dtype.packed:
        return virtual_array((dtype.nbytes(count),), np.uint8)
    return virtual_array((count,), dtype.numpy)


def make_tensor(builtin, layout: Layout, position: str | None = None, coord: Any = None) -> Tensor:
    """TLA ``MakeTensor(builtinTensor, layout[, coord], Position)`` (``include/tla/tensor.hpp``) over a simulated
    tensor: a :class:`~catlass_py.arch.memory.GlobalTensor` or :class:`~catlass_py.arch.memory.LocalTensor`
    (its memory gives the position unless ``position`` is given).

    The tensor's ``data`` is the builtin's numpy view, or a shape-only stand-in of the same length and dtype
    where making the view would allocate or read bytes a timing-only run never has: a local tensor of a
    timing-only core (``LocalTensor.computes`` False), a shape-only GM buffer or one not allocated yet (a lazily
    allocated workspace; a full run's copies view it when they move its bytes)."""
    if isinstance(builtin, GlobalTensor):
        buffer = builtin.buffer
        data = (_shape_only(builtin, builtin.size) if buffer.is_virtual or buffer._raw is None
                else builtin.view())
        where = "GM"
    elif isinstance(builtin, LocalTensor):
        data = builtin.view() if builtin.computes else _shape_only(builtin, builtin.count)
        where = _POSITION.get(builtin.position, "UB")
    else:
        raise ConfigError(f"make_tensor: the builtin tensor must be a simulated GlobalTensor or LocalTensor, got "
                          f"{type(builtin).__name__}")
    return _tla_make_tensor(data, layout, position or where, coord, builtin=builtin)


def make_tensor_like(tag: str, builtin, like: Tensor, *, dtype=None, layout_base: Layout | None = None) -> Tensor:
    """TLA ``MakeTensorLike<LayoutTag[, Element]>(builtinTensor, likeTensor, Position[, layoutBase])``
    (``include/tla/tensor.hpp``) over a simulated tensor: a tensor for ``like``'s logical extent (its origin shape)
    in the format ``tag`` (``'L0C'``: the accumulator layout), or with ``layout_base``'s shape and stride and
    ``like``'s origin shape. ``dtype`` defaults to the builtin tensor's element."""
    if layout_base is not None:
        layout = Layout(layout_base.shape, layout_base.stride, like.origin_shape)
    elif tag == "L0C":
        layout = make_layout_l0c(*like.origin_shape)
    else:
        layout = make_layout_tag(dtype if dtype is not None else builtin.dtype, tag, *like.origin_shape)
    return make_tensor(builtin, layout)


# -- regions: offsets and the runs of bytes they cover -----------------------------------------------------------

def _mode_extent(mode) -> int:
    return product(mode) if is_tuple(mode) else int(mode)


class _RegionCache:
    """Least recently used regions, bounded by the bytes of their offset arrays (``budget``) rather than by a
    count: a region's offsets take 8 bytes per element, so a count bound lets a long run over many tile shapes
    hold hundreds of MiB."""

    def __init__(self, budget: int):
        self.budget = budget
        self.nbytes = 0
        self._entries: OrderedDict = OrderedDict()  # key -> (value, bytes)

    def get(self, key):
        hit = self._entries.get(key)
        if hit is None:
            return None
        self._entries.move_to_end(key)
        return hit[0]

    def put(self, key, value, nbytes: int) -> None:
        entries = self._entries
        old = entries.pop(key, None)
        if old is not None:
            self.nbytes -= old[1]
        while entries and self.nbytes + nbytes > self.budget:
            _, (_, dropped) = entries.popitem(last=False)
            self.nbytes -= dropped
        entries[key] = (value, nbytes)
        self.nbytes += nbytes


_REGIONS = _RegionCache(32 << 20)  # (layout, coord, extent) -> _region; ("at", ...) -> _region_at


def _region(layout: Layout, coord: tuple, extent: tuple) -> tuple[np.ndarray, int, tuple, int, Any]:
    """``(offsets, base, runs, top, form)`` of the ``extent`` region at ``coord`` of ``layout``: element ``c`` of
    the region is at ``base + offsets[c]``; ``runs`` are the ``(start, length, stride, count)`` pieces of
    ``offsets`` (relative to ``base``), consecutive equal-length runs at a constant distance merged into one strided
    piece; ``top`` is the largest offset (-1 for an empty region); ``form`` the region as one strided view
    (:func:`_strided_form`) or None. A linear layout's regions at different coordinates share one offsets array
    (:func:`_region_at`). Kept in ``_REGIONS``."""
    key = (layout, coord, extent)
    hit = _REGIONS.get(key)
    if hit is not None:
        return hit
    base = 0
    key_coord = coord
    if layout.depth <= 1:  # linear modes: the region at coord is the region at 0, shifted
        base = int(layout._eval(coord if is_tuple(layout.shape) else coord[0]))
        key_coord = (0,) * len(coord)
    offsets, runs, top, form = _region_at(layout, key_coord, extent)
    out = (offsets, base, runs, top, form)
    _REGIONS.put(key, out, offsets.nbytes + 64 + 48 * len(runs))  # (shared offsets counted with each entry)
    return out


def _region_at(layout: Layout, coord: tuple, extent: tuple) -> tuple[np.ndarray, tuple, int]:
    key = ("at", layout, coord, extent)
    hit = _REGIONS.get(key)
    if hit is not None:
        return hit
    probe = _tla_make_tensor(np.empty(1, np.int8), Layout(layout.shape, layout.stride, extent), "GM", coord)
    offsets = probe.offsets()
    offsets.setflags(write=False)
    runs = offset_runs(offsets)
    out = (offsets, runs, int(offsets.max()) if offsets.size else -1, _strided_form(offsets, runs))
    _REGIONS.put(key, out, offsets.nbytes + 64 + 48 * len(runs))
    return out


def _axis_form(line: np.ndarray) -> tuple[list[int], list[int]] | None:
    """``line`` (offsets along one axis, from 0) as nested strided axes, outer first: ``(sizes, strides)`` with
    ``line[i] == sum(digit_j(i) * strides[j])`` for the mixed-radix digits of ``i`` over ``sizes``; None when it is
    not such a sum (a fractal layout's axis is two: fractals, and elements within one)."""
    sizes: list[int] = []
    strides: list[int] = []
    rest = line
    while rest.size > 1:
        step = int(rest[1])
        bad = np.flatnonzero(rest != np.arange(rest.size, dtype=rest.dtype) * step)
        period = int(bad[0]) if bad.size else rest.size
        if rest.size % period or not np.array_equal(
                rest.reshape(-1, period), rest[::period, None] + np.arange(period, dtype=rest.dtype) * step):
            return None
        sizes.insert(0, period)
        strides.insert(0, step)
        rest = rest[::period]
    return sizes, strides


_VIEW_MIN = 4096  # smaller regions move as fast by their offsets as through a view made for them


def _strided_form(offsets: np.ndarray, runs: tuple):
    """A region's ``offsets`` (:func:`_region_at`) as one strided view when they are one: ``(shape, strides,
    first)`` in elements, each axis of the region split into the nested axes of :func:`_axis_form` (a view of that
    shape reshapes to the region's), every stride positive and no offset repeated, from the region's first offset;
    None otherwise, and for regions under ``_VIEW_MIN`` elements."""
    if offsets.size < _VIEW_MIN or sum(n * c for _, n, _, c in runs) != offsets.size:
        return None
    first = int(offsets.flat[0])
    shape: list[int] = []
    strides: list[int] = []
    predicted = None
    for axis in range(offsets.ndim):
        line = offsets[tuple(slice(None) if a == axis else 0 for a in range(offsets.ndim))] - first
        axis_form = _axis_form(line)
        if axis_form is None:
            return None
        shape += axis_form[0]
        strides += axis_form[1]
        predicted = line if predicted is None else np.add.outer(predicted, line)
    if not all(d > 0 for d in strides) or not np.array_equal(predicted + first, offsets):
        return None
    return tuple(shape), tuple(strides), first


def _strided(data: np.ndarray, start: int, top: int, form) -> np.ndarray | None:
    """The view of :func:`_strided_form`'s ``form`` at element ``start`` of ``data``, or None when ``data`` is not one
    contiguous buffer or the region does not lie in it (the indexed path then reports the error)."""
    shape, strides, first = form
    if start < 0 or start + top >= data.shape[0] or not data.flags.c_contiguous:
        return None
    size = data.itemsize
    return np.ndarray(shape, data.dtype, buffer=data, offset=(start + first) * size,
                      strides=[d * size for d in strides])


def _check_extent(t: Tensor, extent: tuple, what: str) -> None:
    """An on-chip destination region must lie inside the tensor's layout (whole fractals included): a copy past
    it would land in the next stage's buffer, which no bounds check of the memory catches."""
    if t.position == "GM":
        return
    modes = t.layout.shape if is_tuple(t.layout.shape) else (t.layout.shape,)
    for i, (e, mode) in enumerate(zip(extent, modes)):
        if e > _mode_extent(mode):
            raise CapacityError(f"{what}: a {extent} region does not fit the {t.position} layout {t.layout} "
                                f"(mode {i} holds {_mode_extent(mode)} elements)")


def _values(t: Tensor) -> np.ndarray:
    """The numpy elements behind ``t``: its data, or the builtin's view where the data is a stand-in
    (:func:`make_tensor`; a shape-only GM buffer raises :class:`~catlass_py.errors.NoDataError` naming it)."""
    data = t.data
    if is_virtual(data) and t.builtin is not None:
        data = t.builtin.view()
    return data


def gather(t: Tensor, extent: tuple, what: str) -> np.ndarray:
    """The ``extent`` region of ``t`` (from its coordinate) as an array of that shape."""
    offsets, base, _, top, form = _region(t.layout, t.coord, extent)
    start = t.offset + base
    data = _values(t)
    if form is not None:
        view = _strided(data, start, top, form)
        if view is not None:  # a copy, as the indexed read makes
            out = np.empty(extent, data.dtype)
            np.copyto(out.reshape(form[0]), view)
            return out
    try:
        return data[start:][offsets] if offsets.size else np.empty(extent, data.dtype)
    except IndexError:
        raise _outside(t, what) from None


def scatter(t: Tensor, extent: tuple, values: np.ndarray, what: str) -> None:
    """Store ``values`` (shape ``extent``) as the ``extent`` region of ``t``."""
    _check_extent(t, extent, what)
    offsets, base, _, top, form = _region(t.layout, t.coord, extent)
    if not offsets.size:
        return
    data = _values(t)
    if not data.flags.writeable:
        raise OutOfBoundsError(f"{what}: {_name(t)} is read-only")
    start = t.offset + base
    if form is not None:
        view = _strided(data, start, top, form)
        if view is not None:
            np.copyto(view, np.reshape(values, form[0]), casting="unsafe")  # as an indexed store converts
            return
    try:
        data[start:][offsets] = values
    except IndexError:
        raise _outside(t, what) from None


# -- timing-only runs: the checks of gather / scatter without the bytes --------------------------------------------

def check_gather(t: Tensor, extent: tuple, what: str) -> None:
    """The checks of :func:`gather` without reading a byte (a timing-only core): raises where it would."""
    _, base, _, top, _ = _region(t.layout, t.coord, extent)
    if top >= 0 and t.offset + base + top >= t.data.shape[0]:
        raise _outside(t, what)


def check_scatter(t: Tensor, extent: tuple, what: str) -> None:
    """The checks of :func:`scatter` without writing a byte (a timing-only core): the destination's layout
    holds the region, the memory is writable and holds it, in :func:`scatter`'s order."""
    _check_extent(t, extent, what)
    _, base, _, top, _ = _region(t.layout, t.coord, extent)
    if top < 0:
        return
    b = t.builtin
    read_only = (b.buffer.read_only if isinstance(b, GlobalTensor) else
                 not t.data.flags.writeable if not is_virtual(t.data) else False)
    if read_only:
        raise OutOfBoundsError(f"{what}: {_name(t)} is read-only")
    if t.offset + base + top >= t.data.shape[0]:
        raise _outside(t, what)


def accesses(t: Tensor, extent: tuple) -> tuple:
    """The bytes of the ``extent`` region of ``t`` as :class:`~catlass_py.arch.events.MemAccess` records of its
    builtin tensor (a GM access keeps one, possibly empty, record)."""
    _, base, runs, _, _ = _region(t.layout, t.coord, extent)
    shift = t.offset + base
    records = tuple(t.builtin.access(s + shift, n, d, c) for s, n, d, c in runs)
    if not records and isinstance(t.builtin, GlobalTensor):
        records = (t.builtin.access(0, 0),)
    return records


def _name(t: Tensor) -> str:
    b = t.builtin
    return f"GM tensor {b.name!r}" if isinstance(b, GlobalTensor) else repr(b)


def _outside(t: Tensor, what: str) -> Exception:
    err = OutOfBoundsError if t.position == "GM" else CapacityError
    return err(f"{what}: the region of {t.layout} at {t.coord} reaches past the end of {_name(t)}")


def _device(t: Any, what: str, name: str, positions: tuple) -> Tensor:
    if not isinstance(t, Tensor) or t.builtin is None:
        raise ConfigError(f"{what}: {name} must be a TLA tensor over a simulated tensor "
                          f"(catlass_py.tile.copy_tla.make_tensor), got {type(t).__name__}")
    if t.position not in positions:
        raise ConfigError(f"{what}: {name} must be in {' or '.join(positions)}, got a tensor in {t.position}")
    return t


# -- layout kinds (tla::detail::isRowMajor, iszN, ...) --------------------------------------------------------------

def is_layout_kind(dtype, layout: Layout, kind: str) -> bool:
    """Whether a TLA layout has the Ascend format ``kind`` ('RowMajor', 'ColumnMajor', 'VectorLayout', 'zN', 'zZ',
    'nZ', 'PaddingRowMajor', 'PaddingColumnMajor'; a zN of 16 x 16 fractals is also the L0C layout). CATLASS decides this at compile time from the static
    strides (``tla::detail::isRowMajor``, ``isColumnMajor``, ``isVector``, ``iszN``, ``iszZ``, ``isnZ`` in
    ``include/tla/layout.hpp``); here from the values, a stride of a mode of extent 1 being free."""
    c0 = get_dtype(dtype).c0
    shape, stride = layout.shape, layout.stride
    if layout.depth <= 1:
        if not is_tuple(shape) or len(shape) == 1:
            return kind == "VectorLayout"
        if len(shape) != 2:
            return False
        if kind == "RowMajor":
            return stride[1] == 1 or shape[1] <= 1
        if kind == "ColumnMajor":
            return stride[0] == 1 or shape[0] <= 1
        return False
    if layout.rank != 2 or layout.depth != 2 or not all(is_tuple(m) and len(m) == 2 for m in shape):
        return False
    (r0, r1), (k0, k1) = shape
    (sr0, sr1), (sk0, sk1) = stride
    if kind in ("zN", "zZ"):
        if not (r0 == 16 and k0 == c0 and sr0 == c0 and sk0 == 1):
            return False
        if kind == "zN":
            return sr1 == 16 * c0 or r1 <= 1
        return sk1 == 16 * c0 or k1 <= 1
    if kind == "nZ":
        return r0 == c0 and k0 == 16 and sr0 == 1 and sk0 == c0 and (sk1 == 16 * c0 or k1 <= 1)
    if kind == "PaddingRowMajor":  # row-major blocks (bR x bC) in a row-major grid
        return sr0 == k0 and sk0 == 1 and (sk1 == r0 * k0 or k1 <= 1)
    if kind == "PaddingColumnMajor":  # column-major blocks in a column-major grid
        return sr0 == 1 and sk0 == r0 and (sr1 == r0 * k0 or r1 <= 1)
    return False


def _round(v: int, a: int) -> int:
    return -(-v // a) * a


def _emit(ctx, pipe: Pipe, op: str, **kw) -> None:
    if ctx is not None and ctx.bus.instructions:
        ctx.emit(pipe, op, **kw)


# -- GM -> L1 --------------------------------------------------------------------------------------------------

class CopyGmToL1Tla:
    """CATLASS ``TileCopyTla<AtlasA2, Tensor<GlobalTensor, LayoutSrc, ..., GM>, Tensor<LocalTensor, LayoutDst, ...,
    A1>>`` (``gemm/tile/atlasa2/copy_gm_to_l1.hpp``): one operand tile from GM into an L1 buffer.

    RowMajor -> zN and ColumnMajor -> nZ are the ND2NZ DMA: ``nValue`` rows (columns) of ``dValue`` elements, the
    source's origin shape, land in the destination's fractals at its coordinate; the DMA zero-fills each row up
    to a whole 32-byte chunk. A source row stride of ``STRIDE_LIMIT`` or more issues one DMA per row. zN -> zN and
    nZ -> nZ copy whole 32-byte panels (``blockCount`` panels of ``blockLen`` rows). One MTE2 instruction event.
    """

    op_name = "CopyGmToL1Tla"
    _PAIRS = {("RowMajor", "zN"), ("ColumnMajor", "nZ"), ("zN", "zN"), ("nZ", "nZ")}

    def __init__(self, arch, element, layout_src: str, layout_dst: str):
        self.arch = get_arch(arch)
        self.element = get_dtype(element)
        if (layout_src, layout_dst) not in self._PAIRS:
            raise ConfigError(f"{self.op_name}: no GM->L1 copy from {layout_src} to {layout_dst} (supported: "
                              "RowMajor->zN, ColumnMajor->nZ, zN->zN, nZ->nZ)")
        self.layout_src, self.layout_dst = layout_src, layout_dst

    def __call__(self, dst: Tensor, src: Tensor) -> None:
        """Copy the source's origin shape."""
        self._copy(dst, src, tuple(src.origin_shape))

    def _copy(self, dst: Tensor, src: Tensor, shape: tuple) -> None:
        what = self.op_name
        _device(dst, what, "the destination", ("L1",))
        _device(src, what, "the source", ("GM",))
        for t, kind, name in ((src, self.layout_src, "source"), (dst, self.layout_dst, "destination")):
            if not is_layout_kind(self.element, t.layout, kind):
                raise ConfigError(f"{what}: the {name} layout {t.layout} is not {kind}")
        rows, cols = shape
        c0 = self.element.c0
        src_kind = self.layout_src.replace("Padding", "")
        if src_kind == "RowMajor":
            land = (rows, _round(cols, c0))
            dmas = rows if self.split_rows and src.stride[0] >= STRIDE_LIMIT else 1
            read = (src, (rows, cols))
        elif src_kind == "ColumnMajor":
            land = (_round(rows, c0), cols)
            dmas = cols if self.split_rows and src.stride[1] >= STRIDE_LIMIT else 1
            read = (src, (rows, cols))
        elif src_kind == "zN":
            land = (rows, _round(cols, c0))
            dmas = 1 if src.stride[1][1] // c0 <= STRIDE_LIMIT else -(-cols // c0)
            read = (src, land)
        else:
            land = (_round(rows, c0), cols)
            dmas = 1 if src.stride[0][1] // c0 <= STRIDE_LIMIT else -(-rows // c0)
            read = (src, land)
        if dst.builtin.computes:
            data = gather(*read, what)
            if data.shape != land:  # the ND2NZ zero fill
                full = np.zeros(land, data.dtype)
                full[:rows, :cols] = data
                data = full
            scatter(dst, land, data, what)
        else:  # timing-only: the same checks, no bytes
            check_gather(*read, what)
            check_scatter(dst, land, what)
        _emit(dst.builtin.ctx, Pipe.MTE2, self.op_name, nbytes=self.element.nbytes(rows * cols),
              gm_reads=accesses(*read), local_writes=accesses(dst, land),
              info={"rows": rows, "cols": cols, "dmas": dmas})

    split_rows = True


class CopyGmToL1TlaExt(CopyGmToL1Tla):
    """CATLASS ``TileCopyTlaExt<AtlasA2, GM tensor, L1 tensor, LayoutTagSrc, LayoutTagDst>``
    (``gemm/tile/atlasa2/copy_gm_to_l1.hpp``): the ND2NZ copy of an explicit ``actualShape`` (rows, cols) from a
    RowMajor or ``PaddingRowMajor`` source into zN (ColumnMajor / ``PaddingColumnMajor`` into nZ), the source row
    (column) stride taken from the layout - inside one padded block for the padding layouts. One DMA whatever
    the stride. Called as ``copy(dst, src, actual_shape)``; one MTE2 instruction event."""

    op_name = "CopyGmToL1TlaExt"
    _PAIRS = {("RowMajor", "zN"), ("PaddingRowMajor", "zN"), ("ColumnMajor", "nZ"), ("PaddingColumnMajor", "nZ")}
    split_rows = False

    def __init__(self, arch, element, layout_src: str, layout_dst: str):
        self.arch = get_arch(arch)
        self.element = get_dtype(element)
        if (layout_src, layout_dst) not in self._PAIRS:
            raise ConfigError(f"{self.op_name}: no GM->L1 copy from {layout_src} to {layout_dst} (supported: "
                              "RowMajor/PaddingRowMajor->zN, ColumnMajor/PaddingColumnMajor->nZ)")
        self.layout_src, self.layout_dst = layout_src, layout_dst

    def __call__(self, dst: Tensor, src: Tensor, actual_shape=None) -> None:
        """Copy ``actual_shape`` (rows, cols) from the source's coordinate (default: its origin shape)."""
        shape = tuple(src.origin_shape) if actual_shape is None else tuple(int(v) for v in actual_shape)
        self._copy(dst, src, shape)


# -- L1 -> L0A / L0B -------------------------------------------------------------------------------------------

class _CopyL1ToL0Tla:
    op_name = ""
    position = ""
    sources: tuple = ()
    target = ""

    def __init__(self, arch, element, layout_src: str):
        self.arch = get_arch(arch)
        self.element = get_dtype(element)
        if layout_src not in self.sources:
            raise ConfigError(f"{self.op_name}: L1 layout {layout_src} is not supported (use {', '.join(self.sources)})")
        self.layout_src = layout_src

    def __call__(self, dst: Tensor, src: Tensor) -> None:
        """Load the destination's origin shape, in whole fractals, from the L1 tile ``src`` (its coordinate is
        the tile's origin inside the L1 buffer)."""
        what = self.op_name
        _device(dst, what, "the destination", (self.position,))
        _device(src, what, "the source", ("L1",))
        if not is_layout_kind(self.element, src.layout, self.layout_src):
            raise ConfigError(f"{what}: the source layout {src.layout} is not {self.layout_src}")
        if not is_layout_kind(self.element, dst.layout, self.target):
            raise ConfigError(f"{what}: the destination layout {dst.layout} is not {self.target}")
        extent = tuple(_mode_extent(m) for m in dst.layout.shape)  # whole fractals move
        if dst.builtin.computes:
            scatter(dst, extent, gather(src, extent, what), what)
        else:  # timing-only: the same checks, no bytes
            check_gather(src, extent, what)
            check_scatter(dst, extent, what)
        _emit(dst.builtin.ctx, Pipe.MTE1, self.op_name, nbytes=self.element.nbytes(extent[0] * extent[1]),
              local_reads=accesses(src, extent), local_writes=accesses(dst, extent),
              info={"rows": extent[0], "cols": extent[1]})


class CopyL1ToL0ATla(_CopyL1ToL0Tla):
    """CATLASS ``TileCopyTla<AtlasA2, L1 tensor, L0A tensor>`` (``gemm/tile/atlasa2/copy_l1_to_l0a.hpp``): zN -> zZ
    (``LoadData`` of each fractal row) or nZ -> zZ (transposed loads) on Atlas A2."""

    op_name = "CopyL1ToL0ATla"
    position = "L0A"
    sources = ("zN", "nZ")
    target = "zZ"


class CopyL1ToL0BTla(_CopyL1ToL0Tla):
    """CATLASS ``TileCopyTla<AtlasA2, L1 tensor, L0B tensor>`` (``gemm/tile/atlasa2/copy_l1_to_l0b.hpp``): zN -> nZ
    (transposed loads; int8 as 32 x 32 squares) or nZ -> nZ."""

    op_name = "CopyL1ToL0BTla"
    position = "L0B"
    sources = ("zN", "nZ")
    target = "nZ"


# -- Mmad ------------------------------------------------------------------------------------------------------

class TileMmadTla:
    """CATLASS ``Gemm::Tile::TileMmadTla<ArchTag, ElementA, LayoutTagL1A>`` (``gemm/tile/tile_mmad.hpp``): one
    ``Mmad`` on ``l0c.data()``, ``l0a.data()``, ``l0b.data()`` (the builtin tensors; the coordinates of the TLA
    tensors are not applied, as in CATLASS) with m, n, k, ``initC`` and the unit flag, then a ``PIPE_M`` barrier
    when ``(m / 16) * (n / 16) < 10``. The instruction is :class:`catlass_py.tile.mmad.TileMmad`'s (M pipe)."""

    def __init__(self, arch, element_a, element_b):
        self.arch = get_arch(arch)
        self.element_a, self.element_b = get_dtype(element_a), get_dtype(element_b)
        self.element_accumulator = element_accumulator(self.element_a, self.element_b, self.arch)
        self._mmad = TileMmad(self.arch, GemmType(self.element_a, RowMajor), GemmType(self.element_b, RowMajor))

    def __call__(self, l0c: Tensor, l0a: Tensor, l0b: Tensor, m: int, n: int, k: int, init_c: bool = True,
                 unit_flag: int = 0) -> None:
        what = "TileMmadTla"
        _device(l0c, what, "C", ("L0C",))
        _device(l0a, what, "A", ("L0A",))
        _device(l0b, what, "B", ("L0B",))
        self._mmad(l0c.builtin, l0a.builtin, l0b.builtin, m, n, k, init_c, unit_flag)
        ctx = l0c.builtin.ctx
        if ctx is not None and (m // 16) * (n // 16) < 10:  # PIPE_M_BARRIER_THRESHOLD: a small Mmad is followed
            ctx.pipe_barrier(Pipe.M)                          # by a PIPE_M barrier

    def from_shapes(self, l0c: Tensor, l0a: Tensor, l0b: Tensor, init_c: bool = True, unit_flag: int = 0) -> None:
        """The overload that reads the extents from the tensors: m and n from C's origin shape, k from A's; a
        one-row m is issued as 16 rows on Atlas A2 (the cube's GEMV mode avoided)."""
        m, n = l0c.origin_shape
        k = l0a.origin_shape[1]
        if m == 1 and self.arch.arch_code == 2201:
            m = 16
        self(l0c, l0a, l0b, m, n, k, init_c, unit_flag)


# -- L0C -> GM -------------------------------------------------------------------------------------------------

class CopyL0CToGmTla:
    """CATLASS ``Gemm::Tile::CopyL0CToGmTla<AtlasA2, TensorL0C, TensorC, DEQUANT_GRANULARITY, ReluEnable>``
    (``gemm/tile/atlasa2/copy_l0c_to_gm.hpp``): the fixpipe store of the destination's origin shape (m x n) from
    the accumulator at the source tensor's coordinate, converted by the quant mode CATLASS's table picks for
    (accumulator, destination element, granularity) (:mod:`catlass_py.tile.quant`), with optional ReLU. A zN
    destination receives whole fractals (NZ output). PER_TENSOR takes its scale at construction; PER_CHANNEL an FB
    tensor of uint64 quant words per call. One FIX instruction event carrying the unit flag."""

    op_name = "Fixpipe"

    def __init__(self, arch, element_accumulator, element_c, layout_c: str = "RowMajor",
                 scale_granularity: ScaleGranularity = ScaleGranularity.NO_QUANT, relu_enable: bool = False, *,
                 scale: float = 1.0):
        self.arch = get_arch(arch)
        self.element_src = get_dtype(element_accumulator)
        self.element_c = get_dtype(element_c)
        if layout_c not in ("RowMajor", "zN"):
            raise ConfigError(f"CopyL0CToGmTla: the destination layout must be RowMajor or zN, got {layout_c}")
        self.granularity = ScaleGranularity(scale_granularity)
        if layout_c == "zN" and self.granularity != ScaleGranularity.NO_QUANT:
            raise ConfigError("CopyL0CToGmTla: the zN (NZ-format) destination supports NO_QUANT only")
        self.layout_c = layout_c
        self.quant_mode = quant_mode_atlas_a2(self.element_src, self.element_c, self.granularity)
        self.relu = bool(relu_enable)
        self.scale_word = scalar_quant_word(scale)

    def __call__(self, dst: Tensor, src: Tensor, unit_flag: int = 0, *, scale: LocalTensor | None = None) -> None:
        what = "CopyL0CToGmTla"
        _device(dst, what, "the destination", ("GM",))
        _device(src, what, "the source", ("L0C",))
        if not is_layout_kind(self.element_c, dst.layout, self.layout_c):
            raise ConfigError(f"{what}: the destination layout {dst.layout} is not {self.layout_c}")
        m, n = dst.origin_shape
        if self.layout_c == "zN":
            m, n = _round(m, 16), _round(n, self.element_c.c0)
        if src.builtin.computes:
            acc = gather(src, (m, n), what)
            if self.quant_mode in VECTOR_MODES:
                if scale is None:
                    raise ConfigError(f"{what}: PER_CHANNEL quantisation needs the FB scale tensor")
                factor = m1_scale(scale.view(n))[None, :]
            else:
                factor = m1_scale(self.scale_word)
            out = fixpipe_convert(acc, self.quant_mode, self.element_c, scale=factor, relu=self.relu)
            scatter(dst, (m, n), out, what)
        else:  # timing-only: the same checks, no bytes
            check_gather(src, (m, n), what)
            if self.quant_mode in VECTOR_MODES:
                if scale is None:
                    raise ConfigError(f"{what}: PER_CHANNEL quantisation needs the FB scale tensor")
                scale.check(n)
            check_scatter(dst, (m, n), what)
        ctx = src.builtin.ctx
        if ctx is not None and ctx.bus.instructions:
            reads = accesses(src, (m, n))
            if self.quant_mode in VECTOR_MODES:
                reads += (scale.access(0, n),)
            ctx.emit(Pipe.FIX, self.op_name, nbytes=self.element_c.nbytes(m * n), gm_writes=accesses(dst, (m, n)),
                     local_reads=reads, unit_flag=unit_flag,
                     info={"m": m, "n": n, "quant": self.quant_mode.value, "relu": self.relu})


# -- GM <-> UB (the vector cores) ---------------------------------------------------------------------------------

class CopyGm2UbTla:
    """CATLASS ``Epilogue::Tile::CopyGm2UbTla<AtlasA2, GM tensor, UB tensor>`` (``epilogue/tile/copy_gm_to_ub_tla.hpp``,
    RowMajor in and out): ``DataCopyPad`` of the source's origin shape, ``rows`` bursts of ``cols`` elements, each
    landing at the start of a UB row of the destination's row stride (whole 32-byte blocks); the rest of a UB row
    keeps its contents. One MTE2 instruction event."""

    op_name = "CopyGm2UbTla"

    def __init__(self, arch, element):
        self.arch = get_arch(arch)
        self.element = get_dtype(element)

    def __call__(self, dst: Tensor, src: Tensor) -> None:
        what = self.op_name
        _device(dst, what, "the destination", ("UB",))
        _device(src, what, "the source", ("GM",))
        _check_row_major(self.element, (src, dst), what)
        extent = tuple(src.origin_shape)
        if dst.builtin.computes:
            scatter(dst, extent, gather(src, extent, what), what)
        else:  # timing-only: the same checks, no bytes
            check_gather(src, extent, what)
            check_scatter(dst, extent, what)
        _emit(dst.builtin.ctx, Pipe.MTE2, what, nbytes=self.element.nbytes(extent[0] * extent[1]),
              gm_reads=accesses(src, extent), local_writes=accesses(dst, extent),
              info={"rows": extent[0], "cols": extent[1]})


class CopyUb2GmTla:
    """CATLASS ``Epilogue::Tile::CopyUb2GmTla<AtlasA2, UB tensor, GM tensor>`` (``epilogue/tile/copy_ub_to_gm_tla.hpp``,
    RowMajor in and out): ``DataCopyPad`` of the destination's origin shape from UB rows of the source's row stride,
    exactly ``rows x cols`` elements written. One MTE3 instruction event."""

    op_name = "CopyUb2GmTla"

    def __init__(self, arch, element):
        self.arch = get_arch(arch)
        self.element = get_dtype(element)

    def __call__(self, dst: Tensor, src: Tensor) -> None:
        what = self.op_name
        _device(dst, what, "the destination", ("GM",))
        _device(src, what, "the source", ("UB",))
        _check_row_major(self.element, (src, dst), what)
        extent = tuple(dst.origin_shape)
        if src.builtin.computes:
            scatter(dst, extent, gather(src, extent, what), what)
        else:  # timing-only: the same checks, no bytes
            check_gather(src, extent, what)
            check_scatter(dst, extent, what)
        _emit(src.builtin.ctx, Pipe.MTE3, what, nbytes=self.element.nbytes(extent[0] * extent[1]),
              gm_writes=accesses(dst, extent), local_reads=accesses(src, extent),
              info={"rows": extent[0], "cols": extent[1]})


def _check_row_major(element, tensors, what: str) -> None:
    for t in tensors:
        if t.rank != 2 or not is_layout_kind(element, t.layout, "RowMajor"):
            raise ConfigError(f"{what}: tensors must be RowMajor (rank 2, unit column stride), got {t.layout}")
        if t.data.dtype != element.numpy:
            raise ConfigError(f"{what}: assembled for {element} elements, called with a {t.data.dtype} tensor (a copy "
                              "moves elements and never converts them)")
    ub = [t for t in tensors if t.position == "UB"][0]
    if ub.layout.shape[0] > 1 and element.nbytes(ub.stride[0]) % 32:
        raise ConfigError(f"{what}: the UB row stride {ub.stride[0]} is not a whole number of 32-byte blocks")


# -- the bundle ------------------------------------------------------------------------------------------------

#: the L1 layout of an operand by its GM layout (CATLASS ``helper::L1ATypeSelector`` / ``L1BTypeSelector``)
L1_LAYOUT = {"RowMajor": "zN", "ColumnMajor": "nZ", "zN": "zN", "nZ": "nZ"}


def tag_name(tag) -> str:
    """A layout tag given as a name or a :mod:`catlass_py.layout` class, as its name."""
    name = tag if isinstance(tag, str) else getattr(tag, "__name__", None)
    if name not in ("RowMajor", "ColumnMajor", "zN", "nZ", "zZ", "VectorLayout"):
        raise ConfigError(f"layout tag: expected RowMajor, ColumnMajor, zN or nZ (a name or a catlass_py.layout "
                          f"class), got {tag!r}")
    return name


@dataclass(frozen=True)
class PackedTileCopyTla:
    """CATLASS ``Gemm::Tile::PackedTileCopyTla<ArchTag, ElementA, LayoutTagA, ElementB, LayoutTagB, ElementC,
    LayoutTagC, ElementBias, ReluEnable, DEQUANT_GRANULARITY>`` (``gemm/tile/tile_copy.hpp``): the element types and
    layout tags of the operands, the layout tags they take in L1 (``layout_tag_l1a``/``l1b``) and L0, and the copies
    ``copy_gm_to_l1_a``, ``copy_gm_to_l1_b``, ``copy_l1_to_l0a``, ``copy_l1_to_l0b``, ``copy_l0c_to_gm``. Members can
    be swapped with :meth:`replace`. Layout tags are names or :mod:`catlass_py.layout` classes."""

    arch: Any
    element_a: Any
    layout_tag_a: Any
    element_b: Any
    layout_tag_b: Any
    element_c: Any
    layout_tag_c: Any = "RowMajor"
    element_bias: Any = None
    relu_enable: bool = False
    dequant_granularity: ScaleGranularity = ScaleGranularity.NO_QUANT
    copy_gm_to_l1_a: Any = None
    copy_gm_to_l1_b: Any = None
    copy_l1_to_l0a: Any = None
    copy_l1_to_l0b: Any = None
    copy_l0c_to_gm: Any = None

    def __post_init__(self):
        sa = object.__setattr__
        arch = get_arch(self.arch)
        sa(self, "arch", arch)
        for name in ("element_a", "element_b", "element_c"):
            sa(self, name, get_dtype(getattr(self, name)))
        for name in ("layout_tag_a", "layout_tag_b", "layout_tag_c"):
            sa(self, name, tag_name(getattr(self, name)))
        if self.element_bias is not None:
            raise ConfigError("PackedTileCopyTla: a bias (ElementBias) is not modelled for the TLA blocks yet; use "
                              "MatmulBias (example 20) for C = A @ B + bias")
        for name, tag in (("LayoutTagA", self.layout_tag_a), ("LayoutTagB", self.layout_tag_b)):
            if tag not in L1_LAYOUT:
                raise ConfigError(f"PackedTileCopyTla: {name} must be RowMajor, ColumnMajor, zN or nZ, got {tag}")
        if self.layout_tag_c not in ("RowMajor", "zN"):
            raise ConfigError(f"PackedTileCopyTla: LayoutTagC must be RowMajor or zN, got {self.layout_tag_c}")
        acc = element_accumulator(self.element_a, self.element_b, arch)
        sa(self, "element_accumulator", acc)
        sa(self, "layout_tag_l1a", L1_LAYOUT[self.layout_tag_a])
        sa(self, "layout_tag_l1b", L1_LAYOUT[self.layout_tag_b])
        sa(self, "layout_tag_l0a", "zN" if arch.arch_code == 3510 else "zZ")
        sa(self, "layout_tag_l0b", "nZ")
        defaults = {
            "copy_gm_to_l1_a": lambda: CopyGmToL1Tla(arch, self.element_a, self.layout_tag_a, self.layout_tag_l1a),
            "copy_gm_to_l1_b": lambda: CopyGmToL1Tla(arch, self.element_b, self.layout_tag_b, self.layout_tag_l1b),
            "copy_l1_to_l0a": lambda: CopyL1ToL0ATla(arch, self.element_a, self.layout_tag_l1a),
            "copy_l1_to_l0b": lambda: CopyL1ToL0BTla(arch, self.element_b, self.layout_tag_l1b),
            "copy_l0c_to_gm": lambda: CopyL0CToGmTla(arch, acc, self.element_c, self.layout_tag_c,
                                                     self.dequant_granularity, self.relu_enable),
        }
        for name, make in defaults.items():
            if getattr(self, name) is None:
                sa(self, name, make())

    def replace(self, **members):
        """A copy of the bundle with some members swapped."""
        unknown = set(members) - {f.name for f in dataclasses.fields(self)}
        if unknown:
            raise ConfigError(f"PackedTileCopyTla.replace: unknown member(s) {sorted(unknown)}")
        return dataclasses.replace(self, **members)


@dataclass(frozen=True)
class PaddingPackedTileCopyTla(PackedTileCopyTla):
    """CATLASS ``Gemm::Tile::PaddingPackedTileCopyTla<ArchTag, TensorA, LayoutTagA, TensorB, LayoutTagB, TensorC,
    LayoutTagC, TensorBias, LayoutTagBias, IS_PADDING_A, IS_PADDING_B>`` (``gemm/tile/tile_copy.hpp``): the bundle of
    the optimized TLA matmuls, whose GM -> L1 copies take an explicit actual shape (:class:`CopyGmToL1TlaExt`);
    with ``is_padding_a`` (``is_padding_b``) the operand is read from a ``PaddingRowMajor`` /
    ``PaddingColumnMajor`` workspace. A and B must be RowMajor or ColumnMajor."""

    is_padding_a: bool = False
    is_padding_b: bool = False

    def __post_init__(self):
        sa = object.__setattr__
        for name, tag in (("LayoutTagA", self.layout_tag_a), ("LayoutTagB", self.layout_tag_b)):
            if tag_name(tag) not in ("RowMajor", "ColumnMajor"):
                raise ConfigError(f"PaddingPackedTileCopyTla: {name} must be RowMajor or ColumnMajor, got {tag}")
        for member, element, tag, padding in (("copy_gm_to_l1_a", self.element_a, self.layout_tag_a, self.is_padding_a),
                                              ("copy_gm_to_l1_b", self.element_b, self.layout_tag_b, self.is_padding_b)):
            if getattr(self, member) is None:
                name = tag_name(tag)
                src = ("Padding" + name) if padding else name
                sa(self, member, CopyGmToL1TlaExt(self.arch, element, src, L1_LAYOUT[name]))
        super().__post_init__()


@dataclass(frozen=True)
class TileCopyDequantTla:
    """CATLASS ``Epilogue::Tile::TileCopyDequantTla<ArchTag, ElementC, LayoutTagC, ElementScale, LayoutTagScale,
    ElementPerTokenScale, LayoutTagPerTokenScale, ElementD, LayoutTagD>`` (``epilogue/tile/tile_copy.hpp``): the
    GM <-> UB copies of the per-token-dequant TLA epilogue, all RowMajor (the scales as ``1 x n`` / ``1 x m``
    matrices): ``copy_gm_to_ub_c``, ``copy_gm_to_ub_x`` (scale), ``copy_gm_to_ub_y`` (per-token scale),
    ``copy_ub_to_gm_d``."""

    arch: Any
    element_c: Any
    element_scale: Any
    element_per_token_scale: Any
    element_d: Any
    copy_gm_to_ub_c: Any = None
    copy_gm_to_ub_x: Any = None
    copy_gm_to_ub_y: Any = None
    copy_ub_to_gm_d: Any = None

    def __post_init__(self):
        sa = object.__setattr__
        arch = get_arch(self.arch)
        sa(self, "arch", arch)
        for name in ("element_c", "element_scale", "element_per_token_scale", "element_d"):
            sa(self, name, get_dtype(getattr(self, name)))
        for name, make in (("copy_gm_to_ub_c", lambda: CopyGm2UbTla(arch, self.element_c)),
                           ("copy_gm_to_ub_x", lambda: CopyGm2UbTla(arch, self.element_scale)),
                           ("copy_gm_to_ub_y", lambda: CopyGm2UbTla(arch, self.element_per_token_scale)),
                           ("copy_ub_to_gm_d", lambda: CopyUb2GmTla(arch, self.element_d))):
            if getattr(self, name) is None:
                sa(self, name, make())


__all__ = [
    "CopyGm2UbTla",
    "CopyGmToL1Tla",
    "CopyGmToL1TlaExt",
    "CopyL0CToGmTla",
    "CopyL1ToL0ATla",
    "CopyL1ToL0BTla",
    "CopyUb2GmTla",
    "L1_LAYOUT",
    "PackedTileCopyTla",
    "PaddingPackedTileCopyTla",
    "TileCopyDequantTla",
    "TileMmadTla",
    "accesses",
    "check_gather",
    "check_scatter",
    "gather",
    "is_layout_kind",
    "make_tensor",
    "make_tensor_like",
    "scatter",
    "tag_name",
]
