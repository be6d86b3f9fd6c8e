"""Moving a logical (rows x cols) region between a numpy array and a tensor seen through a layout.

Every copy instruction of the tile layer is "gather the region through the source layout, scatter it
through the destination layout"; these helpers add the global-memory bounds checks and the byte ranges
(:func:`region_access`) that instruction events report to the pipe model.
"""

from __future__ import annotations

import numpy as np

from catlass_py.arch.memory import GlobalTensor, LocalTensor
from catlass_py.errors import CapacityError, ConfigError, OutOfBoundsError
from catlass_py.layout import ColumnMajor, RowMajor, VectorLayout
from catlass_py.layout.base import MatrixLayout, split_axis, split_sizes


def gm_read(gm: GlobalTensor, layout, rows: int, cols: int, what: str, *, out: np.ndarray | None = None) -> np.ndarray:
    """Region [0:rows, 0:cols] of the GM tensor ``gm`` seen through ``layout`` (a VectorLayout's elements into
    ``out`` when given: a C-contiguous array of their dtype, checked after GM)."""
    try:
        if isinstance(layout, VectorLayout):
            return layout.read(gm.view(), rows, out=out)
        return layout.read(gm.view(), rows, cols)
    except OutOfBoundsError as exc:
        raise OutOfBoundsError(f"{what}: GM tensor {gm.name!r}: {exc}") from None


def gm_write(gm: GlobalTensor, layout, data: np.ndarray, what: str) -> None:
    """Store ``data`` as region [0:r, 0:c] of the GM tensor ``gm`` seen through ``layout``."""
    if gm.buffer.read_only:
        raise OutOfBoundsError(f"{what}: GM tensor {gm.name!r} is read-only")
    try:
        layout.write(gm.view(), data)
    except OutOfBoundsError as exc:
        raise OutOfBoundsError(f"{what}: GM tensor {gm.name!r}: {exc}") from None


def local_read(t: LocalTensor, layout, rows: int, cols: int, what: str) -> np.ndarray:
    """Region [0:rows, 0:cols] of a local tensor seen through ``layout``."""
    try:
        return layout.read(t.view(), rows, cols)
    except OutOfBoundsError as exc:
        raise CapacityError(f"{what}: {t!r}: {exc}") from None


def local_write(t: LocalTensor, layout, data: np.ndarray, what: str) -> None:
    """Store ``data`` as region [0:r, 0:c] of a local tensor seen through ``layout``."""
    try:
        layout.write(t.view(), data)
    except OutOfBoundsError as exc:
        raise CapacityError(f"{what}: {t!r}: {exc}") from None


def local_accumulate(t: LocalTensor, layout, data: np.ndarray, what: str) -> None:
    """``region += data`` in place in a local tensor seen through ``layout`` (accumulator updates)."""
    try:
        layout.accumulate(t.view(), data)
    except OutOfBoundsError as exc:
        raise CapacityError(f"{what}: {t!r}: {exc}") from None


# -- the fast path: one strided view per operand, proved in bounds once per geometry -----------------------
#
# A tile instruction on whole fractals (the common case: L1 -> L0 loads, Mmad on 16-row multiples) touches a
# region that is ONE strided numpy view in each layout taking part (``layout.base.split_axis``). The views are
# built and checked once per (buffer slot, layout, region) and kept in the core's ``tile_cache``; later calls
# with the same geometry move the bytes with one numpy call. Whatever does not fit - partial fractals, packed
# 4-bit types, a region outside the layout or past the tensor's end - gets None and takes the piecewise path
# above, which makes (and reports) every check itself.

_MISSING = object()
_TILE_CACHE_LIMIT = 4096


