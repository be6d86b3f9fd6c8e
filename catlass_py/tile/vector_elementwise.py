"""Element-wise vector-core (AIV) instructions on UB tensors and the element-wise epilogue tile ops.

Counterparts: Ascend C ``Add``/``Mul``/``Div``/``Muls``/``Adds``/``Exp``/``Axpy`` (count-based forms) and
CATLASS ``Epilogue::Tile::TileElemWiseAdd``, ``TileElemWiseGelu``, ``TileElemWiseSilu``
(``epilogue/tile/tile_elemwise_*.hpp``). Like the C++ tile ops, every one runs over its whole static
``COMPUTE_LENGTH``, not over the actual (tail-clipped) data: stale UB contents are computed on and never
stored.

Numerics: each instruction rounds once, in its element type, to nearest even (numpy float16/float32
arithmetic; for float16 numpy computes in float32 and rounds once more, which is exact for + - * / because
float32 carries more than 2p+2 bits). ``Axpy`` is modelled as a rounded product followed by a rounded sum
and ``Exp`` as numpy's float32 ``exp`` (the vector unit's own exp approximation is undocumented); results of
the GELU/SiLU paths are therefore compared with CATLASS's tolerance, not bit for bit.

Each instruction is one event on ``PIPE_V`` reading its ``count`` source elements (and the destination for
``Axpy``, which accumulates into it) and writing ``count`` destination elements.
"""

from __future__ import annotations

import numpy as np

from catlass_py.arch.memory import LocalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.arch.spec import get_arch
from catlass_py.errors import ConfigError
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.integers import is_int
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.tile._region import span_access

_VECTOR_DTYPES = ("float16", "float32", "bfloat16", "int32", "int16")


def _check_ub(op: str, *tensors: LocalTensor) -> None:
    for t in tensors:
        if t.position != "UB":
            raise ConfigError(f"{op}: operands must live in UB, got a {t.position} tensor")
    dt = tensors[0].dtype
    for t in tensors[1:]:
        if t.dtype != dt:
            raise ConfigError(f"{op}: all operands must have one dtype, got {dt} and {t.dtype}")


def _emit(t: LocalTensor, op: str, count: int, *sources: LocalTensor) -> None:
    """One PIPE_V instruction event writing ``count`` elements of ``t`` and reading ``count`` of each source."""
    ctx = t.ctx
    if ctx is not None and ctx.bus.instructions:
        ctx.emit(Pipe.V, op, flops=count, nbytes=t.dtype.nbytes(count), info={"dtype": t.dtype.name, "count": count},
                 local_reads=tuple(span_access(src, count) for src in sources),
                 local_writes=(span_access(t, count),))


def _checks(count: int, *tensors: LocalTensor) -> None:
    """The capacity checks of the ``count``-element views an instruction would take (timing-only runs)."""
    for t in tensors:
        t.check(count)


def _scalar(t: LocalTensor, value):
    return np.asarray(value).astype(t.dtype.numpy)[()]


def _binary(op: str, fn, dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int) -> None:
    _check_ub(op, dst, src0, src1)
    if dst.computes:
        with np.errstate(all="ignore"):
            res = fn(src0.view(count), src1.view(count))
        dst.view(count)[:] = res
    else:  # timing-only: the same checks, no bytes
        _checks(count, src0, src1, dst)
    _emit(dst, op, count, src0, src1)


def vector_add(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int) -> None:
    """Ascend C ``Add(dst, src0, src1, count)``: ``dst[i] = src0[i] + src1[i]``."""
    _binary("Add", np.add, dst, src0, src1, count)


def vector_mul(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int) -> None:
    """Ascend C ``Mul(dst, src0, src1, count)``: ``dst[i] = src0[i] * src1[i]``."""
    _binary("Mul", np.multiply, dst, src0, src1, count)


def vector_div(dst: LocalTensor, src0: LocalTensor, src1: LocalTensor, count: int) -> None:
    """Ascend C ``Div(dst, src0, src1, count)``: ``dst[i] = src0[i] / src1[i]``."""
    _binary("Div", np.divide, dst, src0, src1, count)


def vector_muls(dst: LocalTensor, src: LocalTensor, scalar, count: int) -> None:
    """Ascend C ``Muls(dst, src, scalar, count)``: ``dst[i] = src[i] * scalar``."""
    _check_ub("Muls", dst, src)
    if dst.computes:
        with np.errstate(all="ignore"):
            res = src.view(count) * _scalar(src, scalar)
        dst.view(count)[:] = res
    else:  # timing-only: the same checks, no bytes
        _checks(count, src, dst)
    _emit(dst, "Muls", count, src)


