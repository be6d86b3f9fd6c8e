"""What CATLASS's two vector-core reductions of fp32 partial sums share (``SplitkReduceAdd`` in
``splitk_matmul.hpp``, ``StreamkReduceAdd`` in ``streamk_matmul.hpp``): checks of the element types, the
GM <-> UB copies, and the add-then-cast step between loading the slices and storing the result; and the
rounding of CATLASS's vector casts of fp32 results (:func:`cast_mode`, also used by ``RemovePaddingNDAndCast``)."""

from __future__ import annotations

from catlass_py.arch.pipes import HardEvent, Pipe
from catlass_py.errors import ConfigError
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.integers import is_int
from catlass_py.layout import RowMajor
from catlass_py.numerics import dtypes as dt
from catlass_py.numerics.rounding import RoundMode
from catlass_py.tile.copy_gm_ub import CopyGm2Ub, CopyUb2Gm
from catlass_py.tile.vector import vector_cast
from catlass_py.tile.vector_elementwise import vector_add


def cast_mode(element_out) -> RoundMode:
    """How CATLASS's vector cores cast fp32 results to the output type: ``CAST_NONE`` to half, ``CAST_RINT`` to
    anything else."""
    return RoundMode.NONE if element_out == dt.FLOAT16 else RoundMode.RINT


def check_positive_int(what: str, name: str, v) -> None:
    """Raise :class:`ConfigError` unless ``v`` (template parameter ``name``) is an int >= 1."""
    if not is_int(v) or v < 1:
        raise ConfigError(f"{what}: {name} must be an int >= 1, got {v!r}")


def reduce_element_types(what: str, element_accumulator, element_out) -> tuple:
    """``(ElementAccumulator, ElementOut)`` as dtypes: float partial sums (cast to the output), or int32 partial
    sums kept as int32 (example 52's ``SplitkReduceAdd<ArchTag, int32_t, int32_t, ...>``; the vector ``Add``
    wraps modulo 2**32)."""
    acc, out = dt.get_dtype(element_accumulator), dt.get_dtype(element_out)
    if acc.kind != "float" and not (acc == dt.INT32 and out == dt.INT32):
        raise ConfigError(f"{what}: ElementAccumulator must be a float type (or int32 reduced to int32), got {acc} "
                          f"-> {out}")
    return acc, out


def reduce_copies(arch, element_accumulator, element_out) -> tuple:
    """The reduction's tile copies: partial sums GM -> UB, results UB -> GM (both row-major)."""
    return (CopyGm2Ub(arch, GemmType(element_accumulator, RowMajor)),
            CopyUb2Gm(arch, GemmType(element_out, RowMajor)))


def add_slices_and_cast(ctx, spec, acc, out, slice_stride: int, count: int, slices: int, event_id: int) -> None:
    """Once the slices are loaded (MTE2 -> V, ``event_id``): add the ``slices`` partial sums of ``count``
    elements, ``slice_stride`` apart in ``acc``, into the first one in slice order (fp32), cast them into ``out``
    unless it is the accumulator type, and hand over to the store (V -> MTE3)."""
    ctx.set_flag(HardEvent.MTE2_V, event_id)
    ctx.wait_flag(HardEvent.MTE2_V, event_id)
    for sl in range(1, slices):
        vector_add(acc, acc, acc[slice_stride * sl], count)
        ctx.pipe_barrier(Pipe.V)
    if spec.element_out != spec.element_accumulator:
        vector_cast(out, acc, cast_mode(spec.element_out), count)
    ctx.set_flag(HardEvent.V_MTE3, event_id)
    ctx.wait_flag(HardEvent.V_MTE3, event_id)


__all__ = ["add_slices_and_cast", "cast_mode", "check_positive_int", "reduce_copies", "reduce_element_types"]
