"""Shared plumbing of the PTO instructions: the arch of the cores tiles are bound to, and the access records
every instruction publishes for the pipe model (:meth:`catlass_py.arch.CoreContext.emit`).

An instruction lists every byte it reads and writes: the tile regions it touches (a region of a tile seen
through its layout, or a tile's whole buffer), the GM regions, and the special-purpose registers. Helpers
here turn tiles into :class:`~catlass_py.arch.events.MemAccess` records; building them costs time, so
instructions first ask :func:`listening`.
"""

from __future__ import annotations

import numpy as np

from catlass_py.errors import ConfigError
from catlass_py.integers import offset_runs
from catlass_py.tile._region import region_access


def listening(ctx) -> bool:
    """True when someone records instruction events on ``ctx`` (build the access records only then)."""
    return ctx is not None and ctx.bus.instructions


def arch_of(what: str, *tiles):
    """The arch of the cores the tiles are bound to (:class:`ConfigError` for unbound tiles, tiles outside a core
    or tiles of cores of different archs)."""
    from catlass_py.tile.pto.tile import Tile

    archs = []
    for t in tiles:
        if not isinstance(t, Tile):
            raise ConfigError(f"{what}: expected PTO Tiles, got {t!r}")
        ctx = t._bound().ctx
        if ctx is None:
            raise ConfigError(f"{what}: {t} is bound to a buffer outside any core")
        archs.append(ctx.arch)
    if any(a.name != archs[0].name for a in archs):
        raise ConfigError(f"{what}: tiles are bound to cores of different archs ({', '.join(a.name for a in archs)})")
    return archs[0]


def is950(arch) -> bool:
    """Ascend 950 (arch code 3510 and later) rather than Atlas A2/A3."""
    return arch.arch_code >= 3510


def region(tile, rows: int | None = None, cols: int | None = None, *, row0: int = 0, col0: int = 0) -> tuple:
    """Access records of the region ``[row0:row0+rows, col0:col0+cols]`` of ``tile`` through its layout (default:
    its valid region from the origin). Empty regions touch nothing."""
    rows = tile.valid_row if rows is None else rows
    cols = tile.valid_col if cols is None else cols
    if rows <= 0 or cols <= 0:
        return ()
    t = tile._bound()
    if row0 == 0 and col0 == 0:
        return region_access(t, tile.layout, rows, cols)
    return tuple(t.access(*run) for run in window_runs(tile.layout, row0, col0, rows, cols))


def window_runs(layout, row0: int, col0: int, rows: int, cols: int) -> list[tuple[int, int, int, int]]:
    """Element runs ``(start, length, stride, count)`` covering exactly the window ``[row0:row0+rows,
    col0:col0+cols]`` of ``layout`` (equal runs at a constant stride are merged)."""
    r = np.arange(row0, row0 + rows, dtype=np.int64)
    c = np.arange(col0, col0 + cols, dtype=np.int64)
    return list(offset_runs(np.asarray(layout.offset(r[:, None], c[None, :]), dtype=np.int64)))


def whole(tile, nbytes: int | None = None) -> tuple:
    """Access record of the first ``nbytes`` bytes of ``tile``'s buffer (default: all of it)."""
    t = tile._bound()
    if nbytes is None:
        return (t.access(),)
    if nbytes <= 0:
        return ()
    return (t.reinterpret("uint8").access(0, int(nbytes)),)


def emit(ctx, pipe, op: str, *, nbytes: int = 0, flops: int = 0, reads=(), writes=(), gm_reads=(), gm_writes=(),
         **info) -> None:
    """Publish one PTO instruction on ``pipe`` with its local reads/writes (tuples of records, flattened)."""
    ctx.emit(pipe, op, nbytes=int(nbytes), flops=int(flops), gm_reads=tuple(gm_reads), gm_writes=tuple(gm_writes),
             info=info or None, local_reads=_flat(reads), local_writes=_flat(writes))


def _flat(groups) -> tuple:
    out = []
    for g in groups:
        if isinstance(g, tuple):
            out.extend(g)
        else:
            out.append(g)
    return tuple(out)


__all__ = ["arch_of", "burst_copy", "emit", "is950", "listening", "region", "whole", "window_runs"]


def burst_copy(dst, src, dst_elem: int, src_elem: int, n_burst: int, burst_blocks: int, src_gap: int, dst_gap: int,
               what: str) -> tuple:
    """The DMA of ``copy_ubuf_to_cbuf`` (and the other MTE bursts): ``n_burst`` bursts of ``burst_blocks`` 32-byte
    blocks, the source skipping ``src_gap`` and the destination ``dst_gap`` blocks between bursts, from element
    ``src_elem`` of ``src`` to element ``dst_elem`` of ``dst`` (4-bit elements count half bytes and must start on a
    byte). Returns the (reads, writes) access records; :class:`ConfigError` when a burst leaves either tile. The
    bounds come from the tiles' byte sizes; a timing-only destination core (``dst.computes`` False) copies no bytes."""
    bits = src.dtype.bits
    if (src_elem * bits) % 8 or (dst_elem * bits) % 8:
        raise ConfigError(f"{what}: a burst must start on a whole byte of {src.dtype.name}")
    s0, d0 = src_elem * bits // 8, dst_elem * bits // 8
    n = burst_blocks * 32
    st, dt = src._bound().reinterpret("uint8"), dst._bound().reinterpret("uint8")
    ssize, dsize = st.count, dt.count
    spans = [(s0 + k * (n + src_gap * 32), d0 + k * (n + dst_gap * 32)) for k in range(n_burst)]
    for sb, db in spans:
        if sb < 0 or sb + n > ssize:
            raise ConfigError(f"{what}: burst [{sb}, {sb + n}) leaves the {ssize}-byte source {src}")
        if db < 0 or db + n > dsize:
            raise ConfigError(f"{what}: burst [{db}, {db + n}) leaves the {dsize}-byte destination {dst}")
    if dst.computes:
        sraw, draw = st.view(), dt.view()
        for sb, db in spans:
            draw[db: db + n] = sraw[sb: sb + n]
    if not n_burst or not n:
        return (), ()
    if n_burst == 1:
        return (st.access(s0, n),), (dt.access(d0, n),)
    return ((st.access(s0, n, n + src_gap * 32, n_burst),), (dt.access(d0, n, n + dst_gap * 32, n_burst),))
