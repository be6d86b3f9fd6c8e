"""Ascend C ``Mmad`` / ``MmadMx`` with ``MmadBitModeParams`` (Ascend 950 / Atlas 350 only).

Counterparts: ``MmadBitModeParams`` / ``MmadBitModeConfig0`` (``include/basic_api/kernel_struct_mm.h``,
``impl/basic_api/dav_3510/kernel_operator_mm_bitmode_impl.h``) and the ``Mmad`` / ``MmadMx`` overloads that take
it (seed ``002``; pto-mx-semantics 4.3). ``config0`` bit layout, LSB first::

    [11:0] m   [23:12] k   [35:24] n   [54:36] reserved   [56:55] unitFlag   [60:57] reserved
    [61] disableGemv   [62] cmatrixSource   [63] cmatrixInitVal

Semantics of one instruction (seed 002, pto-mx-semantics 4.4): ``C = init + A @ B`` over m x k x n where

* A is read from L0A as NZ (CATLASS ``zN``, 16 x C0 boxes; ``a_layout="ZZ"`` selects the ZZ variant the seed
  also describes), B from L0B as ZN (``nZ``, C0 x 16), C lives in L0C as NZ with 16 x 16 boxes;
* GEMV: when m == 1 and ``disableGemv`` is false, A is read as a plain ND row of k elements;
* init: the bias overload adds the bias row (``cmatrixSource`` is ignored, the bias position decides);
  otherwise ``cmatrixInitVal`` = 1 starts from 0, and with 0 ``cmatrixSource`` = 0 accumulates onto L0C while
  ``cmatrixSource`` = 1 starts from the bias table (C2) row at BT byte 0;
* any of m, k, n equal to 0: the instruction is not executed (L0C untouched).

Address alignment (seed 002): dst 256 elements, fm / filter 512 bytes, bias 128 bytes
(pto-mx-semantics 4.4 says 64 bytes for bias, from MmadMx.md; the MmadBitMode page wins here).
``MmadMx`` reads its scales from L0A_MX / L0B_MX at the data address >> 4 (``GetScaleAddr``), SA as ``zZ``
with 16 x 2 boxes and SB as ``nN`` with 2 x 16 boxes, and needs k % 64 == 0.
"""

from __future__ import annotations

import numpy as np

from catlass_py.arch.memory import LocalTensor
from catlass_py.arch.pipes import Pipe
from catlass_py.errors import AlignmentError, ArgumentError, ConfigError, OutOfBoundsError
from catlass_py.layout import L0C, RowMajor, nZ, zN, zZ
from catlass_py.numerics.packing import unpack_fp4
from catlass_py.tile._region import local_check, local_read, local_write, region_access
from catlass_py.tile.pto import mx_mmad

_FIELDS = {  # name: (lsb, width)
    "m": (0, 12),
    "k": (12, 12),
    "n": (24, 12),
    "unit_flag": (55, 2),
    "disable_gemv": (61, 1),
    "cmatrix_source": (62, 1),
    "cmatrix_init_val": (63, 1),
}
_MASK64 = (1 << 64) - 1


