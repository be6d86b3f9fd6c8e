"""Layout division (tiling): split a layout into tiles and the layout of the tiles.

``logical_divide(A, B) = composition(A, make_layout(B, complement(B, size(A))))``: mode 0 holds the
elements ``B`` selects, mode 1 iterates over the repetitions of ``B``. A tuple tiler divides mode by mode.
The other divides rearrange the same result::

    layout shape      (M, N, L, ...)      tiler <TileM, TileN>
    logical_divide    ((TileM, RestM), (TileN, RestN), L, ...)
    zipped_divide     ((TileM, TileN), (RestM, RestN, L, ...))
    tiled_divide      ((TileM, TileN), RestM, RestN, L, ...)
    flat_divide       (TileM, TileN, RestM, RestN, L, ...)

CuTe ``logical_divide``, ``zipped_divide``, ``tiled_divide``, ``flat_divide`` (``include/cute/layout.hpp``
of NVIDIA/cutlass; pycute ``layout.py``). TLA (``include/tla`` of hicann/catlass) tiles tensors with
``GetTile``/``TileView`` instead (:mod:`catlass_py.tla.tensor`).

Tilers: a layout, an integer ``n`` (``n:1``), ``None`` (CuTe ``_``: leave the mode whole) or a tuple of
tilers (by mode; modes past the tiler's length are kept as they are).
"""

from __future__ import annotations

from typing import Any

from catlass_py.errors import ArgumentError

from .complement import complement
from .composition import composition
from .int_tuple import is_int, is_tuple
from .layout import Layout, as_layout


def _tiler_layout(name: str, tiler: Any) -> Layout:
    if is_int(tiler):
        if tiler <= 0:
            raise ArgumentError(f"{name}: a tile size must be positive, got {tiler}")
        return Layout._make(int(tiler), 1)
    return as_layout(name, tiler)


def _by_mode(fn, layout: Layout, tiler: tuple) -> Layout:
    if len(tiler) > layout.rank:
        raise ArgumentError(f"tiler: a tiler of {len(tiler)} modes cannot apply to the rank-{layout.rank} layout {layout}")
    modes = list(layout)
    parts = [fn(modes[i], t) for i, t in enumerate(tiler)] + modes[len(tiler):]
    return Layout._make(tuple(p.shape for p in parts), tuple(p.stride for p in parts))


def logical_divide(layout: Layout, tiler: Any) -> Layout:
    """``composition(layout, make_layout(tiler, complement(tiler, size(layout))))``, by mode for a tuple
    tiler. Mode 0 of each divided mode is the tile, mode 1 the tiles. CuTe ``logical_divide``
    (``layout.hpp``), pycute ``logical_divide``.
    """
    layout = as_layout("layout", layout)
    if tiler is None:
        return layout
    if is_tuple(tiler):
        return _by_mode(logical_divide, layout, tiler)
    t = _tiler_layout("tiler", tiler)
    rest = complement(t, layout.size())
    return composition(layout, Layout._make((t.shape, rest.shape), (t.stride, rest.stride)))


def _unzip(layout: Layout, tiler: Any) -> Layout:
    """Gather the rank-2 modes at the terminals of ``tiler`` into ``((tiles...), (rests..., extra modes))``.

    CuTe ``tile_unzip``/``zip2_by`` (``layout.hpp``), pycute ``hier_unzip``; a ``None`` tiler entry
    contributes the trivial tile ``1:0`` and its whole mode as the rest (pycute).
    """
    if tiler is None:
        return Layout._make((1, layout.shape), (0, layout.stride))
    if not is_tuple(tiler):
        return layout
    modes = list(layout)
    split = [_unzip(modes[i], t) for i, t in enumerate(tiler)]
    firsts = [s[0] for s in split]
    seconds = [s[1] for s in split] + modes[len(tiler):]
    return Layout._make(
        (tuple(m.shape for m in firsts), tuple(m.shape for m in seconds)),
        (tuple(m.stride for m in firsts), tuple(m.stride for m in seconds)),
    )


def zipped_divide(layout: Layout, tiler: Any) -> Layout:
    """``logical_divide`` with the tiles gathered into mode 0 and all the rests into mode 1:
    ``((TileM, TileN), (RestM, RestN, L, ...))``. ``zipped_divide(A, B)[0] == composition(A, B)``.

    CuTe ``zipped_divide`` (``layout.hpp``), pycute ``zipped_divide``.
    """
    layout = as_layout("layout", layout)
    if is_tuple(tiler):
        return _unzip(logical_divide(layout, tiler), tiler)
    if tiler is None:
        return _unzip(layout, None)
    return logical_divide(layout, tiler)


def tiled_divide(layout: Layout, tiler: Any) -> Layout:
    """``zipped_divide`` with its rest mode unpacked: ``((TileM, TileN), RestM, RestN, L, ...)``.

    CuTe ``tiled_divide`` (``layout.hpp``), pycute ``tiled_divide``.
    """
    z = zipped_divide(layout, tiler)
    parts = [z[0]] + list(z[1])
    return Layout._make(tuple(p.shape for p in parts), tuple(p.stride for p in parts))


def flat_divide(layout: Layout, tiler: Any) -> Layout:
    """``zipped_divide`` with both modes unpacked: ``(TileM, TileN, RestM, RestN, L, ...)``.

    CuTe ``flat_divide`` (``layout.hpp``).
    """
    z = zipped_divide(layout, tiler)
    parts = list(z[0]) + list(z[1])
    return Layout._make(tuple(p.shape for p in parts), tuple(p.stride for p in parts))


__all__ = ["flat_divide", "logical_divide", "tiled_divide", "zipped_divide"]