def _geometry(layout, axes, rows: int, cols: int, rsizes, csizes, transpose: bool = False):
    """``(shape, element strides, largest element offset)`` of the region ``[0:rows, 0:cols]`` through
    ``layout`` with its rows cut at ``rsizes`` and its columns at ``csizes`` (with ``transpose`` the column
    axes come first: the transposed region), or None."""
    if axes is None or not rows or not cols or rows > layout.rows or cols > layout.cols:
        return None
    r = split_axis(rows, rsizes, axes[0])
    c = split_axis(cols, csizes, axes[1])
    if r is None or c is None:
        return None
    if transpose:
        r, c = c, r
    shape, strides = r[0] + c[0], r[1] + c[1]
    return shape, strides, sum((n - 1) * st for n, st in zip(shape, strides))


def _view(raw, byte_offset: int, npd, shape, strides, item: int = 1):
    """The numpy view; ``item`` > 1 folds that many trailing elements (contiguous) into one raw item."""
    isz = npd.itemsize
    if item > 1:
        npd = np.dtype(f"V{item * isz}")
    return np.ndarray(shape, npd, buffer=raw, offset=byte_offset, strides=tuple(st * isz for st in strides))


def _squeeze(shape, *strides):
    keep = [i for i, n in enumerate(shape) if n != 1]
    return (tuple(shape[i] for i in keep), *(tuple(st[i] for i in keep) for st in strides))


def _fold(shape, *strides):
    """Fold trailing axes contiguous in every stride set into one raw item (a copy moves the bytes unchanged:
    exact for every dtype, and one memcpy per item instead of one per element)."""
    shape, strides, item = list(shape), [list(st) for st in strides], 1
    while shape and all(st[-1] == item for st in strides):
        item *= shape.pop()
        for st in strides:
            st.pop()
    return (tuple(shape), *(tuple(st) for st in strides), item)


def _local_view(t: LocalTensor, layout, axes, rows: int, cols: int, rsizes, csizes, transpose: bool = False):
    """The region ``[0:rows, 0:cols]`` of ``t`` through ``layout`` as one strided view (size-1 axes dropped; see
    :func:`_geometry`), or None (also when it passes the tensor's end: the piecewise path raises the error)."""
    if t.dtype.packed:
        return None
    g = _geometry(layout, axes, rows, cols, rsizes, csizes, transpose)
    if g is None or g[2] >= t.count:
        return None
    shape, strides = _squeeze(g[0], g[1])
    return _view(t.arena.raw, t.byte_offset, t.dtype.numpy, shape, strides)


_GEOMETRY: dict = {}  # pure functions of layouts and regions, shared by every core (each builds its own views)


def _layout_key(layout) -> tuple:
    return (layout.__class__, layout._geom, layout.rows, layout.cols)


def _copy_geometry(a_layout, a_count, b_layout, b_count, rows, cols):
    """For a copy of the region between two layouts: ``(shape, a strides, b strides, item, b's largest offset)``
    (folded), or None. ``a_count``: a's elements (its largest offset must stay below); ``b_count`` None: b is
    checked by the caller (GM, per call). Memoised for all cores."""
    key = ("copy", *_layout_key(a_layout), a_count, *_layout_key(b_layout), b_count, rows, cols)
    hit = _GEOMETRY.get(key, _MISSING)
    if hit is _MISSING:
        if len(_GEOMETRY) >= _TILE_CACHE_LIMIT:
            _GEOMETRY.clear()
        hit = _GEOMETRY[key] = _copy_geometry_of(a_layout, a_count, b_layout, b_count, rows, cols)
    return hit


def _copy_geometry_of(a_layout, a_count, b_layout, b_count, rows, cols):
    aa, ab = a_layout.linear_axes(), b_layout.linear_axes()
    if aa is None or ab is None:
        return None
    rs, cs = split_sizes(aa[0][0], ab[0][0]), split_sizes(aa[1][0], ab[1][0])
    if rs is None or cs is None:
        return None
    ga = _geometry(a_layout, aa, rows, cols, rs, cs)
    gb = _geometry(b_layout, ab, rows, cols, rs, cs)
    if ga is None or gb is None or ga[2] >= a_count or (b_count is not None and gb[2] >= b_count):
        return None
    shape, sa, sb = _squeeze(ga[0], ga[1], gb[1])
    return (*_fold(shape, sa, sb), gb[2])