class MmadBitModeParams:
    """Ascend C ``MmadBitModeParams``: the union of the 64-bit ``config0`` word and its bit-fields.

    Keyword construction follows the documented defaults (``cmatrix_init_val=True``, like building it from an
    ``MmadParams``); the C++ default constructor zeroes the whole word, which is
    ``MmadBitModeParams.from_config0(0)``. ``SetX``/``GetX`` exist as ``set_x``/``get_x`` and as properties.
    """

    __slots__ = ("_config0",)

    def __init__(self, m: int = 0, k: int = 0, n: int = 0, *, unit_flag: int = 0, disable_gemv: bool = False,
                 cmatrix_source: bool = False, cmatrix_init_val: bool = True):
        self._config0 = 0
        self.set_m(m)
        self.set_k(k)
        self.set_n(n)
        self.set_unit_flag(unit_flag)
        self.set_disable_gemv(disable_gemv)
        self.set_cmatrix_source(cmatrix_source)
        self.set_cmatrix_init_val(cmatrix_init_val)

    @classmethod
    def from_config0(cls, config0: int) -> "MmadBitModeParams":
        """Wrap a raw 64-bit word (``SetConfig0``); reserved bits are kept as given."""
        p = cls.__new__(cls)
        p._config0 = 0
        p.set_config0(config0)
        return p

    # -- the word ----------------------------------------------------------------------------------
    @property
    def config0(self) -> int:
        return self._config0

    def get_config0(self) -> int:
        """``GetConfig0()``: the 64-bit word passed to the cube instruction."""
        return self._config0

    def set_config0(self, value: int) -> None:
        """``SetConfig0(value)``: replace the whole word."""
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= int(value) <= _MASK64:
            raise ArgumentError(f"config0: expected a 64-bit unsigned integer, got {value!r}")
        self._config0 = int(value)

    def _get(self, name: str) -> int:
        lsb, width = _FIELDS[name]
        return (self._config0 >> lsb) & ((1 << width) - 1)

    def _set(self, name: str, value) -> None:
        lsb, width = _FIELDS[name]
        if isinstance(value, (bool, np.bool_)):
            value = int(value)
        if not isinstance(value, (int, np.integer)) or not 0 <= int(value) < (1 << width):
            raise ArgumentError(f"{name}: expected an integer in [0, {(1 << width) - 1}] ({width} bits), got {value!r}")
        mask = ((1 << width) - 1) << lsb
        self._config0 = (self._config0 & ~mask & _MASK64) | (int(value) << lsb)

    def set_m(self, v: int) -> None:
        """``SetM``: rows of A, [0, 4095] (bits 11:0)."""
        self._set("m", v)

    def set_k(self, v: int) -> None:
        """``SetK``: A columns / B rows, [0, 4095] (bits 23:12)."""
        self._set("k", v)

    def set_n(self, v: int) -> None:
        """``SetN``: columns of B, [0, 4095] (bits 35:24)."""
        self._set("n", v)

    def set_unit_flag(self, v: int) -> None:
        """``SetUnitFlag``: bits 56:55 (0 off; 2 enable and keep; 3 enable and reset)."""
        self._set("unit_flag", v)

    def set_disable_gemv(self, v: bool) -> None:
        """``SetDisableGemv``: bit 61; with m == 1, False reads A as an ND vector (GEMV)."""
        self._set("disable_gemv", bool(v))

    def set_cmatrix_source(self, v: bool) -> None:
        """``SetCmatrixSource``: bit 62; False: initial C from L0C (CO1), True: from the bias table (C2)."""
        self._set("cmatrix_source", bool(v))

    def set_cmatrix_init_val(self, v: bool) -> None:
        """``SetCmatrixInitVal``: bit 63; True: C starts at 0, False: C starts from ``cmatrix_source``."""
        self._set("cmatrix_init_val", bool(v))

    def get_m(self) -> int:
        return self._get("m")

    def get_k(self) -> int:
        return self._get("k")

    def get_n(self) -> int:
        return self._get("n")

    def get_unit_flag(self) -> int:
        return self._get("unit_flag")

    def get_disable_gemv(self) -> bool:
        return bool(self._get("disable_gemv"))

    def get_cmatrix_source(self) -> bool:
        return bool(self._get("cmatrix_source"))

    def get_cmatrix_init_val(self) -> bool:
        return bool(self._get("cmatrix_init_val"))

    m = property(get_m, set_m)
    k = property(get_k, set_k)
    n = property(get_n, set_n)
    unit_flag = property(get_unit_flag, set_unit_flag)
    disable_gemv = property(get_disable_gemv, set_disable_gemv)
    cmatrix_source = property(get_cmatrix_source, set_cmatrix_source)
    cmatrix_init_val = property(get_cmatrix_init_val, set_cmatrix_init_val)

    def __eq__(self, other):
        return isinstance(other, MmadBitModeParams) and other._config0 == self._config0

    def __hash__(self):
        return hash(self._config0)

    def __repr__(self) -> str:
        return (f"MmadBitModeParams(m={self.m}, k={self.k}, n={self.n}, unit_flag={self.unit_flag}, "
                f"disable_gemv={self.disable_gemv}, cmatrix_source={self.cmatrix_source}, "
                f"cmatrix_init_val={self.cmatrix_init_val}; config0=0x{self._config0:016X})")


def _read(t: LocalTensor, layout, rows: int, cols: int, what: str) -> np.ndarray:
    """Region of a local tensor through a layout; 4-bit operands are unpacked to one code per item."""
    if t.dtype.packed:
        top = layout.plan(rows, cols, 1).max_offset + 1  # elements the region reaches
        codes = unpack_fp4(t.view(top), top)  # view(count) of a 4-bit tensor gives its packed bytes
        return layout.read(codes, rows, cols)
    return local_read(t, layout, rows, cols, what)


