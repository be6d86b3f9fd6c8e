"""Shared pieces of the PTO-ISA conformance suite (``tests/pto/test_st_*.py``).

Each ``test_st_<family>.py`` mirrors one family of PTO-ISA's Ascend 950 system tests
(``hw-native-sys/pto-isa``, ``tests/npu/a5/src/st/testcase/<family>``): it lists the family's ``TEST_F`` cases, rebuilds
every case's inputs the way the family's ``gen_data.py`` draws them (same seed, same draw order, same shapes), runs the
kernel's instruction sequence on simulated cores, and compares with expectations computed here from first principles
(bit for bit, or with the case's tolerance). Nothing is read from PTO-ISA at test time.

Cross-check against the upstream goldens: run a family's ``gen_data.py`` in a directory and point
``PTO_ST_GOLDEN_DIR`` at its parent (``$PTO_ST_GOLDEN_DIR/<family>/<Suite.case>/golden*.bin``); the tests then also
compare their inputs and results with those files.

Most cases are ``slow``; each family keeps a few in the default run.
"""

from __future__ import annotations

import os
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from catlass_py.arch import GlobalBuffer

GOLDEN_ROOT = os.environ.get("PTO_ST_GOLDEN_DIR")


def params(cases, fast=(), key=lambda c: c[0]):
    """pytest parameters for ``cases`` (tuples whose first item is the upstream case name): ``slow`` unless the name
    is in ``fast``."""
    out = []
    for c in cases:
        name = key(c)
        marks = () if name in fast else (pytest.mark.slow,)
        out.append(pytest.param(c, id=name, marks=marks))
    return out


def golden(family: str, case: str, filename: str, dtype) -> np.ndarray | None:
    """An upstream golden / input file of ``case`` when ``PTO_ST_GOLDEN_DIR`` is set (else None)."""
    if not GOLDEN_ROOT:
        return None
    path = Path(GOLDEN_ROOT) / family / case / filename
    if not path.exists():
        pytest.fail(f"PTO_ST_GOLDEN_DIR is set but {path} is missing")
    return np.fromfile(path, dtype=dtype)


def check_golden(family: str, case: str, filename: str, got: np.ndarray, *, eps: float | None = None,
                 values=None) -> None:
    """Compare ``got`` (bytes) with the upstream file, when available: bit for bit, or (``eps`` given) with the rule
    of PTO-ISA's ``ResultCmp`` (``tests/common/test_common.h``): an element is wrong when both its absolute and its
    relative difference exceed ``eps`` or exactly one side is NaN, and at most ``size * eps`` wrong elements pass.
    ``values`` turns the raw bytes into float values (for element types numpy does not know)."""
    want = golden(family, case, filename, np.uint8)
    if want is None:
        return
    raw = np.ascontiguousarray(got).view(np.uint8).reshape(-1)
    if eps is None:
        np.testing.assert_array_equal(raw, want, err_msg=f"{case}/{filename}")
        return
    assert raw.size == want.size, f"{case}/{filename}: {raw.size} bytes, golden has {want.size}"
    exp, act = (np.asarray(values(x), np.float64) for x in (want, raw))
    with np.errstate(invalid="ignore", divide="ignore"):
        diff = np.abs(exp - act)
        rel = np.abs(diff / exp)
    wrong = ((diff > eps) & (rel > eps)) | (np.isnan(exp) != np.isnan(act))
    allowed = int(exp.size * eps)
    assert int(wrong.sum()) <= allowed, (f"{case}/{filename}: {int(wrong.sum())} elements differ beyond {eps} "
                                         f"(allowed {allowed}); first at {np.flatnonzero(wrong)[:5]}")


def gm_in(array, name="in", dtype=None):
    """A read-only GM tensor holding ``array``'s bytes, typed ``dtype`` (default: the array's dtype)."""
    a = np.ascontiguousarray(array)
    return GlobalBuffer.from_array(a, name, read_only=True).tensor(dtype if dtype is not None else
                                                                   (a.dtype if a.dtype != np.uint8 else "uint8"))


def gm_out(nbytes: int, dtype, name="out"):
    """A zeroed writable GM buffer of ``nbytes`` and a tensor of ``dtype`` on it."""
    buf = GlobalBuffer.empty(int(nbytes), name, fill=0)
    return buf, buf.tensor(dtype)


# -- independent references ------------------------------------------------------------------------------------

E2M1_GRID = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])