def vector_adds(dst: LocalTensor, src: LocalTensor, scalar, count: int) -> None:
    """Ascend C ``Adds(dst, src, scalar, count)``: ``dst[i] = src[i] + scalar``."""
    _check_ub("Adds", dst, src)
    if dst.computes:
        with np.errstate(all="ignore"):
            res = src.view(count) + _scalar(src, scalar)
        dst.view(count)[:] = res
    else:  # timing-only: the same checks, no bytes
        _checks(count, src, dst)
    _emit(dst, "Adds", count, src)


def vector_exp(dst: LocalTensor, src: LocalTensor, count: int) -> None:
    """Ascend C ``Exp(dst, src, count)``: ``dst[i] = e ** src[i]`` (numpy's exp in the element type)."""
    _check_ub("Exp", dst, src)
    if dst.computes:
        with np.errstate(all="ignore"):
            res = np.exp(src.view(count))
        dst.view(count)[:] = res
    else:  # timing-only: the same checks, no bytes
        _checks(count, src, dst)
    _emit(dst, "Exp", count, src)


def vector_axpy(dst: LocalTensor, src: LocalTensor, scalar, count: int) -> None:
    """Ascend C ``Axpy(dst, src, scalar, count)``: ``dst[i] = src[i] * scalar + dst[i]`` (product and sum
    each rounded)."""
    _check_ub("Axpy", dst, src)
    if dst.computes:
        with np.errstate(all="ignore"):
            prod = src.view(count) * _scalar(src, scalar)
            res = prod + dst.view(count)
        dst.view(count)[:] = res
    else:  # timing-only: the same checks, no bytes
        _checks(count, src, dst)
    _emit(dst, "Axpy", count, src, dst)


class TileElemWise:
    """Base of the element-wise epilogue tile ops (CATLASS ``Epilogue::Tile::TileElemWise*<ArchTag, ComputeType,
    COMPUTE_LENGTH>``): the assembly-time checks of the compute type (a vector dtype) and ``COMPUTE_LENGTH`` (a
    positive int), and :meth:`check` of a call's tensors against the compute type. A tile op of your own
    subclasses it, names itself in ``op_name`` and writes ``__call__``: ``self.check(...)`` of its tensors, then the
    instructions of this module (``vector_add``, ``vector_muls``, ``vector_exp`` ...), which declare what they read
    and write, over ``self.compute_length`` elements, with ``PipeBarrier<PIPE_V>`` (``tensor.ctx.pipe_barrier(
    Pipe.V)``, the core of any of its UB tensors) between dependent steps, as :class:`TileElemWiseSilu` does."""

    op_name = "TileElemWise"

    def __init__(self, arch, compute_type, compute_length: int):
        self.arch = get_arch(arch)
        element = compute_type.element if isinstance(compute_type, GemmType) else get_dtype(compute_type)
        if element.name not in _VECTOR_DTYPES:
            raise ConfigError(f"{self.op_name}: compute type must be one of {_VECTOR_DTYPES}, got {element}")
        self.element = element
        if not is_int(compute_length) or compute_length <= 0:
            raise ConfigError(f"{self.op_name}: COMPUTE_LENGTH must be a positive int, got {compute_length!r}")
        self.compute_length = int(compute_length)

    def check(self, *tensors: LocalTensor) -> None:
        """Refuse a call's tensor of another dtype than the compute type (a ``ConfigError`` naming the op)."""
        for t in tensors:
            if t.dtype != self.element:
                raise ConfigError(f"{self.op_name}: assembled for {self.element}, called with a {t.dtype} tensor")

    def __repr__(self) -> str:
        return f"{self.op_name}({self.element.name}, COMPUTE_LENGTH={self.compute_length})"


class TileElemWiseAdd(TileElemWise):
    """CATLASS ``Epilogue::Tile::TileElemWiseAdd<ArchTag, ComputeType, COMPUTE_LENGTH>``:
    ``out = in0 + in1`` over ``COMPUTE_LENGTH`` elements (one Ascend C ``Add``)."""

    op_name = "TileElemWiseAdd"

    def __call__(self, ub_out: LocalTensor, ub_in0: LocalTensor, ub_in1: LocalTensor) -> None:
        self.check(ub_out, ub_in0, ub_in1)
        vector_add(ub_out, ub_in0, ub_in1, self.compute_length)