def _gm_copy_plan(local, layout_local, gm, layout_gm, rows, cols):
    """(local view, GM view shape, GM view byte strides, GM view dtype, largest GM element offset) of a copy
    between a region of a local tensor and the same region of a GM tensor, or None."""
    if local.dtype.numpy != gm.dtype.numpy or gm.dtype.packed or local.dtype.packed:
        return None
    g = _copy_geometry(layout_local, local.count, layout_gm, None, rows, cols)
    if g is None:
        return None
    shape, sl, sg, item, top = g
    lv = _view(local.arena.raw, local.byte_offset, local.dtype.numpy, shape, sl, item)
    isz = gm.dtype.numpy.itemsize
    return lv, shape, tuple(st * isz for st in sg), lv.dtype, top


def gm_copy_plan(local: LocalTensor, layout_local, gm: GlobalTensor, layout_gm, rows: int, cols: int):
    """The cached plan of :func:`gm_local_copy` (``(local view, GM view shape, GM view byte strides, GM view
    dtype, largest GM element offset)``, valid for any GM pointer of ``gm``'s dtype whose buffer holds that
    offset), or None when the regions are not single views."""
    cache = _cache_of(local)
    if cache is None or not (isinstance(layout_local, MatrixLayout) and isinstance(layout_gm, MatrixLayout)):
        return None
    key = ("gm", local.arena.id, local.byte_offset, local.count, local.dtype.name, layout_local.__class__,
           layout_local._geom, layout_local.rows, layout_local.cols, layout_gm.__class__, layout_gm._geom,
           layout_gm.rows, layout_gm.cols, gm.dtype.name, rows, cols)
    plan = cache.get(key, _MISSING)
    if plan is _MISSING:
        plan = cache[key] = _gm_copy_plan(local, layout_local, gm, layout_gm, rows, cols)
    return plan


def gm_local_copy(local: LocalTensor, layout_local, gm: GlobalTensor, layout_gm, rows: int, cols: int, *,
                  to_gm: bool) -> bool:
    """``local_write(local, .., gm_read(gm, ..))`` (``to_gm=False``) or ``gm_write(gm, .., local_read(local, ..))``
    (``to_gm=True``) of the region ``[0:rows, 0:cols]`` as one ``np.copyto`` between a cached view of the local
    tensor and a view of GM checked against the end of its buffer; False (nothing done) when the regions are
    not single views, the GM region passes the buffer's end or GM is read-only for a store: the caller then
    takes the piecewise path, which raises the errors."""
    if to_gm and gm.buffer.read_only:
        return False
    plan = gm_copy_plan(local, layout_local, gm, layout_gm, rows, cols)
    if plan is None:
        return False
    lv, shape, strides, dtype, top = plan
    if top >= gm.size:
        return False
    gv = np.ndarray(shape, dtype, buffer=gm.buffer.raw, offset=gm.byte_offset, strides=strides)
    if to_gm:
        np.copyto(gv, lv)
    else:
        np.copyto(lv, gv)
    return True


def _cache_of(t: LocalTensor):
    ctx = t.arena.ctx
    if ctx is None:
        return None
    cache = ctx.tile_cache
    if len(cache) >= _TILE_CACHE_LIMIT:
        cache.clear()
    return cache


def _copy_views(dst, layout_dst, src, layout_src, rows, cols):
    if dst.dtype.numpy != src.dtype.numpy or dst.dtype.packed or src.dtype.packed:
        return None
    g = _copy_geometry(layout_dst, dst.count, layout_src, src.count, rows, cols)
    if g is None:
        return None
    shape, sd, ss, item, _ = g
    npd = dst.dtype.numpy
    return (_view(dst.arena.raw, dst.byte_offset, npd, shape, sd, item),
            _view(src.arena.raw, src.byte_offset, npd, shape, ss, item))