def e2m1_codes(x) -> np.ndarray:
    """fp4 e2m1 codes of float values: nearest grid magnitude, ties to the even code, saturating at 6; NaN -> 0x7
    (the largest magnitude, as PTO's encoder), sign bit from the value's sign (so -0 -> 0x8)."""
    v = np.asarray(x, dtype=np.float64)
    a = np.abs(v)
    d = np.abs(a[..., None] - E2M1_GRID)
    best = d.min(axis=-1, keepdims=True)
    cand = np.where(d == best, np.arange(8), 99)
    even = np.where(cand % 2 == 0, cand, 99).min(axis=-1)
    code = np.where(even < 99, even, cand.min(axis=-1))
    code = np.where(a >= 6.0, 7, code)
    code = np.where(np.isnan(v), 7, code)
    sign = np.signbit(v) & ~np.isnan(v)
    return (code | (sign.astype(np.int64) << 3)).astype(np.uint8)


def e4m3_bytes(x) -> np.ndarray:
    """e4m3fn bytes of float values: clamp to +-448 then RNE (ml_dtypes); NaN -> 0x7F."""
    v = np.asarray(x, dtype=np.float32)
    with np.errstate(invalid="ignore"):
        c = np.clip(v, -448.0, 448.0)
    out = c.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    return np.where(np.isnan(v), np.uint8(0x7F), out).astype(np.uint8)


def fp32_exponent_field(x) -> np.ndarray:
    return ((np.asarray(x, dtype=np.float32).view(np.uint32) >> 23) & 0xFF).astype(np.int64)


def e8m0_ocp(amax32: np.ndarray, emax: int) -> np.ndarray:
    """OCP scale bytes from fp32 block maxima: exponent field - emax, at least 0; NaN -> 0xFF; inf keeps the
    arithmetic (255 - emax)."""
    a = np.asarray(amax32, dtype=np.float32)
    e = np.maximum(fp32_exponent_field(a) - emax, 0)
    return np.where(np.isnan(a), 255, e).astype(np.uint8)


def e8m0_nv(amax32: np.ndarray, max_finite: float) -> np.ndarray:
    """NV (RCEIL) scale bytes: ceil(log2(fp32(amax * fp32(1/max)))) + 127, computed per value with Python floats."""
    a = np.asarray(amax32, dtype=np.float32)
    d = (a * np.float32(1.0 / max_finite)).astype(np.float32)
    out = np.empty(a.shape, np.uint8)
    for i, v in np.ndenumerate(d):
        if np.isnan(v):
            out[i] = 255
        elif np.isinf(v):
            out[i] = 254
        elif v == 0:
            out[i] = 0
        else:
            m, e = np.frexp(float(v))  # v = m * 2**e, 0.5 <= m < 1
            k = e - 1 if m == 0.5 else e  # ceil(log2 v)
            out[i] = min(max(k + 127, 0), 254)
    return out


def scale_down(x, e8: np.ndarray, axis: int) -> np.ndarray:
    """x * 2**(127 - e) with one scale per 32 elements along ``axis`` (float64, exact); NaN where e == 0xFF."""
    v = np.asarray(x, dtype=np.float64)
    f = np.where(e8 == 255, np.nan, np.ldexp(1.0, 127 - e8.astype(np.int64)))
    f = np.repeat(f, 32, axis=axis)
    return v * f


def bf16_trunc(x32: np.ndarray) -> np.ndarray:
    """bf16 truncation (round toward zero) of fp32 values, as fp32."""
    return (np.asarray(x32, np.float32).view(np.uint32) & np.uint32(0xFFFF0000)).view(np.float32)


