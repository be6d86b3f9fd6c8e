"""Atomic accumulation into global memory: Ascend C ``SetAtomicAdd<T>()`` / ``SetAtomicNone()``.

On the hardware the atomic mode is per-core state: while it is set, every store to GM (fixpipe, MTE3) adds
to what is there instead of overwriting it. The simulator keeps that state per core (:func:`set_atomic_add`,
:func:`set_atomic_none`, :func:`atomic_add_type`) and honours it in the stores that a kernel using it routes
through :class:`AtomicCopyL0CToGm` (a wrapper of any ``CopyL0CToGm``; CATLASS's single-core split-K block
needs it for every K tile after the first). Additions are done in the destination type, rounded to
nearest even (the fp32 atomic add of the GM interface).

Instruction events: ``SetAtomicAdd`` / ``SetAtomicNone`` are scalar instructions (``PIPE_S``) that write the
core's atomic-mode register (``register_access("ATOMIC")``); an atomic store is the wrapped ``Fixpipe`` event
followed by an ``AtomicAdd`` event on ``PIPE_FIX`` that reads and writes the destination region in GM. The store
takes the atomic mode when the scalar unit issues it, not when PIPE_FIX runs it: CATLASS switches the mode around
its stores with no synchronisation at all (``block_mmad_dynamic_single_core_splitk.hpp`` sets it before a
block's fixpipes, ``block_mmad_amla_pv_tp1_spec.hpp`` clears it right after ``copyL0CToGm``). That read is
therefore part of the in-order scalar stream (the pipe model's dispatch rule orders the set before the store)
and is not declared as a PIPE_FIX access, which would make every later ``SetAtomicNone`` look like a race.
"""

from __future__ import annotations

import weakref

import numpy as np

from catlass_py.arch.memory import GlobalTensor, LocalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ConfigError
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.tile._region import gm_check, gm_read, gm_region_access, gm_write

_STATE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_ATOMIC_TYPES = ("float32", "float16", "bfloat16", "int32", "int16", "int8")


def set_atomic_add(ctx, element) -> None:
    """Ascend C ``SetAtomicAdd<element>()`` on core ``ctx``."""
    t = get_dtype(element)
    if t.name not in _ATOMIC_TYPES:
        raise ConfigError(f"SetAtomicAdd: {t} is not an atomic-add type ({', '.join(_ATOMIC_TYPES)})")
    _STATE[ctx] = t
    if ctx.bus.instructions:
        ctx.emit(Pipe.S, "SetAtomicAdd", info={"dtype": t.name}, local_writes=(ctx.register_access("ATOMIC"),))


def set_atomic_none(ctx) -> None:
    """Ascend C ``SetAtomicNone()`` on core ``ctx``."""
    _STATE.pop(ctx, None)
    if ctx.bus.instructions:
        ctx.emit(Pipe.S, "SetAtomicNone", local_writes=(ctx.register_access("ATOMIC"),))


def atomic_add_type(ctx):
    """The element type of the active atomic add on ``ctx``, or None."""
    return _STATE.get(ctx)


class AtomicCopyL0CToGm:
    """A ``CopyL0CToGm`` that honours the core's atomic mode: with ``SetAtomicAdd`` active the stored block
    is added to the destination (in the destination type) instead of replacing it. Without it, it is the
    wrapped copy. Counterpart of the hardware behaviour of ``Fixpipe`` under ``SetAtomicAdd``."""

    def __init__(self, inner):
        if isinstance(inner, AtomicCopyL0CToGm):
            inner = inner.inner
        self.inner = inner
        self.gm_type = inner.gm_type

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def __call__(self, dst: GlobalTensor, src: LocalTensor, layout_dst, layout_src, *args, **kwargs) -> None:
        ctx = src.ctx
        atomic = atomic_add_type(ctx) if ctx is not None else None
        if atomic is None:
            self.inner(dst, src, layout_dst, layout_src, *args, **kwargs)
            return
        if atomic != dst.dtype:
            raise ConfigError(f"AtomicAdd: SetAtomicAdd<{atomic}> but the fixpipe stores {dst.dtype}")
        m, n = layout_dst.rows, layout_dst.cols
        compute = src.computes
        fetch = gm_read if compute else gm_check  # timing-only: the same checks, no bytes
        old = fetch(dst, layout_dst, m, n, "Fixpipe (atomic add)") if m and n else None
        self.inner(dst, src, layout_dst, layout_src, *args, **kwargs)
        if not (m and n):
            return
        if compute:
            new = gm_read(dst, layout_dst, m, n, "Fixpipe (atomic add)")
            with np.errstate(all="ignore"):
                total = (old + new).astype(old.dtype)
            gm_write(dst, layout_dst, total, "Fixpipe (atomic add)")
        else:
            gm_check(dst, layout_dst, m, n, "Fixpipe (atomic add)", write=True)
        if ctx.bus.instructions:
            region = gm_region_access(dst, layout_dst, m, n)
            ctx.emit(Pipe.FIX, "AtomicAdd", nbytes=dst.dtype.nbytes(m * n), gm_reads=region, gm_writes=region,
                     info={"m": m, "n": n, "dtype": dst.dtype.name})

    def __repr__(self) -> str:
        return f"AtomicCopyL0CToGm({self.inner!r})"


__all__ = ["AtomicCopyL0CToGm", "atomic_add_type", "set_atomic_add", "set_atomic_none"]
