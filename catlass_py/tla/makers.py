"""TLA's layout makers for Ascend formats, and the bridge from the 1.x layouts.

CATLASS writes the Ascend formats as TLA layouts whose two top-level modes are rows and columns; a fractal
format nests each mode as ``(inside a fractal, number of fractals)``. With ``C0 = 32 bytes / element``
(:attr:`catlass_py.numerics.DType.c0`), a fractal of ``512 bytes = 16 * C0`` elements and ``Rr``/``Cr``
the rows/columns rounded up to the fractal::

    tag           shape                                  stride
    RowMajor      (rows, cols)                           (cols, 1)
    ColumnMajor   (rows, cols)                           (1, rows)
    VectorLayout  (cols,)                                (1,)
    zN            ((16, Rr/16), (C0, Cr/C0))             ((C0, 16*C0), (1, Rr*C0))
    zZ            ((16, Rr/16), (C0, Cr/C0))             ((C0, Cr*16), (1, 16*C0))
    nZ            ((C0, Rr/C0), (16, Cr/16))             ((1, Cr*C0), (C0, 16*C0))
    L0C           ((16, Rr/16), (16, Cr/16))             ((16, 256), (1, Rr*16))

and the origin shape ``(rows, cols)`` (``(cols,)`` for a vector). Sources: ``MakeLayout<Element,
LayoutTag>(rows, cols)``, ``MakeLayoutL0C``, ``MakeLayoutFromTag`` and ``GetTileLayout`` in
``include/tla/layout.hpp``; the L0 formats per architecture from ``Gemm::helper::L0ALayoutSelector``
(``include/catlass/gemm/helper.hpp``: L0A is zZ on Atlas A2 and zN on Ascend 950, L0B is nZ) of
hicann/catlass. No CuTe counterpart.

Module imports stay within :mod:`catlass_py.errors` and :mod:`catlass_py.numerics`; the 1.x layouts are
read through their ``shape``/``stride`` fields.
"""

from __future__ import annotations

from typing import Any

from catlass_py.errors import ArgumentError
from catlass_py.numerics import get_dtype

from .int_tuple import as_int_tuple, ceil_div, depth, is_int, is_tuple, rank, round_up
from .layout import Layout, as_layout

#: rows (or columns) of a cube fractal (CATLASS ``C0_NUM_PER_FRACTAL``)
C0_NUM_PER_FRACTAL = 16

#: the tags ``MakeLayout<Element, LayoutTag>`` accepts (Atlas A2 and Ascend 950; ``Weight4BitnZ`` is not modelled)
TAGS = ("RowMajor", "ColumnMajor", "VectorLayout", "zN", "zZ", "nZ", "L0C")

_FP4 = frozenset({"float4_e2m1fn", "float4_e1m2"})
_ARCH_L0A = {"AtlasA2": "zZ", "Ascend950": "zN"}


def _tag_name(tag: Any) -> str:
    name = tag if isinstance(tag, str) else getattr(tag, "__name__", None)
    if name not in TAGS:
        raise ArgumentError(f"tag: expected one of {TAGS} (a name or a catlass_py.layout class), got {tag!r}")
    return name


def _extent(name: str, v: Any) -> int:
    if not is_int(v) or v < 0:
        raise ArgumentError(f"{name}: expected a non-negative integer, got {v!r}")
    return int(v)


def make_layout_tag(dtype: Any, tag: Any, rows: Any, cols: Any) -> Layout:
    """The TLA layout of a ``rows x cols`` matrix of ``dtype`` in the format ``tag``.

    TLA ``MakeLayout<Element, LayoutTag>(rows, cols)`` (``include/tla/layout.hpp``); ``tag`` is a name from
    :data:`TAGS` or the matching ``catlass_py.layout`` class. ``VectorLayout`` uses ``cols`` only. Packed
    fp4 row/column-major matrices round the leading dimension up to 2 elements, as TLA does on Ascend 950.
    """
    dt = get_dtype(dtype)
    name = _tag_name(tag)
    rows = _extent("rows", rows)
    cols = _extent("cols", cols)
    c0 = dt.c0
    frac = C0_NUM_PER_FRACTAL * c0
    f16 = C0_NUM_PER_FRACTAL
    if name == "VectorLayout":
        return Layout._make((cols,), (1,), (cols,))
    if name == "RowMajor":
        ld = round_up(cols, 2) if dt.name in _FP4 else cols
        return Layout._make((rows, cols), (ld, 1), (rows, cols))
    if name == "ColumnMajor":
        ld = round_up(rows, 2) if dt.name in _FP4 else rows
        return Layout._make((rows, cols), (1, ld), (rows, cols))
    if name == "zN":
        return Layout._make(
            ((f16, ceil_div(rows, f16)), (c0, ceil_div(cols, c0))),
            ((c0, frac), (1, round_up(rows, f16) * c0)),
            (rows, cols),
        )
    if name == "zZ":
        return Layout._make(
            ((f16, ceil_div(rows, f16)), (c0, ceil_div(cols, c0))),
            ((c0, round_up(cols, c0) * f16), (1, frac)),
            (rows, cols),
        )
    if name == "L0C":
        return make_layout_l0c(rows, cols)
    # nZ
    return Layout._make(
        ((c0, ceil_div(rows, c0)), (f16, ceil_div(cols, f16))),
        ((1, round_up(cols, f16) * c0), (c0, frac)),
        (rows, cols),
    )


