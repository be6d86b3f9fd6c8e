"""Functional composition of layouts: ``composition(A, B)(c) == A(B(c))`` for every coordinate ``c`` of ``B``.

CuTe ``composition`` (``include/cute/layout.hpp`` of NVIDIA/cutlass; pycute ``composition``). TLA
(``include/tla`` of hicann/catlass) ports CuTe's layout but not its algebra; this module supplies it with
CuTe's semantics.

``B`` may be a layout, an integer ``n`` (the layout ``n:1``), ``None`` (CuTe's ``_``: keep ``A``) or a
*tiler*: a tuple of those, applied to the top-level modes of ``A`` one by one. As in CuTe's C++ the result
of a tuple tiler has one mode per tiler entry (modes of ``A`` the tiler does not reach are dropped; pycute
keeps them).

Composition is only representable when ``B``'s strides and sizes cut ``A``'s modes at mode boundaries or
at divisors of them: the *stride divisibility condition* (each stride of ``B`` reaching a mode of ``A``
divides that mode's size or is a multiple of it) and the *shape divisibility condition* (each piece of
``B``'s size divides by the part of ``A``'s mode it takes). CuTe checks these only for static integers;
here breaking either raises :class:`~catlass_py.errors.ArgumentError` naming the condition and the
numbers. Composition also distributes over the modes of ``B``, which is exact only when those modes
address independent digits of ``A``'s mixed radix; a ``B`` whose modes' offsets carry into each other
(e.g. ``(2,2):(0,1) o (2,2):(1,1)``) has no layout result and raises too (CuTe returns a layout that
disagrees with ``A(B(c))`` there). ``B``'s strides must be non-negative: they index ``A``'s domain.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from catlass_py.errors import ArgumentError

from .int_tuple import ceil_div, flatten, is_int, is_tuple
from .layout import Layout, as_layout, coalesce_x


def _positive_shape(name: str, layout: Layout, fn: str) -> None:
    if any(s == 0 for s in flatten(layout.shape)):
        raise ArgumentError(f"{name}: {fn} needs positive extents, got the empty layout {layout}")


def _compose_int(lhs_shape, lhs_stride, rhs_shape: int, rhs_stride: int, lhs: Layout, rhs: Layout) -> Layout:
    """Compose the flat ``lhs`` with the single mode ``rhs_shape:rhs_stride`` (CuTe ``composition_impl``)."""
    if rhs_stride == 0:
        return Layout._make(rhs_shape, 0)
    if not is_tuple(lhs_shape):
        return Layout._make(rhs_shape, rhs_stride * lhs_stride)
    result_shape: list = []
    result_stride: list = []
    rest_shape, rest_stride = rhs_shape, rhs_stride
    for curr_shape, curr_stride in zip(lhs_shape[:-1], lhs_stride[:-1]):
        if rest_shape != 1 and rest_stride % curr_shape and curr_shape % rest_stride:
            raise ArgumentError(
                f"rhs: composition of {lhs} with {rhs} breaks the stride divisibility condition: stride "
                f"{rest_stride} of the right-hand side reaches a mode of size {curr_shape} of the left-hand side and "
                "neither divides the other"
            )
        next_shape = ceil_div(curr_shape, rest_stride)
        next_stride = ceil_div(rest_stride, curr_shape)
        if next_shape != 1 and rest_shape != 1:
            new_shape = min(next_shape, rest_shape)
            if rest_shape % new_shape:
                raise ArgumentError(
                    f"rhs: composition of {lhs} with {rhs} breaks the shape divisibility condition: a size of "
                    f"{rest_shape} cannot be split into {new_shape} elements of a mode of size {curr_shape} and a rest"
                )
            result_shape.append(new_shape)
            result_stride.append(rest_stride * curr_stride)
            rest_shape //= new_shape
        rest_stride = next_stride
    if not result_shape:
        return Layout._make(rest_shape, rest_stride * lhs_stride[-1])
    if rest_shape != 1:
        result_shape.append(rest_shape)
        result_stride.append(rest_stride * lhs_stride[-1])
    if len(result_shape) == 1:
        return Layout._make(result_shape[0], result_stride[0])
    return Layout._make(tuple(result_shape), tuple(result_stride))


def _check_no_carry(flat: Layout, lhs: Layout, rhs: Layout) -> None:
    """Refuse a ``rhs`` whose modes' offsets carry into each other in the mixed radix of ``lhs``.

    Composition distributes over the modes of ``rhs``: ``R(c) = sum_j lhs(rhs_j(c_j))``. That equals
    ``lhs(sum_j rhs_j(c_j))`` when the digits (in the radix of ``lhs``'s bounded modes) the modes of ``rhs``
    produce never add up past a mode's size; otherwise the carry changes the offset and no layout
    represents the composition by modes.
    """
    if not is_tuple(flat.shape):
        return
    modes = [(n, e) for n, e in zip(flatten(rhs.shape), flatten(rhs.stride)) if n > 1 and e != 0]
    if len(modes) < 2:
        return
    bounded = flat.shape[:-1]
    radix = []
    p = 1
    for s in bounded:
        radix.append(p)
        p *= s
    total = [0] * len(bounded)
    for n, e in modes:
        v = np.arange(n, dtype=np.int64) * e
        for k, (s, r) in enumerate(zip(bounded, radix)):
            total[k] += int(((v // r) % s).max())
    for k, s in enumerate(bounded):
        if total[k] >= s:
            raise ArgumentError(
                f"rhs: composition of {lhs} with {rhs} is not representable: the modes of the right-hand side "
                f"overlap in mode {k} (size {s}) of the coalesced left-hand side {flat}, so their offsets carry "
                "(the modes of the right-hand side must address independent digits of the left-hand side)"
            )


def _compose(flat: Layout, rhs_shape, rhs_stride, lhs: Layout, rhs: Layout) -> Layout:
    if is_tuple(rhs_shape):
        parts = [_compose(flat, s, d, lhs, rhs) for s, d in zip(rhs_shape, rhs_stride)]
        return Layout._make(tuple(p.shape for p in parts), tuple(p.stride for p in parts))
    return _compose_int(flat.shape, flat.stride, rhs_shape, rhs_stride, lhs, rhs)


def composition(lhs: Layout, rhs: Any) -> Layout:
    """The layout ``R`` with ``R(c) == lhs(rhs(c))`` for every coordinate ``c`` of ``rhs``.

    ``R`` is compatible with ``rhs`` (same profile as a layout ``rhs``; one mode per entry of a tiler).
    The left-hand side is first flattened with :func:`~catlass_py.tla.layout.coalesce_x`, so ``rhs`` may
    reach past ``size(lhs)`` into its unbounded last mode. CuTe ``composition(lhs, rhs)``
    (``include/cute/layout.hpp``), pycute ``composition``; TLA has none.
    """
    lhs = as_layout("lhs", lhs)
    if rhs is None:
        return lhs
    if is_tuple(rhs):
        if len(rhs) > lhs.rank:
            raise ArgumentError(f"rhs: a tiler of {len(rhs)} modes cannot apply to the rank-{lhs.rank} layout {lhs}")
        parts = [composition(lhs[i], r) for i, r in enumerate(rhs)]
        return Layout._make(tuple(p.shape for p in parts), tuple(p.stride for p in parts))
    if is_int(rhs):
        if rhs <= 0:
            raise ArgumentError(f"rhs: a tile size must be positive, got {rhs}")
        rhs = Layout._make(int(rhs), 1)
    rhs = as_layout("rhs", rhs)
    _positive_shape("lhs", lhs, "composition")
    _positive_shape("rhs", rhs, "composition")
    if any(d < 0 for d in flatten(rhs.stride)):
        raise ArgumentError(f"rhs: the strides of the right-hand side index the left-hand side and must be non-negative, got {rhs}")
    flat = coalesce_x(lhs)
    result = _compose(flat, rhs.shape, rhs.stride, lhs, rhs)
    _check_no_carry(flat, lhs, rhs)
    return result


__all__ = ["composition"]