def _check_common(dst: LocalTensor, fm: LocalTensor, filter_: LocalTensor, bias, params, what: str, *, mx: bool):
    if not isinstance(params, MmadBitModeParams):
        raise ArgumentError(f"{what}: params must be MmadBitModeParams, got {type(params).__name__}")
    ctx = dst.ctx
    arch = ctx.arch
    if arch.arch_code < 3510:
        raise ConfigError(f"{what}: MmadBitMode exists only on Atlas 350 / Ascend 950, not on {arch.name}")
    for t, pos, name in ((dst, "L0C", "dst (CO1)"), (fm, "L0A", "fm (A2)"), (filter_, "L0B", "filter (B2)")):
        if t.position != pos:
            raise ConfigError(f"{what}: {name} must be in {pos}, got {t.position}")
    if dst.byte_offset % (256 * dst.dtype.bits // 8):
        raise AlignmentError(f"{what}: dst must start on a 256-element boundary, got byte {dst.byte_offset}")
    ab_align = 1024 if (mx and fm.dtype.bits == 8) else 512
    for t, name in ((fm, "fm"), (filter_, "filter")):
        if t.byte_offset % ab_align:
            raise AlignmentError(f"{what}: {name} must start on a {ab_align}-byte boundary, got byte {t.byte_offset}")
    mx_mmad.check_combo(fm.dtype, filter_.dtype, dst.dtype, mx=mx, arch=arch, what=what)
    if bias is not None:
        if bias.position not in ("BT", "L0C"):
            raise ConfigError(f"{what}: bias must be in the bias table (C2) or L0C (CO1), got {bias.position}")
        if bias.byte_offset % 128:
            raise AlignmentError(f"{what}: bias must start on a 128-byte boundary, got byte {bias.byte_offset}")
        want = "int32" if dst.dtype.name == "int32" else "float32"
        if bias.dtype.name != want:
            raise ConfigError(f"{what}: the bias of a {dst.dtype.name} result is {want}, got {bias.dtype.name}")
    return ctx


def _layouts(fm, filter_, params, a_layout: str):
    m, k, n = params.m, params.k, params.n
    if a_layout not in ("NZ", "ZZ"):
        raise ArgumentError(f"a_layout: expected 'NZ' (zN) or 'ZZ' (zZ), got {a_layout!r}")
    if m == 1 and not params.disable_gemv:
        la = RowMajor(1, k)  # GEMV: A read as an ND vector
    else:
        la = (zN if a_layout == "NZ" else zZ).make_layout(fm.dtype, m, k)
    return la, nZ.make_layout(filter_.dtype, k, n), L0C.make_layout(m, n)


def _init(ctx, dst, bias, params, layout_c, m, n, what):
    if bias is not None:
        return bias.view(n)[None, :]
    if params.cmatrix_init_val:
        return None
    if params.cmatrix_source:
        return ctx.resource.bt_buf.tensor(dst.dtype, 0, n).view()[None, :]
    return local_read(dst, layout_c, m, n, what)


def _init_reads(ctx, dst, bias, params, layout_c, m, n) -> tuple:
    """What the initial value of C is read from (nothing when it starts at 0)."""
    if bias is not None:
        return (bias.access(0, n),)
    if params.cmatrix_init_val:
        return ()
    if params.cmatrix_source:
        return (ctx.resource.bt_buf.tensor(dst.dtype, 0, n).access(),)
    return region_access(dst, layout_c, m, n)


def _read_check(t: LocalTensor, layout, rows: int, cols: int, what: str) -> None:
    """The capacity checks of :func:`_read` without the bytes (timing-only runs)."""
    if t.dtype.packed:
        t.check(layout.plan(rows, cols, 1).max_offset + 1)
    else:
        local_check(t, layout, rows, cols, what)


def _init_check(ctx, dst, bias, params, layout_c, m, n, what) -> None:
    """The capacity checks of :func:`_init` without the bytes (timing-only runs)."""
    if bias is not None:
        bias.check(n)
    elif params.cmatrix_init_val:
        return
    elif params.cmatrix_source:
        ctx.resource.bt_buf.tensor(dst.dtype, 0, n)
    else:
        local_check(dst, layout_c, m, n, what)


def _finish(ctx, dst, layout_c, start, acc, m, n, k, op, dtype, reads):
    """Write ``start + acc`` into C (skipped when ``acc`` is None: a timing-only core, which has made the checks)
    and publish the instruction."""
    if acc is not None:
        local_write(dst, layout_c, mx_mmad.accumulate(start, acc, dst.dtype), op)
    if ctx.bus.instructions:
        ctx.emit(Pipe.M, op, flops=2 * m * n * k, info={"m": m, "n": n, "k": k, "dtype": dtype},
                 local_reads=tuple(reads), local_writes=region_access(dst, layout_c, m, n))


def mmad(dst: LocalTensor, fm: LocalTensor, filter_: LocalTensor, params: MmadBitModeParams,
         bias: LocalTensor | None = None, *, a_layout: str = "NZ") -> None:
    """Ascend C ``Mmad(dst, fm, filter[, bias], MmadBitModeParams)``: the non-scaled cube instruction (see the
    module docstring). Unsupported dtype combinations (e.g. fp4, which needs ``MmadMx``) raise ConfigError."""
    ctx = _check_common(dst, fm, filter_, bias, params, "Mmad", mx=False)
    m, k, n = params.m, params.k, params.n
    if m == 0 or k == 0 or n == 0:
        return
    la, lb, lc = _layouts(fm, filter_, params, a_layout)
    if dst.computes:
        a = _read(fm, la, m, k, "Mmad (A)")
        b = _read(filter_, lb, k, n, "Mmad (B)")
        start = _init(ctx, dst, bias, params, lc, m, n, "Mmad (C)")
        acc = mx_mmad.product(a, fm.dtype, b, filter_.dtype)
    else:  # timing-only: the same checks, no bytes
        _read_check(fm, la, m, k, "Mmad (A)")
        _read_check(filter_, lb, k, n, "Mmad (B)")
        _init_check(ctx, dst, bias, params, lc, m, n, "Mmad (C)")
        local_check(dst, lc, m, n, "Mmad", write=True)
        start = acc = None
    reads = ()
    if ctx.bus.instructions:
        reads = (region_access(fm, la, m, k) + region_access(filter_, lb, k, n)
                 + _init_reads(ctx, dst, bias, params, lc, m, n))
    _finish(ctx, dst, lc, start, acc, m, n, k, "Mmad", fm.dtype.name, reads)


def mmad_mx(dst: LocalTensor, fm: LocalTensor, filter_: LocalTensor, params: MmadBitModeParams,
            bias: LocalTensor | None = None, *, a_layout: str = "NZ") -> None:
    """Ascend C ``MmadMx(dst, fm, filter[, bias], MmadBitModeParams)``: ``C = (SA (x) A) @ (SB (x) B) + init`` with
    the scales at ``addr >> 4`` of L0A_MX / L0B_MX (module docstring). Needs k % 64 == 0."""
    ctx = _check_common(dst, fm, filter_, bias, params, "MmadMx", mx=True)
    m, k, n = params.m, params.k, params.n
    if m == 0 or k == 0 or n == 0:
        return
    if k % mx_mmad.MX_K_ALIGN:
        raise ConfigError(f"MmadMx: k must be a multiple of 64 (pairs of 32-element scale groups), got {k}")
    la, lb, lc = _layouts(fm, filter_, params, a_layout)
    kg = k // mx_mmad.MX_GROUP
    ratio = 16
    sa_arena = ctx.extra_buffer("L0A_MX", ctx.resource.l0a_buf.size // ratio)
    sb_arena = ctx.extra_buffer("L0B_MX", ctx.resource.l0b_buf.size // ratio)
    sa_layout, sb_layout = mx_mmad.scale_a_layout(m, kg), mx_mmad.scale_b_layout(kg, n)
    if dst.computes:
        sa = sa_layout.read(sa_arena.raw[fm.byte_offset // ratio:], m, kg)
        sb = sb_layout.read(sb_arena.raw[filter_.byte_offset // ratio:], kg, n)
        a = _read(fm, la, m, k, "MmadMx (A)")
        b = _read(filter_, lb, k, n, "MmadMx (B)")
        start = _init(ctx, dst, bias, params, lc, m, n, "MmadMx (C)")
        acc = mx_mmad.mx_product(a, fm.dtype, sa, b, filter_.dtype, sb)
    else:  # timing-only: the same checks, no bytes
        for layout, rows, cols, arena, offset in ((sa_layout, m, kg, sa_arena, fm.byte_offset),
                                                  (sb_layout, kg, n, sb_arena, filter_.byte_offset)):
            have = max(0, arena.size - offset // ratio)
            top = layout.plan(rows, cols, 1).max_offset
            if top >= have:
                raise OutOfBoundsError(f"read through {layout!r} touches element offset {top} but buf holds only "
                                       f"{have} elements (needs at least {top + 1})")
        _read_check(fm, la, m, k, "MmadMx (A)")
        _read_check(filter_, lb, k, n, "MmadMx (B)")
        _init_check(ctx, dst, bias, params, lc, m, n, "MmadMx (C)")
        local_check(dst, lc, m, n, "MmadMx", write=True)
        start = acc = None
    reads = ()
    if ctx.bus.instructions:
        reads = (region_access(fm, la, m, k) + region_access(filter_, lb, k, n)
                 + region_access(sa_arena.tensor("uint8", fm.byte_offset // ratio), sa_layout, m, kg)
                 + region_access(sb_arena.tensor("uint8", filter_.byte_offset // ratio), sb_layout, kg, n)
                 + _init_reads(ctx, dst, bias, params, lc, m, n))
    _finish(ctx, dst, lc, start, acc, m, n, k, "MmadMx", fm.dtype.name, reads)


__all__ = ["MmadBitModeParams", "mmad", "mmad_mx"]