def make_layout_l0c(rows: Any, cols: Any) -> Layout:
    """The accumulator layout of a ``rows x cols`` L0C tile: zN with 16 x 16 fractals whatever the dtype.

    TLA ``MakeLayoutL0C(rows, cols)`` (``include/tla/layout.hpp``).
    """
    rows = _extent("rows", rows)
    cols = _extent("cols", cols)
    f = C0_NUM_PER_FRACTAL
    return Layout._make(
        ((f, ceil_div(rows, f)), (f, ceil_div(cols, f))),
        ((f, f * f), (1, round_up(rows, f) * f)),
        (rows, cols),
    )


def _arch_name(arch: Any) -> str:
    name = arch if isinstance(arch, str) else getattr(arch, "name", None)
    if name not in _ARCH_L0A:
        raise ArgumentError(f"arch: expected one of {tuple(_ARCH_L0A)} (or an ArchSpec), got {arch!r}")
    return name


def make_layout_l0a(dtype: Any, rows: Any, cols: Any, arch: Any = "AtlasA2") -> Layout:
    """The L0A layout of an ``rows x cols`` (m x k) tile: zZ on Atlas A2, zN on Ascend 950.

    TLA ``MakeLayout<Element, LayoutTag>(rows, cols)`` with the tag of CATLASS
    ``Gemm::helper::L0ALayoutSelector<ArchTag>`` (``include/catlass/gemm/helper.hpp``, the ``LayoutTagL0A``
    of the TLA tile copies in ``gemm/tile/tile_copy.hpp``); ``arch`` is
    ``"AtlasA2"``, ``"Ascend950"`` or an object with that ``name`` (an ``ArchSpec``).
    """
    return make_layout_tag(dtype, _ARCH_L0A[_arch_name(arch)], rows, cols)


def make_layout_l0b(dtype: Any, rows: Any, cols: Any) -> Layout:
    """The L0B layout of a ``rows x cols`` (k x n) tile: nZ on every architecture.

    TLA ``MakeLayout<Element, layout::nZ>(rows, cols)``, the ``LayoutTagL0B`` of CATLASS's TLA tile copies
    (``include/catlass/gemm/tile/tile_copy.hpp``).
    """
    return make_layout_tag(dtype, "nZ", rows, cols)


def make_layout_from_tag(layout: Any) -> Layout:
    """The TLA layout with the same offsets as the 1.x layout ``layout`` (a ``catlass_py.layout`` object).

    TLA ``MakeLayoutFromTag(tag)`` (``include/tla/layout.hpp``): a 1-D layout becomes ``(n,):(stride,)``, a
    2-D one (RowMajor, ColumnMajor) keeps its shape and stride, a 4-D one (zN, nZ, zZ, nN, L0C and the
    padding layouts) ``((s0, s1), (s2, s3)):((t0, t1), (t2, t3))``; the origin shape is the logical
    ``(rows, cols)``. TLA accepts RowMajor, ColumnMajor, VectorLayout, zN, nZ and L0C; the other 4-D
    layouts follow the same rule. Every offset agrees: ``result((r, c)) == layout.offset(r, c)``.
    """
    shp = getattr(layout, "shape", None)
    std = getattr(layout, "stride", None)
    if not isinstance(shp, tuple) or not isinstance(std, tuple) or len(shp) != len(std) or len(shp) not in (1, 2, 4):
        raise ArgumentError(
            f"layout: expected a catlass_py.layout layout (1-D, 2-D or 4-D shape/stride), got {type(layout).__name__}"
        )
    shp = as_int_tuple("layout.shape", shp, minimum=0)
    std = as_int_tuple("layout.stride", std)
    if len(shp) == 1:
        return Layout._make(shp, std, shp)
    rows = _extent("layout.rows", getattr(layout, "rows", None))
    cols = _extent("layout.cols", getattr(layout, "cols", None))
    if len(shp) == 2:
        return Layout._make(shp, std, (rows, cols))
    return Layout._make(((shp[0], shp[1]), (shp[2], shp[3])), ((std[0], std[1]), (std[2], std[3])), (rows, cols))


