"""The cube instruction (CATLASS ``Gemm::Tile::TileMmad``, Ascend C ``Mmad``; M pipe).

Its instruction event reads the (m x k) region of L0A and the (k x n) region of L0B, writes the (m x n)
region of L0C (and reads it first when accumulating), reads the n bias values of BT when a bias initialises C,
and carries the Mmad's ``unitFlag`` (CATLASS ``TileMmad::operator()``'s ``unitFlag`` argument, passed to
``MmadParams.unitFlag``).
"""

from __future__ import annotations

import functools

import numpy as np

from catlass_py.arch.memory import LocalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.arch.spec import get_arch
from catlass_py.errors import ConfigError
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.gemm.helper import element_accumulator, l0a_layout, l0b_layout
from catlass_py.layout import L0C
from catlass_py.layout.base import MatrixLayout
from catlass_py.tile._region import (
    _MISSING,
    _cache_of,
    local_accumulate,
    local_check,
    local_check_once,
    local_read,
    local_write,
    column_inner,
    operand_view,
    region_access,
    scratch,
    span_access,
)

# int8 products are at most 2**14 in magnitude, so a float32 dot product of up to 1024 of them is exact
# (partial sums stay within 2**24); int4 products are at most 2**6.
_EXACT_F32_K = {8: 1024, 4: 1 << 18}


