"""Layout products: reproduce a layout (the block) according to another (the tiler).

``logical_product(A, B) = make_layout(A, composition(complement(A, size(A) * cosize(B)), B))``: mode 0
is ``A``, mode 1 places copies of ``A`` where ``B`` says. A tuple tiler multiplies mode by mode::

    block shape       (M, N, L, ...)      tiler <TileM, TileN>
    logical_product   ((M, TileM), (N, TileN), L, ...)
    zipped_product    ((M, N), (TileM, TileN, L, ...))
    tiled_product     ((M, N), TileM, TileN, L, ...)
    flat_product      (M, N, TileM, TileN, L, ...)

The rank-sensitive :func:`blocked_product` and :func:`raked_product` pair like modes of block and tiler.
CuTe ``logical_product``, ``zipped_product``, ``tiled_product``, ``flat_product``, ``blocked_product``,
``raked_product`` (``include/cute/layout.hpp`` of NVIDIA/cutlass; pycute has the first three); TLA
(``include/tla`` of hicann/catlass) has none.
"""

from __future__ import annotations

from typing import Any

from .complement import complement
from .composition import composition
from .divides import _by_mode, _tiler_layout, _unzip
from .int_tuple import is_tuple
from .layout import Layout, append, as_layout, zip_layouts


def logical_product(block: Layout, tiler: Any) -> Layout:
    """``make_layout(block, composition(complement(block, size(block) * cosize(tiler)), tiler))``, by
    mode for a tuple tiler (``None`` keeps a mode). CuTe ``logical_product`` (``layout.hpp``), pycute
    ``logical_product``.
    """
    block = as_layout("block", block)
    if tiler is None:
        return block
    if is_tuple(tiler):
        return _by_mode(logical_product, block, tiler)
    t = _tiler_layout("tiler", tiler)
    rest = composition(complement(block, block.size() * t.cosize()), t)
    return Layout._make((block.shape, rest.shape), (block.stride, rest.stride))


def zipped_product(block: Layout, tiler: Any) -> Layout:
    """``logical_product`` gathered into ``((M, N), (TileM, TileN, L, ...))`` (CuTe ``zipped_product``)."""
    block = as_layout("block", block)
    if is_tuple(tiler):
        return _unzip(logical_product(block, tiler), tiler)
    if tiler is None:
        return _unzip(block, None)
    return logical_product(block, tiler)


def tiled_product(block: Layout, tiler: Any) -> Layout:
    """``zipped_product`` with mode 1 unpacked: ``((M, N), TileM, TileN, L, ...)`` (CuTe ``tiled_product``)."""
    z = zipped_product(block, tiler)
    parts = [z[0]] + list(z[1])
    return Layout._make(tuple(p.shape for p in parts), tuple(p.stride for p in parts))


def flat_product(block: Layout, tiler: Any) -> Layout:
    """``zipped_product`` with both modes unpacked: ``(M, N, TileM, TileN, L, ...)`` (CuTe ``flat_product``)."""
    z = zipped_product(block, tiler)
    parts = list(z[0]) + list(z[1])
    return Layout._make(tuple(p.shape for p in parts), tuple(p.stride for p in parts))


def _rank_matched_product(block: Layout, tiler: Layout) -> tuple[Layout, Layout]:
    block = as_layout("block", block)
    tiler = as_layout("tiler", tiler)
    r = max(block.rank, tiler.rank)
    result = logical_product(append(block, r), append(tiler, r))
    return result[0], result[1]


def blocked_product(block: Layout, tiler: Layout) -> Layout:
    """Tile ``block`` as a whole over ``tiler``: mode ``i`` of the result is ``(block_i, tiler_i)``.

    Both are first extended to the same rank with ``1:0`` modes; ``result(c)`` of a block coordinate
    inside tile ``t`` is the ``t``-th copy of the block. CuTe ``blocked_product`` (``layout.hpp``: the
    modes are zipped and not coalesced).
    """
    a, b = _rank_matched_product(block, tiler)
    return zip_layouts(a, b)


def raked_product(block: Layout, tiler: Layout) -> Layout:
    """Interleave the copies of ``block`` (a cyclic distribution): mode ``i`` is ``(tiler_i, block_i)``.

    CuTe ``raked_product`` (``layout.hpp``).
    """
    a, b = _rank_matched_product(block, tiler)
    return zip_layouts(b, a)


__all__ = [
    "blocked_product",
    "flat_product",
    "logical_product",
    "raked_product",
    "tiled_product",
    "zipped_product",
]