class TileElemWiseMul(TileElemWise):
    """CATLASS ``Epilogue::Tile::TileElemWiseMul<ArchTag, ComputeType, COMPUTE_LENGTH>``:
    ``out = in0 * in1`` over ``COMPUTE_LENGTH`` elements."""

    op_name = "TileElemWiseMul"

    def __call__(self, ub_out: LocalTensor, ub_in0: LocalTensor, ub_in1: LocalTensor) -> None:
        self.check(ub_out, ub_in0, ub_in1)
        vector_mul(ub_out, ub_in0, ub_in1, self.compute_length)


def _compiler_barrier(t: LocalTensor):
    """``PipeBarrier<PIPE_V>`` on the core owning ``t`` (a no-op outside a core)."""
    ctx = t.ctx
    if ctx is None:
        return lambda: None
    return lambda: ctx.pipe_barrier(Pipe.V)


class TileElemWiseGelu(TileElemWise):
    """CATLASS ``Epilogue::Tile::TileElemWiseGelu<ArchTag, ComputeType, COMPUTE_LENGTH>`` (tanh
    approximation written with a sigmoid):

    ==========================================  =====================
    ``d = x * x``, ``d = d * x``                 x^3
    ``d = x * (1/0.044715) + d``                 (Axpy)
    ``d = d * (-1.595769121 * 0.044715)``        (Muls)
    ``d = exp(d)``, ``d = d + 1``, ``d = x / d``  gelu(x)
    ==========================================  =====================

    ``dst`` and ``src`` must be different buffers (``src`` stays x throughout).

    Each step reads what the previous one wrote. CATLASS's source writes the seven calls back to back and
    relies on the Ascend C compiler's automatic synchronisation, which inserts ``PipeBarrier<PIPE_V>`` between
    dependent vector instructions (Ascend C PipeBarrier page: with automatic synchronisation on, the default
    for kernel projects, the compiler inserts PIPE_V synchronisation). The simulated op issues those barriers
    explicitly, so that the pipe model sees the order the compiled kernel has.
    """

    op_name = "TileElemWiseGelu"
    NEG_SQRT_EIGHT_OVER_PI = float(np.float32(-1.595769121 * 0.044715))
    TANH_APPROX_FACTOR = float(np.float32(1 / 0.044715))

    def __call__(self, dst: LocalTensor, src: LocalTensor) -> None:
        self.check(dst, src)
        n = self.compute_length
        barrier = _compiler_barrier(dst)
        vector_mul(dst, src, src, n)
        barrier()
        vector_mul(dst, dst, src, n)
        barrier()
        vector_axpy(dst, src, self.TANH_APPROX_FACTOR, n)
        barrier()
        vector_muls(dst, dst, self.NEG_SQRT_EIGHT_OVER_PI, n)
        barrier()
        vector_exp(dst, dst, n)
        barrier()
        vector_adds(dst, dst, 1, n)
        barrier()
        vector_div(dst, src, dst, n)


class TileElemWiseSilu(TileElemWise):
    """CATLASS ``Epilogue::Tile::TileElemWiseSilu<ArchTag, ComputeType, COMPUTE_LENGTH>``:
    ``d = -x``, ``d = exp(d)``, ``d = d + 1``, ``d = x / d`` (x * sigmoid(x)), with the
    ``PipeBarrier<PIPE_V>`` the compiler inserts between the dependent steps (see :class:`TileElemWiseGelu`)."""

    op_name = "TileElemWiseSilu"

    def __call__(self, dst: LocalTensor, src: LocalTensor) -> None:
        self.check(dst, src)
        n = self.compute_length
        barrier = _compiler_barrier(dst)
        vector_muls(dst, src, -1, n)
        barrier()
        vector_exp(dst, dst, n)
        barrier()
        vector_adds(dst, dst, 1, n)
        barrier()
        vector_div(dst, src, dst, n)


__all__ = [
    "TileElemWise",
    "TileElemWiseAdd",
    "TileElemWiseGelu",
    "TileElemWiseMul",
    "TileElemWiseSilu",
    "vector_add",
    "vector_adds",
    "vector_axpy",
    "vector_div",
    "vector_exp",
    "vector_mul",
    "vector_muls",
]