def local_copy(dst: LocalTensor, layout_dst, src: LocalTensor, layout_src, rows: int, cols: int) -> bool:
    """``local_write(dst, layout_dst, local_read(src, layout_src, rows, cols))`` as one ``np.copyto`` between
    two strided views of the core's buffers when both regions are single views; False (nothing done) when
    not, and the caller takes the piecewise path."""
    cache = _cache_of(dst)
    if cache is None or src.arena.ctx is not dst.arena.ctx:
        return False
    if not (isinstance(layout_dst, MatrixLayout) and isinstance(layout_src, MatrixLayout)):
        return False
    # Layouts by value, as plain tuples (a layout's own hash is Python code): class, geometry, logical shape.
    key = (dst.arena.id, dst.byte_offset, dst.count, dst.dtype.name, layout_dst.__class__, layout_dst._geom,
           layout_dst.rows, layout_dst.cols, src.arena.id, src.byte_offset, src.count, src.dtype.name,
           layout_src.__class__, layout_src._geom, layout_src.rows, layout_src.cols, rows, cols)
    views = cache.get(key, _MISSING)
    if views is _MISSING:
        views = cache[key] = _copy_views(dst, layout_dst, src, layout_src, rows, cols)
    if views is None:
        return False
    np.copyto(views[0], views[1])
    return True


def operand_view(t: LocalTensor, layout, rows: int, cols: int, *, transpose: bool = False):
    """The region ``[0:rows, 0:cols]`` of ``t`` as one strided view cut at the layout's own fractal sides (a
    C-contiguous ``(rows, cols)`` array - ``(cols, rows)`` with ``transpose`` - reshapes to its shape); None
    when the region is not one view. Not cached: callers cache what they build from it."""
    if t.dtype.packed or not isinstance(layout, MatrixLayout):
        return None
    key = ("operand", *_layout_key(layout), rows, cols, transpose)
    g = _GEOMETRY.get(key, _MISSING)
    if g is _MISSING:
        g = None
        axes = layout.linear_axes()
        if axes is not None:
            rs, cs = split_sizes(axes[0][0]), split_sizes(axes[1][0])
            if rs is not None and cs is not None:
                g = _geometry(layout, axes, rows, cols, rs, cs, transpose)
                if g is not None:
                    g = (*_squeeze(g[0], g[1]), g[2])
        if len(_GEOMETRY) >= _TILE_CACHE_LIMIT:
            _GEOMETRY.clear()
        _GEOMETRY[key] = g
    if g is None or g[2] >= t.count:
        return None  # not one view, or past the tensor's end (the piecewise path raises the error)
    return _view(t.arena.raw, t.byte_offset, t.dtype.numpy, g[0], g[1])


def column_inner(layout) -> bool:
    """Whether the elements of a fractal column are adjacent in ``layout`` (nZ, nN: a copy into a transposed
    array reads memory in order)."""
    axes = layout.linear_axes()
    return axes is not None and axes[0][0] > 1 and axes[0][2] == 1