def _crop(origin: tuple, tile: tuple, coord: tuple) -> tuple:
    return tuple(min(t, o - c if c < o else 0) for o, t, c in zip(origin, tile, coord))


def _flat(name: str, value: Any, n: int | None) -> tuple:
    if value.__class__ is tuple and value and (n is None or len(value) == n):  # the common case, checked at once
        for v in value:
            if v.__class__ is not int or v < 0:
                break
        else:
            return value
    value = as_int_tuple(name, value, minimum=0)
    if not is_tuple(value) or depth(value) != 1 or (n is not None and len(value) != n) or not value:
        want = f"a flat tuple of {n} extents" if n is not None else "a non-empty flat tuple"
        raise ArgumentError(f"{name}: expected {want}, got {value!r}")
    return value


def get_tile_layout(layout: Layout, tile_shape: Any, coord: Any) -> Layout:
    """The layout of a ``tile_shape`` tile at element coordinate ``coord`` of ``layout``.

    The strides stay; the shape becomes the tile's (a fractal layout re-counts its fractals:
    ``((s00, ceil(rows/s00)), (s10, ceil(cols/s10)))``, or the one-nested forms of the MX-scale layouts);
    the origin shape is the tile clipped to what remains of ``layout``'s origin shape from ``coord`` on
    (the tail tile's logical size). TLA ``GetTileLayout(layout, tileShape, coord)``
    (``include/tla/layout.hpp``). ``tile_shape`` and ``coord`` are flat tuples of the layout's rank
    (rank 2 for a fractal layout).
    """
    layout = as_layout("layout", layout)
    tile = _flat("tile_shape", tile_shape, None)
    coord = _flat("coord", coord, len(tile))
    key = (layout, tile, coord)
    hit = _TILE_LAYOUTS.get(key)
    if hit is None:
        hit = _tile_layout(layout, tile, coord)
        if len(_TILE_LAYOUTS) >= 4096:
            _TILE_LAYOUTS.clear()
        _TILE_LAYOUTS[key] = hit
    return hit


_TILE_LAYOUTS: dict = {}  # (layout, tile, coord) -> get_tile_layout's result (layouts are immutable)


def _tile_layout(layout: Layout, tile: tuple, coord: tuple) -> Layout:
    origin = _crop(layout.origin_shape, tile, coord) if len(layout.origin_shape) == len(tile) else None
    if layout.depth <= 1:
        if layout.rank != len(tile):
            raise ArgumentError(
                f"tile_shape: a depth-1 layout takes a tile of its rank {layout.rank}, got {tile!r} for {layout}"
            )
        strides = layout.stride if is_tuple(layout.stride) else (layout.stride,)
        return Layout._make(tile, strides, origin)
    if layout.rank != 2 or len(tile) != 2:
        raise ArgumentError(f"tile_shape: a fractal (depth-2) layout takes a (rows, cols) tile, got {tile!r} for {layout}")
    rows, cols = tile
    s0, s1 = layout.shape
    if layout.depth != 2 or rank(s0) > 2 or rank(s1) > 2:
        raise ArgumentError(f"layout: GetTileLayout handles fractal layouts ((a, b), (c, d)) only, got {layout}")
    if not is_tuple(s0):
        c0 = s1[0]
        shape = (rows, (c0, ceil_div(cols, c0)))
    elif not is_tuple(s1):
        c0 = s0[0]
        shape = ((c0, ceil_div(rows, c0)), cols)
    else:
        r0, k0 = s0[0], s1[0]
        if r0 == 0 or k0 == 0:
            raise ArgumentError(f"layout: fractal sides must be positive, got {layout}")
        shape = ((r0, ceil_div(rows, r0)), (k0, ceil_div(cols, k0)))
    return Layout._make(shape, layout.stride, origin)


__all__ = [
    "C0_NUM_PER_FRACTAL",
    "TAGS",
    "get_tile_layout",
    "make_layout_from_tag",
    "make_layout_l0a",
    "make_layout_l0b",
    "make_layout_l0c",
    "make_layout_tag",
]
