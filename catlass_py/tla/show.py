"""A ``rich`` grid of the offsets of a TLA layout, hierarchical modes marked (:func:`show`).

No TLA counterpart; a debugging aid in the spirit of CuTe's ``print_layout`` (``include/cute/util/print.hpp``
of NVIDIA/cutlass) and of :func:`catlass_py.layout.show` for the 1.x layouts.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from catlass_py.errors import ArgumentError

from . import int_tuple as it
from .int_tuple import is_int, is_tuple, product
from .layout import Layout, as_layout

#: largest side :func:`show` renders
SHOW_LIMIT = 64
#: side :func:`show` clips to when no region is given
SHOW_DEFAULT = 32

_BLOCK_STYLES = ("on grey23", "on navy_blue", "on dark_green", "on dark_red")


def _side(name: str, value: Any, full: int) -> int:
    if value is None:
        return min(full, SHOW_DEFAULT)
    if not is_int(value) or value < 0:
        raise ArgumentError(f"{name}: expected a non-negative integer, got {value!r}")
    if value > SHOW_LIMIT:
        raise ArgumentError(f"{name}: show renders at most {SHOW_LIMIT}, got {value}; pass a smaller region")
    return int(value)


def _label(i: int, mode_shape: Any) -> str:
    """``i`` and, for a hierarchical mode, its natural coordinate inside the mode."""
    if not is_tuple(mode_shape):
        return str(i)
    crd = it._idx2crd(i, mode_shape)
    return f"{i} {_fmt(crd)}"


def _fmt(t: Any) -> str:
    if is_tuple(t):
        return "(" + ",".join(_fmt(x) for x in t) + ")"
    return str(t)


def _block(i: int, mode_shape: Any) -> int:
    """Index of the innermost block (the first sub-mode) ``i`` falls in; 0 for an integer mode."""
    if not is_tuple(mode_shape) or not mode_shape:
        return 0
    inner = product(mode_shape[0])
    return i // inner if inner else 0


def show(layout: Layout, rows: Any = None, cols: Any = None, *, console: Console | None = None,
         colour: bool = True) -> Table:
    """Print (and return) a ``rich`` Table of the offsets of a rank-1 or rank-2 TLA layout.

    Cell ``(r, c)`` holds ``layout((r, c))`` with ``r``, ``c`` 1-D indices into the two modes; a rank-1
    layout is one row and ``rows`` is its length. Headers of a hierarchical mode show each index's
    natural coordinate in the mode (``17 (1,1)`` in a ``(16, n)`` mode); with ``colour`` the blocks of
    the first sub-mode of each hierarchical mode (the fractals) get a checkerboard background, and cells
    outside the origin shape (padding) are dimmed. By default at most 32 x 32 cells are shown; explicit
    regions may reach 64 x 64.
    """
    layout = as_layout("layout", layout)
    if layout.rank > 2:
        raise ArgumentError(
            f"layout: show draws rank-1 and rank-2 layouts, got rank {layout.rank} ({layout}); select() two modes first"
        )
    title = f"{layout}  origin_shape {_fmt(layout.origin_shape)}"
    origin = layout.origin_shape
    if layout.rank == 1:
        mode = layout.shape[0] if is_tuple(layout.shape) else layout.shape
        n = _side("rows", rows, product(mode))
        if n < product(mode):
            title += f" [0:{n}]"
        table = Table(title=title, show_header=True, header_style="bold")
        for i in range(n):
            table.add_column(_label(i, mode), justify="right")
        crd = (lambda i: (i,)) if is_tuple(layout.shape) else (lambda i: i)
        cells = []
        for i in range(n):
            text = str(layout._eval(crd(i)))
            if colour:
                if i >= origin[0]:
                    text = f"[dim]{text}[/]"
                elif is_tuple(mode):
                    text = f"[{_BLOCK_STYLES[(_block(i, mode) % 2)]}]{text}[/]"
            cells.append(text)
        table.add_row(*cells)
    else:
        m0, m1 = layout.shape
        nr = _side("rows", rows, product(m0))
        nc = _side("cols", cols, product(m1))
        if (nr, nc) != (product(m0), product(m1)):
            title += f" [showing 0:{nr}, 0:{nc}]"
        table = Table(title=title, show_header=True, header_style="bold")
        table.add_column("r\\c", justify="right", style="bold")
        for c in range(nc):
            table.add_column(_label(c, m1), justify="right")
        hier = is_tuple(m0) or is_tuple(m1)
        for r in range(nr):
            cells = []
            for c in range(nc):
                text = str(layout._eval((r, c)))
                if colour:
                    if r >= origin[0] or c >= origin[1]:
                        text = f"[dim]{text}[/]"
                    elif hier:
                        k = (_block(r, m0) % 2) * 2 + _block(c, m1) % 2
                        text = f"[{_BLOCK_STYLES[k]}]{text}[/]"
                cells.append(text)
            table.add_row(_label(r, m0), *cells)
    (console or Console()).print(table)
    return table


__all__ = ["SHOW_DEFAULT", "SHOW_LIMIT", "show"]
