"""Human views of a layout: a one-line :func:`describe` and a ``rich`` offset grid (:func:`show`).

Naming trap: CANN/AscendC write formats capital-first, so CANN "NZ" is CATLASS ``zN`` (and the L0C
format), CANN "ZN" is ``nZ``. :func:`describe` prints both names.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from catlass_py.errors import ArgumentError

from .base import MatrixLayout, as_size
from .fractal import FractalLayout, L0C
from .matrix import ColumnMajor, RowMajor
from .padding import PaddingColumnMajor, PaddingRowMajor
from .vector import VectorLayout

#: largest side :func:`show` renders
SHOW_LIMIT = 64
#: side :func:`show` clips to when no region is given
SHOW_DEFAULT = 32

_FRACTAL_STYLES = ("on grey23", "on navy_blue", "on dark_green", "on dark_red")


def describe(layout) -> str:
    """One line saying how ``layout`` orders its elements, with its CANN format name where one exists.

    No CATLASS counterpart; the wording follows the comments of ``layout/matrix.hpp``.
    """
    name = type(layout).__name__
    if isinstance(layout, VectorLayout):
        return f"VectorLayout: {layout.size} elements, stride {layout.stride[0]}"
    if isinstance(layout, RowMajor):
        return (
            f"RowMajor: {layout.rows}x{layout.cols}, rows contiguous, leading dimension {layout.ldm} (CANN: ND)"
        )
    if isinstance(layout, ColumnMajor):
        return (
            f"ColumnMajor: {layout.rows}x{layout.cols}, columns contiguous, leading dimension {layout.ldm} "
            "(CANN: DN)"
        )
    if isinstance(layout, FractalLayout):
        s0, s1, s2, s3 = layout.shape
        unit = "blocks" if isinstance(layout, (PaddingRowMajor, PaddingColumnMajor)) else "fractals"
        inner = "row-major" if layout.INNER_ORDER == "row" else "column-major"
        outer = "row-major" if layout.OUTER_ORDER == "row" else "column-major"
        text = f"{name}: {s0}x{s2} {unit}, {inner} inside, {unit} {outer}"
        if isinstance(layout, L0C):
            text += " (accumulator"
            text += f"; CANN: {layout.CANN_NAME})"
        elif layout.CANN_NAME:
            text += f" (CANN: {layout.CANN_NAME})"
        text += f"; {layout.rows}x{layout.cols} logical in a {s1}x{s3} grid of {unit}"
        return text
    raise ArgumentError(f"layout: expected a catlass_py layout, got {type(layout).__name__}")


def _side(name, value, full):
    if value is None:
        return min(full, SHOW_DEFAULT)
    v = as_size(name, value)
    if v > SHOW_LIMIT:
        raise ArgumentError(f"{name}: show renders at most {SHOW_LIMIT}, got {v}; pass a smaller region")
    return v


def show(layout, rows=None, cols=None, *, console: Console | None = None, colour: bool = True) -> Table:
    """Print (and return) a ``rich`` Table of the offsets of ``layout`` over ``[0:rows, 0:cols]``.

    Cell ``(r, c)`` holds ``layout.offset(r, c)``; with ``colour`` each fractal (block) of a 4-D
    layout gets a checkerboard background. By default at most the top-left 32x32 is shown; explicit
    regions may reach 64x64 and may extend into the padding. No CATLASS counterpart (a debugging aid
    in the spirit of pycute's ``print_layout``).
    """
    title = describe(layout)
    if isinstance(layout, VectorLayout):
        n = _side("rows", rows, layout.size)
        table = Table(title=title + (f" [0:{n}]" if n < layout.size else ""), show_header=True)
        for i in range(n):
            table.add_column(str(i), justify="right")
        table.add_row(*(str(layout.offset(i)) for i in range(n)))
    elif isinstance(layout, MatrixLayout):
        nr = _side("rows", rows, layout.rows)
        nc = _side("cols", cols, layout.cols)
        if (nr, nc) != (layout.rows, layout.cols):
            title += f" [showing 0:{nr}, 0:{nc}]"
        table = Table(title=title, show_header=True, header_style="bold")
        table.add_column("r\\c", justify="right", style="bold")
        for c in range(nc):
            table.add_column(str(c), justify="right")
        frac = layout.fractal_shape if isinstance(layout, FractalLayout) else None
        for r in range(nr):
            cells = []
            for c in range(nc):
                text = str(layout.offset(r, c))
                if colour and frac is not None:
                    k = ((r // frac[0]) % 2) * 2 + (c // frac[1]) % 2
                    text = f"[{_FRACTAL_STYLES[k]}]{text}[/]"
                cells.append(text)
            table.add_row(str(r), *cells)
    else:
        raise ArgumentError(f"layout: expected a catlass_py layout, got {type(layout).__name__}")
    (console or Console()).print(table)
    return table


__all__ = ["describe", "show", "SHOW_LIMIT"]