def matmul_exact_int(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Exact product of two int8/int4 matrices (k <= 4095) through BLAS, as int32: float32 while every
    partial sum stays below 2**24, float64 beyond. |result| < 2**27, so int32 holds it exactly."""
    k = a.shape[1]
    bits = max(a.dtype.itemsize, b.dtype.itemsize) * 8
    ftype = np.float32 if k <= _EXACT_F32_K.get(bits, 0) else np.float64
    return (a.astype(ftype) @ b.astype(ftype)).astype(np.int32)


class TileMmad:
    """CATLASS ``Gemm::Tile::TileMmad<ArchTag, AType, BType, BiasType>``: ``C = A @ B`` (``init_c``) or
    ``C += A @ B`` on the first m rows, n columns and k depth of L0A (zZ on A2), L0B (nZ) and L0C (zN).

    Whatever lies beyond m, n or k in the L0 buffers is ignored, as on the cube. int8 x int8 accumulates
    exactly in int32 (wrapping like the hardware); fp16/bf16/fp32 accumulate in fp32 (the cube's internal
    summation order is undocumented, so float results are not claimed bit-exact). m, n, k <= 4095.
    """

    def __init__(self, arch, a_type: GemmType, b_type: GemmType, bias_type: GemmType | None = None):
        self.arch = get_arch(arch)
        self.a_type, self.b_type, self.bias_type = a_type, b_type, bias_type
        self.element_a, self.element_b = a_type.element, b_type.element
        self.element_acc = element_accumulator(self.element_a, self.element_b, self.arch)
        self.layout_a = l0a_layout(self.arch)
        self.layout_b = l0b_layout(self.arch)

    def __call__(self, l0c: LocalTensor, l0a: LocalTensor, l0b: LocalTensor, m: int, n: int, k: int,
                 init_c: bool = True, unit_flag: int = 0, *, bias: LocalTensor | None = None,
                 valid_m: int | None = None, data: bool = True, l1_plan=None, l1_init: bool = False) -> None:
        """Issue one Mmad. With ``bias`` (a BT tensor of n accumulator-typed values) C starts from the bias
        row broadcast instead of zero (CATLASS's bias overload).

        ``valid_m`` (a simulator hint, no hardware field): only the first ``valid_m`` rows of C will ever be read
        back (the block stores that many; the rest are padding up to the 16-row fractal). The instruction, its
        event and its checks are those of the whole m x n x k Mmad; the data work of an exact integer product
        may then stop at those rows (at most 16, else the next multiple of 16), leaving the padding rows of L0C
        stale. ``data=False`` (a simulator switch, see ``BlockMmadInstance.mmad_l1_tile``): the instruction, its
        event and its checks, without the data work; the last Mmad of such an L1 tile runs the tile's whole
        product instead (``l1_plan`` from :meth:`l1_product`, starting the accumulator when ``l1_init``), so that
        L0C changes inside an Mmad that declares writing it."""
        limit = self.arch.mmad_max_mnk
        if not (0 <= m <= limit and 0 <= n <= limit and 0 <= k <= limit):
            raise ConfigError(f"TileMmad: m, n, k must be in 0..{limit}, got m={m}, n={n}, k={k}")
        if m == 0 or n == 0:
            return
        layout_a, layout_b, layout_c = self._layouts(m, n, k)
        if data and l0c.computes:
            self._compute(l0c, l0a, l0b, m, n, k, init_c, bias, layout_a, layout_b, layout_c, valid_m)
        elif not data and bias is None:  # the block computes the product itself: the same checks, proved once
            if k:
                local_check_once(l0a, layout_a, m, k, "TileMmad (A)")
                local_check_once(l0b, layout_b, k, n, "TileMmad (B)")
            local_check_once(l0c, layout_c, m, n, "TileMmad (C)", write=True)
            if l1_plan is not None:
                self._run(l1_plan, l1_init)
        else:  # timing-only: the same checks, no bytes
            self._check_only(l0c, l0a, l0b, m, n, k, layout_a, layout_b, layout_c, bias)
        ctx = l0c.ctx
        if ctx is not None and ctx.bus.instructions:
            c_region = region_access(l0c, layout_c, m, n)
            reads = ((region_access(l0a, layout_a, m, k) + region_access(l0b, layout_b, k, n)) if k else ())
            if bias is not None:
                reads += (span_access(bias, n),)
            elif not init_c:
                reads += c_region  # C += A @ B reads the accumulator it updates
            ctx.emit(Pipe.M, "Mmad", flops=2 * m * n * k,
                     nbytes=self.element_a.nbytes(m * k) + self.element_b.nbytes(k * n),
                     local_reads=reads, local_writes=c_region, unit_flag=unit_flag,
                     info={"m": m, "n": n, "k": k, "init_c": init_c, "dtype": self.element_a.name})

    def _compute(self, l0c, l0a, l0b, m, n, k, init_c, bias, layout_a, layout_b, layout_c, valid_m=None) -> None:
        """The Mmad's data work: C = A @ B (or C += A @ B, or C = bias + A @ B) in L0C."""
        if bias is None and k:
            rows = m
            # Rows nobody reads back: an exact integer product computes the rest only (a float product keeps the
            # whole m rows, so that BLAS takes the same path and rounds the same way).
            if valid_m is not None and 0 <= valid_m < m and self.element_acc.kind == "int":
                rows = max(1, valid_m) if valid_m <= 16 else min(m, -(-valid_m // 16) * 16)
            if self._fast(l0c, l0a, l0b, m, n, k, init_c, layout_a, layout_b, layout_c, rows):
                return
        if k == 0:
            acc = None
        else:
            a = local_read(l0a, layout_a, m, k, "TileMmad (A)")
            b = local_read(l0b, layout_b, k, n, "TileMmad (B)")
            acc = self._product(a, b)
        acc_t = self.element_acc.numpy
        if bias is None and not init_c:
            if acc is not None:  # C += A @ B in place (int32 wraps modulo 2**32 like the cube's accumulator)
                local_accumulate(l0c, layout_c, acc.astype(acc_t, copy=False), "TileMmad (C)")
        else:
            if bias is not None:  # C starts from the bias row (BT) broadcast down the m rows
                c = np.repeat(bias.view(n).astype(acc_t)[None, :], m, 0)
                if acc is not None:
                    c += acc.astype(acc_t, copy=False)
            else:
                c = np.zeros((m, n), acc_t) if acc is None else acc.astype(acc_t, copy=False)
            local_write(l0c, layout_c, c, "TileMmad (C)")

    def _fast(self, l0c, l0a, l0b, m, n, k, init_c, layout_a, layout_b, layout_c, rows=None) -> bool:
        """:meth:`_compute` without bias when A, B and C are single strided views of whole fractals: A and B
        cast straight from L0A/L0B into the per-core scratch operands of the BLAS product, the product cast
        (or added, wrapping in int32) straight into L0C - the same values as the piecewise path, without its
        intermediate copies. The views are proved in bounds once per geometry (``_region.operand_view``);
        False when they do not exist, and the caller takes the piecewise path (which reports any error)."""
        cache = _cache_of(l0c)
        if cache is None:
            return False
        if rows is None:
            rows = m
        key = ("mmad", id(self), l0c.arena.id, l0c.byte_offset, l0c.count, l0a.arena.id, l0a.byte_offset,
               l0a.count, l0b.arena.id, l0b.byte_offset, l0b.count, m, n, k, rows)
        plan = cache.get(key, _MISSING)
        if plan is _MISSING:
            plan = cache[key] = self._fast_plan(l0c, l0a, l0b, m, n, k, layout_a, layout_b, layout_c, rows)
        if plan is None:
            return False
        self._run(plan, init_c)
        return True

    def l1_product(self, l0c: LocalTensor, l1a: LocalTensor, layout_l1a, l1b: LocalTensor, layout_l1b, m: int,
                   n: int, k: int, valid_m: int | None = None):
        """A plan computing, in one product, what the Mmads of one L1 tile leave in the m x n accumulator at
        ``l0c``: ``C[0:m, 0:n] (+)= A[0:m, 0:k] @ B[0:k, 0:n]`` with A and B read straight from their L1 tiles
        (``layout_l1a``, ``layout_l1b``), for a block that issues the tile's L1 -> L0 loads and Mmads with
        ``data=False`` (same instructions, events and checks), the last of those Mmads running the plan.
        Exact integer products only: any grouping of K gives the same int32 sums (float32 partial sums stay
        exact up to K = 1024, float64 beyond). None when the regions are not single views in bounds."""
        if self.element_acc.kind != "int" or not k or not m or not n:
            return None
        cache = _cache_of(l0c)
        if cache is None:
            return None
        rows = m
        if valid_m is not None and 0 <= valid_m < m:
            rows = max(1, valid_m) if valid_m <= 16 else min(m, -(-valid_m // 16) * 16)
        # the plan of all m rows, whose first rows serve fewer (_first_rows); else a plan of the rows' own
        for count in (m, rows) if rows != m else (m,):
            key = ("l1 product", id(self), l0c.arena.id, l0c.byte_offset, l0c.count, l1a.arena.id, l1a.byte_offset,
                   l1a.count, layout_l1a.__class__, layout_l1a._key(), l1b.arena.id, l1b.byte_offset, l1b.count,
                   layout_l1b.__class__, layout_l1b._key(), m, n, k, count)
            plan = cache.get(key, _MISSING)
            if plan is _MISSING:
                layout_c = self._layouts(m, n, k)[2]
                plan = cache[key] = self._fast_plan(l0c, l1a, l1b, m, n, k, layout_l1a, layout_l1b, layout_c, count)
            if plan is not None and count != rows:
                plan = _first_rows(plan, m, rows)
            if plan is not None:
                return plan
        return None

    @staticmethod
    def _run(plan, init_c: bool) -> None:
        av, bv, cv, a2, b2, c2, a_in, b_in, c_out, i_out = plan
        np.copyto(a_in, av, casting="unsafe")
        np.copyto(b_in, bv, casting="unsafe")
        np.matmul(a2, b2, out=c2)
        if init_c:
            np.copyto(cv, c_out, casting="unsafe")  # exact: integral products below 2**27, or fp32 -> fp32
        elif i_out is None:
            np.add(cv, c_out, out=cv)
        else:  # C += A @ B in int32, wrapping modulo 2**32 like the cube's accumulator
            np.copyto(i_out, c_out, casting="unsafe")
            np.add(cv, i_out, out=cv)

    def _fast_plan(self, l0c, l0a, l0b, m, n, k, layout_a, layout_b, layout_c, rows):
        """Views of the first ``rows`` rows of A and C (the whole m x k and k x n regions are proved in bounds
        first) and of B, and the scratch operands; None when any is not a single view."""
        if (l0a.arena.ctx is not l0c.arena.ctx or l0b.arena.ctx is not l0c.arena.ctx
                or l0a.dtype is not self.element_a or l0b.dtype is not self.element_b
                or l0c.dtype is not self.element_acc or not isinstance(layout_a, MatrixLayout)
                or not isinstance(layout_b, MatrixLayout)):
            return None
        acc_int = self.element_acc.kind == "int"
        # An exact integer product may read B transposed (any summation order gives the same integers): from a
        # layout whose fractal columns are contiguous (nZ) that cast reads memory in order. Float products keep
        # the row-major B of the piecewise path, so that BLAS sums in the same order.
        b_t = acc_int and column_inner(layout_b)
        if rows != m and (operand_view(l0a, layout_a, m, k) is None or operand_view(l0c, layout_c, m, n) is None):
            return None  # the whole instruction's regions, checked as the piecewise path would
        av = operand_view(l0a, layout_a, rows, k)
        bv = operand_view(l0b, layout_b, k, n, transpose=b_t)
        cv = operand_view(l0c, layout_c, rows, n)
        if av is None or bv is None or cv is None:
            return None
        if acc_int:
            bits = max(self.element_a.numpy.itemsize, self.element_b.numpy.itemsize) * 8
            ftype = np.float32 if k <= _EXACT_F32_K.get(bits, 0) else np.float64
        else:
            ftype = np.float32
        specs = [(ftype, (rows, k)), (ftype, (n, k) if b_t else (k, n)), (ftype, (rows, n))]
        if acc_int:
            specs.append((self.element_acc.numpy, (rows, n)))
        arrays = scratch(l0c, specs)
        if arrays is None:
            return None
        a2, b_in, c2 = arrays[:3]
        i_out = arrays[3].reshape(cv.shape) if acc_int else None
        return (av, bv, cv, a2, b_in.T if b_t else b_in, c2, a2.reshape(av.shape), b_in.reshape(bv.shape),
                c2.reshape(cv.shape), i_out)

    def _check_only(self, l0c, l0a, l0b, m, n, k, layout_a, layout_b, layout_c, bias) -> None:
        """The capacity checks of the Mmad's reads and writes, without computing (timing-only runs)."""
        if k:
            local_check(l0a, layout_a, m, k, "TileMmad (A)")
            local_check(l0b, layout_b, k, n, "TileMmad (B)")
        if bias is not None:
            bias.check(n)
        local_check(l0c, layout_c, m, n, "TileMmad (C)", write=True)

    @functools.lru_cache(maxsize=256)  # noqa: B019 - the tile op is immutable and lives as long as its kernel
    def _layouts(self, m: int, n: int, k: int):
        """How the cube reads L0A/L0B and writes L0C for an (m, n, k) instruction."""
        return (self.layout_a.make_layout(self.element_a, m, k), self.layout_b.make_layout(self.element_b, k, n),
                L0C.make_layout(m, n))

    def _product(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if self.element_acc.kind == "int":
            return matmul_exact_int(a, b)
        return a.astype(np.float32) @ b.astype(np.float32)


def _first_rows(plan, m: int, rows: int):
    """The plan of a product over the first ``rows`` of its ``m`` rows (A's and C's first rows, the scratch operands'
    first rows; B whole): each row view of the plan cut on its first axis, which holds the m rows (m <= 16) or their
    16-row fractals (``rows`` a multiple of 16); None when the views are not laid out that way."""
    av, bv, cv, a2, b2, c2, a_in, b_in, c_out, i_out = plan
    if av.shape[0] == m and cv.shape[0] == m:
        cut = rows
    elif av.shape[0] * 16 == m and cv.shape[0] * 16 == m and av.shape[1] == cv.shape[1] == 16 and rows % 16 == 0:
        cut = rows // 16
    else:
        return None
    a_part, c_part = a2[:rows], c2[:rows]
    return (av[:cut], bv, cv[:cut], a_part, b2, c_part, a_part.reshape(av[:cut].shape), b_in,
            c_part.reshape(cv[:cut].shape), None if i_out is None else i_out[:cut])