def scratch(t: LocalTensor, specs):
    """Arrays ``(dtype, shape)`` for the operands of one tile operation on ``t``'s core, carved one after the
    other from the launch's scratch buffer (``CoreContext.tile_scratch``; valid while the operation runs), or
    None when they do not fit it (the caller then takes the piecewise path)."""
    ctx = t.arena.ctx
    if ctx is None:
        return None
    raw = ctx.tile_scratch()
    out, off = [], 0
    for dtype, shape in specs:
        dt = np.dtype(dtype)
        size = dt.itemsize
        for n in shape:
            size *= n
        off = -(-off // 64) * 64
        if off + size > raw.size:
            return None
        out.append(raw[off:off + size].view(dt).reshape(shape))
        off += size
    return out


# -- timing-only runs: the same checks without the bytes ------------------------------------------------
#
# On a core of a timing-only launch (``LaunchParams(numerics=False)``, ``LocalTensor.computes`` False) a tile
# operation skips its data work but keeps every check the data work would make: these helpers raise exactly
# where gm_read / gm_write / local_read / local_write would (the layout's plan reaching past the end of the
# memory), from the geometry alone.


def _flat_length(dtype, count: int) -> int:
    """Length of the flat numpy view of ``count`` elements (packed 4-bit types are viewed as bytes)."""
    return dtype.nbytes(count) if dtype.packed else count


def _max_offset(layout, rows: int, cols, itemsize: int) -> int:
    if isinstance(layout, VectorLayout):
        return layout.plan(rows, itemsize).max_offset
    return layout.plan(rows, cols, itemsize).max_offset


def _bounds_message(layout, top: int, have: int, verb: str) -> str:
    return (f"{verb} through {layout!r} touches element offset {top} but buf holds only {have} elements "
            f"(needs at least {top + 1})")


_CHECKED: set = set()  # local_check_once: the geometries proved, for every core and launch


def local_check_once(t: LocalTensor, layout, rows: int, cols: int, what: str, *, write: bool = False) -> None:
    """:func:`local_check`, proved once per (view length, element type, layout value, region): later calls with
    the same geometry skip it (it depends on nothing else: not on the buffer, the core or the offset of the
    view, which only name it in the error)."""
    if t.arena.ctx is None or not isinstance(layout, MatrixLayout):
        local_check(t, layout, rows, cols, what, write=write)
        return
    key = (t.count, t.dtype.name, layout.__class__, layout._geom, layout.rows, layout.cols, rows, cols)
    if key not in _CHECKED:
        local_check(t, layout, rows, cols, what, write=write)  # raises; nothing is recorded then
        if len(_CHECKED) >= _TILE_CACHE_LIMIT:
            _CHECKED.clear()
        _CHECKED.add(key)


def gm_check(gm: GlobalTensor, layout, rows: int, cols, what: str, *, write: bool = False) -> None:
    """The checks of :func:`gm_read` (``write=False``) or :func:`gm_write` of a ``rows x cols`` region, without
    reading or writing a byte: raises the same :class:`OutOfBoundsError`."""
    if write and gm.buffer.read_only:
        raise OutOfBoundsError(f"{what}: GM tensor {gm.name!r} is read-only")
    itemsize = 1 if gm.dtype.packed else gm.dtype.numpy.itemsize
    have = _flat_length(gm.dtype, gm.size)
    top = _max_offset(layout, rows, cols, itemsize)
    if top >= have:
        msg = _bounds_message(layout, top, have, "write" if write else "read")
        raise OutOfBoundsError(f"{what}: GM tensor {gm.name!r}: {msg}")


def local_check(t: LocalTensor, layout, rows: int, cols: int, what: str, *, write: bool = False) -> None:
    """The checks of :func:`local_read` / :func:`local_write` of a ``rows x cols`` region without the bytes:
    raises the same :class:`CapacityError`."""
    itemsize = 1 if t.dtype.packed else t.dtype.numpy.itemsize
    have = _flat_length(t.dtype, t.count)
    top = _max_offset(layout, rows, cols, itemsize)
    if top >= have:
        raise CapacityError(f"{what}: {t!r}: {_bounds_message(layout, top, have, 'write' if write else 'read')}")


def gm_access(gm: GlobalTensor, layout, rows: int, cols: int):
    """The bytes a (rows x cols) region of ``gm`` seen through ``layout`` occupies, as one MemAccess: exact
    for RowMajor, ColumnMajor and VectorLayout, the spanned (bounding) range for fractal layouts. Kept for
    the PTO tile layer; the tile copies use the exact :func:`gm_region_access`."""
    if isinstance(layout, RowMajor):
        return gm.access(0, cols, layout.stride[0], rows)
    if isinstance(layout, ColumnMajor):
        return gm.access(0, rows, layout.stride[1], cols)
    if isinstance(layout, VectorLayout):
        return gm.access(0, rows)
    # Fractal layouts in GM are rare (NZ-format operands); report the spanned range.
    if rows == 0 or cols == 0:
        return gm.access(0, 0)
    return gm.access(0, int(layout.offset(rows - 1, cols - 1)) + 1)


_ACCESS_CACHE: dict = {}
_ACCESS_CACHE_LIMIT = 8192


def _memory_id(t) -> int | None:
    """The identity of the memory a GM or local tensor points into (None for other tensor-like objects, whose
    records are not cached)."""
    cls = t.__class__
    if cls is LocalTensor:
        return t.arena.id
    if cls is GlobalTensor:
        return t.buffer.id
    return None


def region_access(t, layout, rows: int, cols: int | None = None) -> tuple:
    """The bytes the region ``[0:rows, 0:cols]`` of ``t`` (a GM or local tensor) seen through ``layout``
    occupies, as :class:`~catlass_py.arch.events.MemAccess` records (one per strided piece; a
    :class:`VectorLayout` takes ``rows`` elements). Raises :class:`ConfigError` for a layout that cannot say
    which bytes it touches: an instruction's accesses are never left unchecked.

    The records are immutable and cached by (memory, byte offset, element width, element runs): kernels move
    the same tiles through the same buffer slots again and again."""
    memory = _memory_id(t)
    cls = layout.__class__
    if memory is not None and (cls is VectorLayout or isinstance(layout, MatrixLayout)):
        # The records by what determines them (memory, offset, width, layout value, region): a hit skips the
        # footprint. The layout's logical shape is in the key, so a hit passed footprint's region check too.
        fast_key = (memory, t.byte_offset, t.dtype.bits, cls, layout._key(), rows, cols)
        hit = _ACCESS_CACHE.get(fast_key)
        if hit is not None:
            return hit
    else:
        fast_key = None
    footprint = getattr(layout, "footprint", None)
    if footprint is None:
        raise ConfigError(f"{type(layout).__name__} has no footprint(): the bytes an instruction touches through "
                          "it cannot be derived for the pipe model")
    runs = footprint(rows) if isinstance(layout, VectorLayout) else footprint(rows, cols)
    if memory is None:
        return tuple(t.access(*run) for run in runs)
    key = (memory, t.byte_offset, t.dtype.bits, runs)
    accesses = _ACCESS_CACHE.get(key)
    if accesses is None:
        if len(_ACCESS_CACHE) >= _ACCESS_CACHE_LIMIT:
            _ACCESS_CACHE.clear()
        accesses = _ACCESS_CACHE[key] = tuple(t.access(*run) for run in runs)
    if fast_key is not None:
        _ACCESS_CACHE[fast_key] = accesses
    return accesses


def span_access(t, count: int):
    """The first ``count`` elements of ``t`` (a GM or local tensor) as one MemAccess: ``t.access(0, count)``,
    cached like :func:`region_access` (the vector instructions' operands)."""
    memory = _memory_id(t)
    if memory is None:
        return t.access(0, count)
    key = (memory, t.byte_offset, t.dtype.bits, count)
    access = _ACCESS_CACHE.get(key)
    if access is None:
        if len(_ACCESS_CACHE) >= _ACCESS_CACHE_LIMIT:
            _ACCESS_CACHE.clear()
        access = _ACCESS_CACHE[key] = t.access(0, count)
    return access


def gm_region_access(gm: GlobalTensor, layout, rows: int, cols: int | None = None) -> tuple:
    """:func:`region_access` of a GM tensor; an empty region still gives one (empty) record, so that an
    instruction that addresses GM keeps naming it (the cost model charges GM latency to those)."""
    return region_access(gm, layout, rows, cols) or (gm.access(0, 0),)


def pad_cols(data: np.ndarray, cols: int, value=0) -> np.ndarray:
    """``data`` widened to ``cols`` columns with ``value`` (ND->NZ zero-fills the tail of each 32-byte chunk)."""
    if data.shape[1] == cols:
        return data
    out = np.full((data.shape[0], cols), value, dtype=data.dtype)
    out[:, : data.shape[1]] = data
    return out


def pad_rows(data: np.ndarray, rows: int, value=0) -> np.ndarray:
    """``data`` lengthened to ``rows`` rows with ``value``."""
    if data.shape[0] == rows:
        return data
    out = np.full((rows, data.shape[1]), value, dtype=data.dtype)
    out[: data.shape[0]] = data
    return out