class Bump:
    """A bump allocator for tile addresses in one buffer (the kernels' hand-written UB / L1 plans, in order)."""

    def __init__(self, start: int = 0, align: int = 256):
        self.next = start
        self.align = align

    def __call__(self, nbytes: int) -> int:
        at = self.next
        self.next = -(-(at + int(nbytes)) // self.align) * self.align
        return at

    def tile(self, tile, ctx):
        """Assign ``tile`` (a :class:`~catlass_py.tile.pto.Tile`) at the next free address of ``ctx``'s buffer."""
        return tile.assign(ctx, self(tile.nbytes))


def case_input(family: str, case: str, filename: str, dtype, shape, make):
    """A case's input: ``make()`` (for gen_data scripts without a seed, any draw of the same distribution), or the
    upstream input file when ``PTO_ST_GOLDEN_DIR`` is set, so the results can be compared with its goldens."""
    up = golden(family, case, filename, dtype)
    if up is not None:
        return up.reshape(shape)
    return np.asarray(make(), dtype=dtype).reshape(shape)


def rand_like_gen(rng, dtype, shape, low=-10, high=10):
    """The common gen_data draw: integers in [-128, 127) for int8, uniform(low, high) otherwise."""
    if np.dtype(dtype) == np.int8:
        return rng.integers(-128, 127, size=shape).astype(np.int8)
    if np.dtype(dtype) == np.uint8:
        return rng.integers(0, 256, size=shape).astype(np.uint8)
    return rng.uniform(low, high, size=shape).astype(dtype)


def case_rng(name: str) -> np.random.Generator:
    """A generator seeded from the case name (stable across runs), for gen_data scripts that draw without a seed."""
    import zlib

    return np.random.default_rng(zlib.crc32(name.encode()))


# -- the cube prologue shared by the Acc-source families ---------------------------------------------------------

def cube_acc(core, x1: np.ndarray, x2: np.ndarray, a_dt: str, *, align: int = 16, a_at: int = 0x20000,
             b_at: int = 0x10000):
    """The kernels' ``RunMATMUL``: TLOAD ``x1`` (m x k) and ``x2`` (k x n) into NZ Mat tiles (static shapes rounded up
    to ``align``), TMOV to Left / Right, TMATMUL into an Acc tile (int32 for int8 operands, else fp32). Returns it."""
    from catlass_py.layout import RowMajor
    from catlass_py.tile.pto import Tile, TileType, tile_acc, tile_left, tile_right, tload, tmatmul, tmov

    (m, k), n = x1.shape, x2.shape[1]
    mm, kk, nn = (-(-v // align) * align for v in (m, k, n))
    a_mat = Tile.of("NZ", TileType.Mat, a_dt, mm, kk, valid=(m, k)).assign(core, a_at)
    b_mat = Tile.of("NZ", TileType.Mat, a_dt, kk, nn, valid=(k, n)).assign(core, b_at)
    tload(a_mat, gm_in(x1, "x1", a_dt), RowMajor(m, k))
    tload(b_mat, gm_in(x2, "x2", a_dt), RowMajor(k, n))
    a = tile_left(a_dt, mm, kk, valid=(m, k)).assign(core, 0)
    b = tile_right(a_dt, kk, nn, valid=(k, n)).assign(core, 0)
    tmov(a, a_mat)
    tmov(b, b_mat)
    c = tile_acc("int32" if a_dt == "int8" else "float32", mm, nn, valid=(m, n)).assign(core, 0)
    tmatmul(c, a, b)
    return c


def quant_word(scale: float, dst) -> int:
    """A scalar pre-quant word as the kernels build it: the fp32 bits of ``scale``; for one-byte outputs bit 46 says
    signed (int8) or not."""
    bits = int(np.array([scale], np.float32).view(np.uint32)[0])
    if np.dtype(dst).itemsize == 1:
        bits = (bits & ~(1 << 46)) | ((1 if np.dtype(dst) == np.int8 else 0) << 46)
    return bits


def quant_m1(words) -> np.ndarray:
    """The M1 factor of pre-quant words: bits [31:13] read as an fp32 with the low 13 mantissa bits cleared."""
    w = np.asarray(words, dtype=np.uint64) & np.uint64(0xFFFFE000)
    return w.astype(np.uint32).view(np.float32).astype(np.float64)


def fixpipe_ref(acc: np.ndarray, dst, m1=None, relu: bool = False) -> np.ndarray:
    """The fixpipe's conversion of exact accumulator values ``acc`` to ``dst`` (numpy dtype): times ``m1`` (scalar or
    per column) when quantising, integers rounded to nearest even and clamped to [-256, 255] then to the type's range
    (offset 0), floats through fp32 with round-to-nearest-even; relu (max with 0) on the converted value."""
    v = np.asarray(acc, np.float64)
    if m1 is not None:
        v = v * (np.asarray(m1, np.float64)[None, :] if np.ndim(m1) else float(m1))
    dst = np.dtype(dst)
    if dst.kind in "iu" and dst.itemsize == 1:
        info = np.iinfo(dst)
        out = np.clip(np.clip(np.rint(v), -256, 255), info.min, info.max).astype(dst)
    elif dst.kind in "iu":
        out = v.astype(dst)
    else:
        out = v.astype(np.float32).astype(dst)
    return np.maximum(out, out.dtype.type(0)) if relu else out
