"""Complement and inverses of a layout (CuTe ``complement``, ``right_inverse``, ``left_inverse``).

Sources: ``include/cute/layout.hpp`` of NVIDIA/cutlass and pycute's ``layout.py``; TLA (``include/tla`` of
hicann/catlass) has none of them. All three read only the flattened modes and need non-negative strides
(:class:`~catlass_py.errors.ArgumentError` otherwise).
"""

from __future__ import annotations

from typing import Any

from catlass_py.errors import ArgumentError

from .int_tuple import as_int_tuple, ceil_div, flatten, is_int, prefix_product, product
from .layout import Layout, as_layout, coalesce, filter_layout


def _non_negative(layout: Layout, fn: str) -> None:
    if any(d < 0 for d in flatten(layout.stride)):
        raise ArgumentError(f"layout: {fn} needs non-negative strides, got {layout}")
    if any(s == 0 for s in flatten(layout.shape)):
        raise ArgumentError(f"layout: {fn} needs positive extents, got the empty layout {layout}")


def _cotarget_size(cotarget: Any) -> int:
    if isinstance(cotarget, Layout):
        return cotarget.size()
    if is_int(cotarget) or isinstance(cotarget, tuple):
        return product(as_int_tuple("cotarget", cotarget, minimum=0))
    raise ArgumentError(f"cotarget: expected an integer, an int tuple or a layout, got {type(cotarget).__name__}")


def complement(layout: Layout, cotarget: Any = None) -> Layout:
    """The ordered layout ``R`` that fills the holes of ``layout``'s image and repeats it up to ``cotarget``.

    ``R`` has positive increasing strides and its image meets ``layout``'s only at 0. When every stride of
    ``layout`` (sorted, stride-0 and size-1 modes dropped) is a multiple of ``stride * size`` of the mode
    below it, ``(layout, R)`` is a bijection onto ``[0, round_up(size(cotarget), span))``, ``span`` being the
    largest ``stride * size``; otherwise CuTe rounds the gaps down and only the disjointness holds.
    ``cotarget`` is an integer, an int tuple or a layout (only its size matters here) and defaults to
    ``cosize(filter(layout))``.

    A layout whose modes overlap (a stride smaller than the span below it, e.g. non-injective layouts)
    raises :class:`~catlass_py.errors.ArgumentError`. CuTe ``complement(layout[, cotarget])``
    (``layout.hpp``), pycute ``complement``.
    """
    layout = as_layout("layout", layout)
    _non_negative(layout, "complement")
    flat = filter_layout(layout)
    target = flat.cosize() if cotarget is None else _cotarget_size(cotarget)
    shapes, strides = flatten(flat.shape), flatten(flat.stride)
    if strides == (0,):
        return Layout._make(target, 1) if target != 1 else Layout._make(1, 0)
    modes = sorted(zip(strides, shapes))
    rs: list = []
    rd: list = []
    current = 1
    for d, s in modes:
        if d < current:
            raise ArgumentError(
                f"layout: complement of {layout} is undefined: stride {d} lies inside the span {current} of the "
                "modes with smaller strides (the modes overlap; the layout is not injective or interleaves)"
            )
        rs.append(d // current)
        rd.append(current)
        current = d * s
    rs.append(ceil_div(target, current))
    rd.append(current)
    return coalesce(Layout._make(tuple(rs), tuple(rd)))


def right_inverse(layout: Layout) -> Layout:
    """A layout ``R`` with ``layout(R(i)) == i`` for every ``i < size(R)``, as large as the layout allows.

    ``R`` walks the offsets ``0, 1, 2, ...`` for as long as ``layout`` reaches them contiguously
    (``1:0`` when it does not reach 1). For a bijection onto ``[0, size)`` it is the full inverse, so
    ``R(layout(i)) == i`` too. CuTe ``right_inverse`` (``layout.hpp``), pycute ``right_inverse``.
    """
    layout = as_layout("layout", layout)
    _non_negative(layout, "right_inverse")
    c = coalesce(layout)
    shapes, strides = flatten(c.shape), flatten(c.stride)
    pre = prefix_product(shapes)
    rs: list = [1]
    rd: list = [0]
    current = 1
    for d, s, p in sorted(zip(strides, shapes, pre)):
        if s == 1:
            continue
        if d == current:
            rs.append(s)
            rd.append(p)
            current = s * d
    return coalesce(Layout._make(tuple(rs), tuple(rd)))


def left_inverse(layout: Layout) -> Layout:
    """A layout ``L`` with ``L(layout(i)) == i`` for every ``i < size(layout)``.

    Exists for injective layouts whose sorted strides each divide the next (CuTe's "left inverse
    divisibility condition"); anything else raises :class:`~catlass_py.errors.ArgumentError`: a stride-0
    mode or overlapping modes (not injective), or a stride that does not divide the next. CuTe
    ``left_inverse`` (``layout.hpp``; CuTe also returns a quasi-inverse for some non-injective layouts),
    pycute ``left_inverse``.
    """
    layout = as_layout("layout", layout)
    _non_negative(layout, "left_inverse")
    c = coalesce(layout)
    shapes, strides = flatten(c.shape), flatten(c.stride)
    if c.size() == 1:
        return Layout._make(1, 0)
    pre = prefix_product(shapes)
    order = sorted(range(len(shapes)), key=lambda i: strides[i])
    rs: list = []
    rd: list = [0]
    span = 1  # product of rs so far == stride of the previous mode
    prev = None
    for i in order:
        d = strides[i]
        if d == 0:
            raise ArgumentError(
                f"layout: {layout} is not injective (a mode of size {shapes[i]} has stride 0); it has no left inverse"
            )
        if prev is not None and d < strides[prev] * shapes[prev]:
            if d % strides[prev] == 0:
                raise ArgumentError(
                    f"layout: {layout} is not injective (stride {d} falls inside the span "
                    f"{strides[prev] * shapes[prev]} of the mode below it); it has no left inverse"
                )
        if d % span:
            raise ArgumentError(
                f"layout: {layout} breaks the left inverse divisibility condition: stride {d} is not a multiple of "
                f"the stride {span} below it"
            )
        rs.append(d // span)
        rd.append(pre[i])
        span = d
        prev = i
    rs.append(shapes[order[-1]])
    return coalesce(Layout._make(tuple(rs), tuple(rd)))


__all__ = ["complement", "left_inverse", "right_inverse"]
