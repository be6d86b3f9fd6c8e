"""Host data generated exactly like the CATLASS example programs.

CATLASS's examples fill their host buffers with glibc ``rand()`` (``examples/common/golden/fill_data.hpp``)
and, for grouped GEMMs, build the group list with ``GenerateGroupList``. This module reproduces those
streams bit for bit so that a simulated run can be compared with a real device run of the same example.

Contents:

- :class:`GlibcRand` - glibc ``rand()`` / ``srand()`` (the default TYPE_3 additive feedback generator), with
  a vectorised :meth:`GlibcRand.rand_array` and a jump-ahead :meth:`GlibcRand.skip`.
- :func:`fill_random` - ``golden::FillRandomData`` (both the generic template and the ``int8_t`` specialisation).
- :func:`fill_random_fp16_t` - ``golden::FillRandomData<fp16_t>`` with ``fp16_t`` bounds (examples 05, 08).
- :func:`host_cast` - ``static_cast<Element>(value)`` for the CANN host element types (``op::bfloat16``,
  ``op::fp16_t``, ``float``, integers).
- :func:`generate_group_list` - ``golden::GenerateGroupList``.
- :func:`example10_inputs` - the inputs of example 10 (grouped matmul slice-M with per-token dequant).
- :func:`cached_inputs` - an example's inputs through the on-disk input cache (:func:`cache_dir`,
  :func:`cache_max_bytes`, :data:`GENERATOR_VERSION`).

Conversions (checked against CANN's ``hicann/opbase`` sources, ``include/op_common/op_host/util/bfloat16.h``
and ``src/nnopbase/common/utils/fp16_t.cpp``):

- ``op::bfloat16`` has no ``double`` constructor of its own: its catch-all constructor converts the value to
  ``float`` first and then rounds the ``float`` to bfloat16 to nearest even. A ``double`` therefore rounds
  *twice* (double -> float RNE, float -> bf16 RNE). This differs from a single direct rounding only when
  the double lies within half a float ulp above/below a bf16 tie; :func:`host_cast` follows CANN.
- ``op::fp16_t`` converts a ``double`` directly, round to nearest even (one rounding), and a ``float`` or
  an integer likewise.
- ``float`` from ``double``: RNE (IEEE). Integers from floating values: truncation toward zero (C++).
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import math
import numbers
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import ml_dtypes
import numpy as np

from catlass_py.errors import ArgumentError
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.virtual import virtual_array

__all__ = [
    "GENERATOR_VERSION",
    "RAND_MAX",
    "GlibcRand",
    "fill_random",
    "fill_random_fp16_t",
    "host_cast",
    "generate_group_list",
    "Example10Inputs",
    "example10_inputs",
    "cache_dir",
    "cache_max_bytes",
    "cached_inputs",
    "shape_only_active",
    "shape_only_fills",
]

#: glibc ``RAND_MAX`` (2^31 - 1); ``rand()`` returns values in ``[0, RAND_MAX]``.
RAND_MAX = 2147483647

_DEG = 31  # TYPE_3 state length (glibc rand_deg)
_SEP = 3  # TYPE_3 tap distance (glibc rand_sep)
_MASK32 = 0xFFFFFFFF
_DISCARD = 10 * _DEG  # outputs thrown away by srand()
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1

# Bulk generation (GlibcRand._draw): the request is split into _lanes_ (contiguous runs of the stream, each
# started from its own jump-ahead window) advanced together in a working array of shape (31 + rows, lanes):
# a row holds one raw value of every lane, so r[i] = r[i-31] + r[i-3] fills three rows per numpy operation.
# Each pass of `rows` values per lane is converted to the caller's element type in that layout, then
# transposed into stream order by a SWAR transpose of g x g element blocks inside uint64 words (g = 8 /
# itemsize) followed by a copy of whole words.
_LANES_MAX = 2048  # lanes advanced together (a multiple of 8)
_ROWS = 128  # raw values per lane per pass (a multiple of 8)
_SINGLE_LANE_MAX = 1024  # requests up to this size run as one lane (no jump-ahead)
# The SWAR transpose relies on little-endian element order inside a uint64 word.
_SWAR = sys.byteorder == "little"


# --------------------------------------------------------------------------------------------------
# Jump-ahead matrices: the generator is linear over Z/2^32 on its window of the last 31 raw values.
# --------------------------------------------------------------------------------------------------


def _mulmod32(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Matrix product modulo 2^32 of uint64 arrays holding values below 2^32.

    numpy's integer matmul wraps modulo 2^64, and 2^32 divides 2^64, so masking afterwards is exact.
    """
    return np.matmul(x, y) & np.uint64(_MASK32)


def _step_matrix() -> np.ndarray:
    """M with window_{p+1} = M @ window_p (mod 2^32); window_p = (r[p-31], ..., r[p-1])."""
    m = np.zeros((_DEG, _DEG), dtype=np.uint64)
    for i in range(_DEG - 1):
        m[i, i + 1] = 1  # shift the window by one
    m[_DEG - 1, 0] = 1  # r[p] = r[p-31] ...
    m[_DEG - 1, _DEG - _SEP] += 1  # ... + r[p-3]
    return m


_POW2_CACHE: list[np.ndarray] = [_step_matrix()]  # _POW2_CACHE[i] = M^(2^i) mod 2^32


def _m_pow2(i: int) -> np.ndarray:
    """M^(2^i) modulo 2^32 (cached)."""
    while len(_POW2_CACHE) <= i:
        last = _POW2_CACHE[-1]
        _POW2_CACHE.append(_mulmod32(last, last))
    return _POW2_CACHE[i]


def _m_pow(steps: int) -> np.ndarray:
    """M^steps modulo 2^32, from the cached binary powers."""
    out = None
    bit = 0
    while steps:
        if steps & 1:
            out = _m_pow2(bit) if out is None else _mulmod32(_m_pow2(bit), out)
        steps >>= 1
        bit += 1
    return np.eye(_DEG, dtype=np.uint64) if out is None else out


def _advance_window(window: np.ndarray, steps: int) -> np.ndarray:
    """The window ``steps`` raw values later (uint64 vector of 31), by binary powers of M."""
    w = window.astype(np.uint64)
    bit = 0
    while steps:
        if steps & 1:
            w = _mulmod32(_m_pow2(bit), w)
        steps >>= 1
        bit += 1
    return w


def _schrage_init(seed: int) -> list[int]:
    """glibc ``__srandom_r`` for TYPE_3 (``stdlib/random_r.c``): the 31 initial state words (as uint32 bit
    patterns).

    ``state[0]`` is the seed itself (0 replaced by 1); the others follow ``word = 16807 * word mod
    (2^31 - 1)`` evaluated with Schrage's decomposition exactly as glibc writes it: ``word`` is an
    ``int32_t`` copy of the unsigned seed (negative for seeds >= 2^31) and ``/``, ``%`` truncate toward
    zero like C.
    """
    seed &= _MASK32
    if seed == 0:
        seed = 1
    r = [seed]
    word = seed - (1 << 32) if seed > _INT32_MAX else seed
    for _ in range(1, _DEG):
        hi = abs(word) // 127773 * (1 if word >= 0 else -1)  # C division truncates toward zero
        lo = word - hi * 127773  # C remainder has the sign of the dividend
        word = 16807 * lo - 2836 * hi
        if word < 0:
            word += 2147483647
        r.append(word & _MASK32)
    return r


# --------------------------------------------------------------------------------------------------
# Bulk generation in lanes
# --------------------------------------------------------------------------------------------------


def _swar_masks(g: int) -> list[tuple[int, np.uint64, np.uint64]]:
    """(word distance d, shift, mask) of each SWAR stage transposing g x g blocks of (64/g)-bit elements,
    widest first: word i swaps with word i + d, and the mask keeps the low half of every 2*shift-bit field."""
    stages = []
    bits = 64 // g
    d = g // 2
    while d:
        sh = d * bits
        field = (1 << sh) - 1
        mask = 0
        for lo in range(0, 64, 2 * sh):
            mask |= field << lo
        stages.append((d, np.uint64(sh), np.uint64(mask)))
        d //= 2
    return stages


def _swar_stages(words: np.ndarray, g: int, tmp: np.ndarray) -> list[tuple]:
    """The operand views of :func:`_swar_transpose` (built once per array)."""
    rows, _, cols = words.shape
    stages = []
    for d, sh, mask in _swar_masks(g):
        v = words.reshape(rows, g // (2 * d), 2, d, cols)
        lo, hi = v[:, :, 0], v[:, :, 1]  # word i and word i + d
        stages.append((lo, hi, tmp.reshape(lo.shape), sh, mask))
    return stages


def _swar_transpose(words: np.ndarray, g: int, tmp: np.ndarray, stages=None) -> None:
    """Transpose in place, for every ``r`` and ``c``, the g x g element matrix held by the g words
    ``words[r, :, c]`` (word i, element l -> word l, element i; element l = bits ``l*64/g ..`` of a
    little-endian word). ``tmp`` is scratch of ``words.size // 2`` uint64; ``stages`` the views from
    :func:`_swar_stages` for these arrays (built when omitted)."""
    for lo, hi, t, sh, mask in stages if stages is not None else _swar_stages(words, g, tmp):
        np.right_shift(lo, sh, out=t)
        np.bitwise_xor(t, hi, out=t)
        np.bitwise_and(t, mask, out=t)
        np.bitwise_xor(hi, t, out=hi)
        np.left_shift(t, sh, out=t)
        np.bitwise_xor(lo, t, out=lo)


def _recurrence_views(y: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(r[j-31], r[j-3], r[j]) row views of working array ``y`` (31 history rows first), three rows each:
    ``np.add(*v[:2], out=v[2])`` in order fills every row after the history."""
    end = y.shape[0]
    views = []
    for j in range(_DEG, end, _SEP):
        h = min(_SEP, end - j)
        views.append((y[j - _DEG:j - _DEG + h], y[j - _SEP:j - _SEP + h], y[j:j + h]))
    return views


def _lane_plan(n: int) -> tuple[int, int, int]:
    """(lanes, rows per pass, lane length) for a bulk request of ``n`` values: lanes a multiple of 8 (at
    most ``_LANES_MAX``), lane length a multiple of the rows, lanes * length >= n; about 8 passes or more."""
    rows = _ROWS
    lanes = min(_LANES_MAX, 8 * _ceil_div(n, 8 * rows * 8))
    length = rows * _ceil_div(_ceil_div(n, lanes), rows)
    return lanes, rows, length


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _aligned_empty(shape, dtype) -> np.ndarray:
    """``np.empty(shape, dtype)`` starting on a 4 KiB boundary (numpy's large buffers start just past
    one, which leaves every SIMD access of the bulk generator's working arrays split across cache lines)."""
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    raw = np.empty(nbytes + 4096, dtype=np.uint8)
    start = (-raw.ctypes.data) % 4096
    return raw[start:start + nbytes].view(dtype).reshape(shape)


def _copy_mapper(u: np.ndarray, out: np.ndarray) -> None:
    """The default ``mapper`` of :meth:`GlibcRand._draw`: the ``rand()`` values themselves."""
    np.copyto(out, u)


def _draw_lanes(win: np.ndarray, n: int, dtype: np.dtype, mapper) -> np.ndarray:
    """``mapper`` applied to the ``n`` outputs that follow window ``win``, in stream order (a 1-D array of
    ``dtype``, possibly a view of a slightly longer buffer)."""
    lanes, rows, length = _lane_plan(n)
    itemsize = dtype.itemsize
    g = 8 // itemsize if _SWAR and itemsize in (1, 2, 4, 8) else 0
    # start window of lane s = M^(s * length) @ win, by doubling: lanes [f, 2f) = M^(f * length) @ lanes [0, f)
    starts = np.empty((_DEG, lanes), dtype=np.uint64)
    starts[:, 0] = win
    step = _m_pow(length)
    filled = 1
    while filled < lanes:
        take = min(filled, lanes - filled)
        starts[:, filled:filled + take] = _mulmod32(step, starts[:, :take])
        filled += take
        if filled < lanes:
            step = _mulmod32(step, step)
    y = _aligned_empty((_DEG + rows, lanes), np.uint32)
    y[:_DEG] = starts
    recurrence = _recurrence_views(y)
    raw, history, tail = y[_DEG:], y[:_DEG], y[rows:]
    u = _aligned_empty((rows, lanes), np.uint32)
    mapped = _aligned_empty((rows, lanes), dtype)
    out = np.empty(lanes * length, dtype=dtype)
    if g:
        words = mapped.view(np.uint64).reshape(rows // g, g, lanes // g)  # [t1, i, c]: time t1*g+i, lanes c*g..
        out_words = out.view(np.uint64).reshape(lanes // g, g, length // g)  # [c, i, tw]: lane c*g+i, times tw*g..
        stages = _swar_stages(words, g, _aligned_empty((words.size // 2,), np.uint64))
        src, span = words.transpose(2, 1, 0), rows // g
    else:
        out_lanes = out.reshape(lanes, length)
    for p in range(length // rows):
        for v in recurrence:
            np.add(v[0], v[1], out=v[2])
        np.right_shift(raw, 1, out=u)
        mapper(u, mapped)
        if g:
            _swar_transpose(words, g, None, stages)
            np.copyto(out_words[:, :, p * span:(p + 1) * span], src)
        else:
            np.copyto(out_lanes[:, p * rows:(p + 1) * rows], mapped.T)
        np.copyto(history, tail)
    return out[:n]


def _draw_one_lane(win: np.ndarray, n: int, dtype: np.dtype, mapper) -> tuple[np.ndarray, np.ndarray]:
    """(``mapper`` of the next ``n`` outputs, the raw window after them) for a short request: one lane,
    three raw values per numpy operation."""
    y = np.empty(_DEG + n, dtype=np.uint32)
    y[:_DEG] = win
    for v in _recurrence_views(y):
        np.add(v[0], v[1], out=v[2])
    out = np.empty(n, dtype=dtype)
    mapper(np.right_shift(y[_DEG:], 1), out)
    return out, y[n:]


class GlibcRand:
    """Bit-exact replica of glibc ``rand()``/``srand()`` (TYPE_3 additive feedback generator).

    Counterpart of the process-global C library generator that CATLASS's example programs draw from
    (``golden::FillRandomData``, ``golden::GenerateGroupList``). The raw sequence (glibc ``stdlib/random_r.c``:
    ``__srandom_r`` seeds, ``__random_r`` steps) is

    ``r[0] = seed (1 if seed == 0)``, ``r[i] = 16807 * r[i-1] mod (2^31-1)`` for ``i = 1..30`` (Schrage's
    method; for seeds >= 2^31 glibc feeds it a negative ``int32_t`` and the values are no longer that
    product - reproduced as glibc computes them), ``r[i] = r[i-31]`` for ``i = 31..33``,
    ``r[i] = (r[i-31] + r[i-3]) mod 2^32`` for ``i >= 34``;

    the k-th output after seeding is ``r[k + 344] >> 1`` (``srand`` discards 310 values). A new
    generator is seeded with 1, like a C program that never calls ``srand``.

    Only the last 31 raw values are kept. Bulk draws (:meth:`rand_array` and the fills built on
    :meth:`_draw`) split a request into lanes, contiguous runs of the stream whose start windows come from
    jump-ahead (powers of the 31x31 step matrix modulo 2^32), advance all lanes together three raw values
    per numpy operation, convert each pass to the requested element type and transpose it into stream
    order with whole-word copies; temporary memory is a few MB whatever the request.
    """

    RAND_MAX = RAND_MAX

    def __init__(self, seed: int = 1):
        self._win: list[int] = []
        self._drawn = 0
        self.srand(seed)

    # -- seeding / state --------------------------------------------------------------------------

    def srand(self, seed: int) -> None:
        """glibc ``srand(seed)``: ``seed`` is converted to ``unsigned int`` (taken modulo 2^32, as C
        does); seed 0 behaves as seed 1."""
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
            raise ArgumentError(f"seed: expected an integer, got {seed!r}")
        r = _schrage_init(int(seed))
        ext = r + r[:_SEP]  # r[31..33] = r[0..2]
        self._win = ext[_SEP:_SEP + _DEG]  # r[3..33], oldest first
        for _ in range(_DISCARD):
            self._step()
        self._drawn = 0

    @property
    def drawn(self) -> int:
        """Number of ``rand()`` outputs consumed since the last :meth:`srand`."""
        return self._drawn

    def copy(self) -> "GlibcRand":
        """An independent generator in the same state."""
        other = GlibcRand.__new__(GlibcRand)
        other._win = list(self._win)
        other._drawn = self._drawn
        return other

    def state(self) -> tuple[int, ...]:
        """The last 31 raw (uint32) values, oldest first: the whole state of the generator."""
        return tuple(self._win)

    # -- scalar -----------------------------------------------------------------------------------

    def _step(self) -> int:
        w = self._win
        v = (w[0] + w[_DEG - _SEP]) & _MASK32
        del w[0]
        w.append(v)
        return v

    def rand(self) -> int:
        """The next glibc ``rand()`` output, in ``[0, RAND_MAX]``."""
        self._drawn += 1
        return self._step() >> 1

    # -- bulk -------------------------------------------------------------------------------------

    def _draw(self, n: int, dtype=np.uint32, mapper=None) -> np.ndarray:
        """The next ``n`` outputs, in stream order, as a 1-D array of ``dtype``; advances the state.

        ``mapper(u, out)`` converts outputs to ``dtype``: ``u`` is a uint32 array of ``rand()`` values (it
        may be overwritten), ``out`` an array of ``dtype`` and the same shape to fill, element by element
        (the layout of both is the generator's, not stream order). The default copies the values.
        """
        dtype = np.dtype(dtype)
        mapper = _copy_mapper if mapper is None else mapper
        win = np.array(self._win, dtype=np.uint64)
        if n <= _SINGLE_LANE_MAX:
            out, new_win = _draw_one_lane(win, n, dtype, mapper)
        else:
            out = _draw_lanes(win, n, dtype, mapper)
            new_win = _advance_window(win, n)
        self._win = [int(v) for v in new_win]
        self._drawn += n
        return out

    def rand_array(self, n: int) -> np.ndarray:
        """The next ``n`` ``rand()`` outputs as an int64 array (same values as ``n`` calls of :meth:`rand`)."""
        n = _check_count("n", n)
        return self._draw(n).astype(np.int64)

    def skip(self, n: int) -> None:
        """Discard the next ``n`` outputs in O(log n) 31x31 matrix products (jump-ahead)."""
        n = _check_count("n", n)
        w = _advance_window(np.array(self._win, dtype=np.uint64), n)
        self._win = [int(v) for v in w]
        self._drawn += n

    def __repr__(self) -> str:
        return f"GlibcRand(drawn={self._drawn})"


# --------------------------------------------------------------------------------------------------
# FillRandomData and host element conversions
# --------------------------------------------------------------------------------------------------

_FILL_DTYPES = ("int8", "uint8", "int16", "int32", "float16", "bfloat16", "float32")
_COMPUTE_KINDS = ("int", "float", "double")


def _check_count(name: str, n) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise ArgumentError(f"{name}: expected a non-negative integer, got {n!r}")
    if n < 0:
        raise ArgumentError(f"{name}: expected a non-negative integer, got {n}")
    return int(n)


def _fill_dtype(dtype):
    try:
        t = get_dtype(dtype)
    except ArgumentError as e:
        raise ArgumentError(f"dtype: expected one of {list(_FILL_DTYPES)}, got {dtype!r} ({e})") from None
    if t.name not in _FILL_DTYPES:
        raise ArgumentError(f"dtype: expected one of {list(_FILL_DTYPES)}, got {t.name}")
    return t


def _infer_compute(low, high) -> str:
    """C++ template argument deduction of ``ElementRandom`` from the two bound literals."""

    def kind(v):
        if isinstance(v, (bool, np.bool_)):
            return None
        if isinstance(v, (numbers.Integral, np.integer)):
            return "int"
        if isinstance(v, np.float32):
            return "float"
        if isinstance(v, (float, np.float64)):
            return "double"
        return None

    kl, kh = kind(low), kind(high)
    if kl is None:
        raise ArgumentError(f"low: expected an int or a float, got {low!r}")
    if kh is None:
        raise ArgumentError(f"high: expected an int or a float, got {high!r}")
    if kl != kh:
        raise ArgumentError(
            f"low/high: C++ deduces one ElementRandom from both bounds, got {type(low).__name__} and "
            f"{type(high).__name__}; pass compute='int'|'float'|'double' to choose"
        )
    return kl


def host_cast(values, dtype, *, source=None) -> np.ndarray:
    """``static_cast<Element>(value)`` on the host, for the element types CATLASS's examples use.

    ``values``: a numpy array of float64 (C++ ``double``), float32 (``float``) or integers (``int``);
    ``source`` may force which of the three the values are ('double', 'float', 'int').
    ``dtype``: int8/uint8/int16/int32 (truncation toward zero), float32 (RNE), float16 (``op::fp16_t``:
    one RNE rounding), bfloat16 (``op::bfloat16``: via ``float``, then RNE - a double rounds twice).
    """
    t = _fill_dtype(dtype)
    v = np.asarray(values)
    if source is None:
        if v.dtype == np.float32:
            source = "float"
        elif v.dtype.kind == "f":
            source = "double"
        elif v.dtype.kind in "iu":
            source = "int"
        else:
            raise ArgumentError(f"values: expected a float64, float32 or integer array, got {v.dtype}")
    if source not in _COMPUTE_KINDS:
        raise ArgumentError(f"source: expected one of {list(_COMPUTE_KINDS)}, got {source!r}")
    v = v.astype({"double": np.float64, "float": np.float32, "int": np.int64}[source], copy=False)
    if t.kind in ("int", "uint"):
        if source != "int":
            v = np.trunc(v)
        return v.astype(t.numpy)
    if t.name == "float32":
        return v.astype(np.float32)
    if t.name == "float16":
        return v.astype(np.float16)  # numpy converts float64/float32/int to half directly, RNE
    # bfloat16: CANN op::bfloat16 goes through float first
    return v.astype(np.float32).astype(ml_dtypes.bfloat16)


_SHAPE_ONLY: contextvars.ContextVar[bool] = contextvars.ContextVar("catlass_py_shape_only_fills", default=False)


@contextlib.contextmanager
def shape_only_fills():
    """Inside the block, :func:`fill_random` and :func:`fill_random_fp16_t` return shape-only arrays
    (:func:`catlass_py.virtual.virtual_array`) and advance the stream past the values they would have drawn
    (:meth:`GlibcRand.skip`, O(log n)); everything else draws as usual. An example's input generator run inside
    it gives operands of the right shapes and dtypes at no cost, and the group list it draws afterwards is the
    very one of a full run: what a timing-only run (``catlass-py run --predict-only``) feeds the kernel."""
    token = _SHAPE_ONLY.set(True)
    try:
        yield
    finally:
        _SHAPE_ONLY.reset(token)


def shape_only_active() -> bool:
    """True inside :func:`shape_only_fills`: input generators that do not draw through :func:`fill_random` (the
    attention examples' numpy streams) return shape-only operands too."""
    return _SHAPE_ONLY.get()


def _fill(rng: GlibcRand, n: int, dtype, mapper) -> np.ndarray:
    """``n`` values drawn through ``mapper()`` (a factory), or a shape-only array and a skip of the stream inside
    :func:`shape_only_fills`."""
    if _SHAPE_ONLY.get():
        rng.skip(n)
        return virtual_array(n, dtype)
    return rng._draw(n, dtype, mapper())


def fill_random(rng: GlibcRand, n: int, low, high, dtype, *, compute: str | None = None) -> np.ndarray:
    """``golden::FillRandomData(data, low, high)`` of ``examples/common/golden/fill_data.hpp``.

    Draws exactly ``n`` values from ``rng`` and returns a 1-D array of ``dtype`` (numpy storage of the
    dtype registry: ``ml_dtypes.bfloat16`` for bf16). ``compute`` is C++'s ``ElementRandom``, deduced like
    the C++ template from the bound types when omitted: Python ``int`` -> ``'int'``, ``np.float32`` ->
    ``'float'`` (C++ ``-5.0f``), Python ``float`` -> ``'double'``.

    - ``'int'`` with an integer ``dtype``: ``low + rand() % (high - low + 1)`` (CATLASS specialises only
      ``FillRandomData<int8_t, int>``; the same formula is used for the other integer dtypes).
    - ``'double'``/``'float'``: ``low + (T(rand()) / T(RAND_MAX)) * (high - low)`` with each operation
      rounded in ``T`` (no fused multiply-add; a host compiler that contracts to FMA could differ in the
      last bit when ``low != 0`` or ``high - low != 1``), then :func:`host_cast` to ``dtype``.
    - ``'int'`` with a floating ``dtype`` is CATLASS's generic template in integer arithmetic:
      ``rand() / RAND_MAX`` is 0 unless ``rand() == RAND_MAX``, so nearly every value equals ``low``
      (this is what ``FillRandomData<fp16_t>(hostA, -5, 5)`` of example 01 really produces).

    Raises :class:`ArgumentError` for a negative ``n``, ``high < low``, an unsupported dtype, integer
    bounds outside the integer dtype or C ``int``, or non-finite bounds.
    """
    if not isinstance(rng, GlibcRand):
        raise ArgumentError(f"rng: expected a GlibcRand, got {type(rng).__name__}")
    n = _check_count("n", n)
    t = _fill_dtype(dtype)
    if compute is None:
        compute = _infer_compute(low, high)
    elif compute not in _COMPUTE_KINDS:
        raise ArgumentError(f"compute: expected one of {list(_COMPUTE_KINDS)}, got {compute!r}")
    for name, v in (("low", low), ("high", high)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Real, np.floating, np.integer)):
            raise ArgumentError(f"{name}: expected a real number, got {v!r}")
        if not math.isfinite(float(v)):
            raise ArgumentError(f"{name}: expected a finite number, got {v!r}")
    if compute == "int":
        for name, v in (("low", low), ("high", high)):
            if float(v) != int(v):
                raise ArgumentError(f"{name}: compute='int' needs an integral bound, got {v!r}")
        low, high = int(low), int(high)
        for name, v in (("low", low), ("high", high)):
            if not _INT32_MIN <= v <= _INT32_MAX:
                raise ArgumentError(f"{name}: expected a C int in [{_INT32_MIN}, {_INT32_MAX}], got {v}")
    elif compute == "float":
        low, high = np.float32(low), np.float32(high)
    else:
        low, high = float(low), float(high)
    if high < low:
        raise ArgumentError(f"high: expected high >= low = {low}, got {high}")
    if t.kind in ("int", "uint"):
        info = np.iinfo(t.numpy)
        if low < info.min or high > info.max:
            raise ArgumentError(f"low/high: [{low}, {high}] does not fit in {t.name} [{info.min}, {info.max}]")
    if compute == "int":
        span = high - low + 1 if t.kind in ("int", "uint") else high - low
        if span > _INT32_MAX:
            raise ArgumentError(f"high: high - low = {high - low} overflows the C int arithmetic of FillRandomData")

    return _fill(rng, n, t.numpy, lambda: _fill_mapper(compute, t, low, high))


def _fill_mapper(compute: str, t, low, high):
    """The element-wise conversion of ``rand()`` values for :func:`fill_random` (``GlibcRand._draw``'s
    ``mapper``), with the bounds already checked and converted to ``compute``'s type."""
    if compute == "int" and t.kind in ("int", "uint"):
        span = np.uint32(high - low + 1)
        low_t = np.dtype(t.numpy).type(low)
        scratch: list[np.ndarray] = []

        def int_mapper(u: np.ndarray, out: np.ndarray) -> None:
            # u % span via SIMD floor division; the remainder (< span <= the dtype's range) is cast with
            # wrap-around and low added in the dtype's wrapping arithmetic, which lands on the exact value
            # low + u % span because that value lies in [low, high] inside the dtype's range.
            if not scratch or scratch[0].shape != u.shape:
                scratch[:] = [np.empty_like(u)]
            q = scratch[0]
            np.floor_divide(u, span, out=q)
            np.multiply(q, span, out=q)
            np.subtract(u, q, out=u)
            np.copyto(out, u, casting="unsafe")
            if low:
                np.add(out, low_t, out=out)

        return int_mapper
    if compute == "int":
        def degenerate_mapper(u: np.ndarray, out: np.ndarray) -> None:
            # generic template in int arithmetic: (rand() / RAND_MAX) is integer division, 1 only at RAND_MAX
            v = np.where(u == RAND_MAX, np.int64(high), np.int64(low))
            out[...] = host_cast(v, t, source="int")

        return degenerate_mapper
    if compute == "float":
        def float_mapper(u: np.ndarray, out: np.ndarray) -> None:
            q = u.astype(np.float32) / np.float32(RAND_MAX)
            v = low + q * np.float32(high - low)
            out[...] = host_cast(v.astype(np.float32, copy=False), t, source="float")

        return float_mapper

    def double_mapper(u: np.ndarray, out: np.ndarray) -> None:
        q = u.astype(np.float64) / float(RAND_MAX)
        v = low + q * (high - low)
        out[...] = host_cast(v, t, source="double")

    return double_mapper


def fill_random_fp16_t(rng: GlibcRand, n: int, low: float, high: float, dtype="float16") -> np.ndarray:
    """``n`` float16 values drawn like ``golden::FillRandomData<fp16_t>(v, fp16_t(low), fp16_t(high))`` of
    examples 05 and 08, where the random value itself is computed in CANN's ``op::fp16_t`` arithmetic
    (``hicann/opbase``, ``src/nnopbase/common/utils/fp16_t.cpp``):

    * ``fp16_t(rand())`` rounds the int to nearest even and becomes +inf from 65520 up (almost always);
    * ``fp16_t(RAND_MAX)`` is therefore +inf, and ``fp16Div`` only aligns the two mantissas, so
      ``inf / inf == 1`` and ``x / inf == x / 65536`` (the float ratio converted back to fp16_t);
    * then ``low + q * (high - low)`` in fp16_t (taken here as IEEE half with round-to-nearest-even).

    So nearly every value equals ``high`` (5.0 for the examples): the data is real CATLASS behaviour, not a
    simulation artefact. Values from ``rand() < 4`` (fp16 subnormal quotients) are not modelled bit-exactly.

    ``dtype`` is the vector's ``Element`` (``FillRandomData<Element>(v, fp16_t(low), fp16_t(high))``): the
    fp16_t value is then cast to it (:func:`host_cast` of its float value: truncation for int8).
    """
    if not isinstance(rng, GlibcRand):
        raise ArgumentError(f"rng: expected a GlibcRand, got {type(rng).__name__}")
    n = _check_count("n", n)
    t = _fill_dtype(dtype)
    if t.name != "float16":
        if _SHAPE_ONLY.get():
            return _fill(rng, n, t.numpy, None)
        return host_cast(fill_random_fp16_t(rng, n, low, high).astype(np.float32), t, source="float")
    lo, hi = np.float16(low), np.float16(high)
    span = np.float16(hi - lo)

    def value(q: np.ndarray) -> np.ndarray:
        return (lo + (q * span).astype(np.float16)).astype(np.float16)

    if _SHAPE_ONLY.get():
        return _fill(rng, n, np.float16, None)
    at_inf = value(np.ones(1, dtype=np.float16))[0]  # q = inf / inf = 1

    def fp16_t_mapper(u: np.ndarray, out: np.ndarray) -> None:
        # fp16_t(int) rounds to nearest even and is +inf from 65520 up: only the rare smaller draws need
        # the quotient x / 65536
        out[...] = at_inf
        small = np.nonzero(u < 65520)
        if small[0].size:
            x = u[small].astype(np.float64).astype(np.float16)
            out[small] = value((x.astype(np.float32) / np.float32(65536.0)).astype(np.float16))

    return rng._draw(n, np.float16, fp16_t_mapper)


# --------------------------------------------------------------------------------------------------
# Group lists and example 10
# --------------------------------------------------------------------------------------------------


def generate_group_list(m: int, group_count: int, *, rng: GlibcRand | None = None,
                        segmented: bool = False) -> np.ndarray:
    """``golden::GenerateGroupList<int64_t>(m, problemCount)`` (``examples/common/golden/fill_data.hpp``).

    The C++ calls ``std::srand(0)`` - reseeding the process-wide stream, which glibc treats as seed 1 -
    then draws ``rand() % (m + 1)`` for each group and sorts ascending (its hand-written quicksort is a
    plain ascending sort). When ``rng`` is given it is reseeded and advanced the same way, so draws after
    this call continue exactly like the C++ global stream; otherwise a private generator is used.

    ``segmented=True`` mirrors the ``CATLASS_EXPERIMENTAL_GROUPLIST_SEGMENTED`` build: the sorted prefix
    values are turned into group sizes (``g[i] -= g[i-1]`` from the back). Returns int64 of length
    ``group_count``; values lie in ``[0, m]``, duplicates (empty groups) allowed, the last may be < m.
    """
    m = _check_count("m", m)
    group_count = _check_count("group_count", group_count)
    if m >= _MASK32:
        raise ArgumentError(f"m: expected m + 1 to fit a uint32, got m = {m}")
    if rng is None:
        rng = GlibcRand(0)
    elif not isinstance(rng, GlibcRand):
        raise ArgumentError(f"rng: expected a GlibcRand or None, got {type(rng).__name__}")
    else:
        rng.srand(0)
    g = np.sort(rng.rand_array(group_count) % (m + 1))
    if segmented and group_count > 1:
        g[1:] = np.diff(g)
    return g.astype(np.int64, copy=False)


@dataclass(frozen=True, eq=False)
class Example10Inputs:
    """Host inputs of CATLASS example 10 (``10_grouped_matmul_slice_m_per_token_dequant``)."""

    a: np.ndarray  # int8 [m, k]
    b: np.ndarray  # int8 [G, k, n]
    scale: np.ndarray  # bfloat16 (or the example's ElementScale) [G, n]
    per_token_scale: np.ndarray  # bfloat16 (or the example's ElementScale) [m]
    group_list: np.ndarray  # int64 [G], inclusive prefix sums

    def as_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "scale": self.scale,
                "per_token_scale": self.per_token_scale, "group_list": self.group_list}


def example10_inputs(group_count: int, m: int, n: int, k: int, element_scale: str = "bfloat16") -> Example10Inputs:
    """The inputs example 10 builds for ``10_grouped_matmul_slice_m_per_token_dequant G m n k``.

    One glibc stream from its default state (the program never seeds first): A (``-16..16``), B
    (``-16..16``, G row-major k x n matrices back to back), scale and per-token scale (``0.0..1.0`` in
    double, stored as ``element_scale``: bf16, the example's D type), then :func:`generate_group_list` (which
    reseeds with 0).
    """
    group_count = _check_count("group_count", group_count)
    if group_count < 1:
        raise ArgumentError("group_count: expected at least 1 group (the example reads groupList[G-1]), got 0")
    m = _check_count("m", m)
    n = _check_count("n", n)
    k = _check_count("k", k)
    rng = GlibcRand()
    a = fill_random(rng, m * k, -16, 16, "int8").reshape(m, k)
    b = fill_random(rng, group_count * k * n, -16, 16, "int8").reshape(group_count, k, n)
    scale = fill_random(rng, group_count * n, 0.0, 1.0, element_scale).reshape(group_count, n)
    per_token_scale = fill_random(rng, m, 0.0, 1.0, element_scale)
    group_list = generate_group_list(m, group_count, rng=rng)
    return Example10Inputs(a, b, scale, per_token_scale, group_list)


# --------------------------------------------------------------------------------------------------
# On-disk cache of example inputs
# --------------------------------------------------------------------------------------------------

#: Version of the generated bits: part of every input-cache key, raised whenever a generator or fill of
#: this module would produce different values for the same call.
GENERATOR_VERSION = 1
_CACHE_FORMAT = 1  # layout of a cache entry (.npz members and metadata)
_CACHE_MAX_BYTES = 2 << 30  # default size bound of the cache directory
_CACHE_STALE_TMP_SECONDS = 3600  # temporary files older than this are leftovers of a crashed writer
_CACHE_ENTRY_NAME = re.compile(r"[A-Za-z0-9_.-]{0,80}-[0-9a-f]{32}\.npz")  # <example>-<key digest>.npz
_CACHE_TMP_NAME = re.compile(r"\.tmp-[A-Za-z0-9_]+\.npz")  # tempfile.mkstemp(prefix=".tmp-", suffix=".npz")
_TRUE_WORDS = ("1", "true", "yes", "on", "")
_FALSE_WORDS = ("0", "false", "no", "off")


def cache_dir() -> Path | None:
    """Directory of the input cache, or ``None`` when caching is off.

    ``CATLASS_PY_CACHE=0`` (or ``false``/``no``/``off``) turns caching off; ``CATLASS_PY_CACHE_DIR`` chooses
    the directory; otherwise it is ``$XDG_CACHE_HOME/catlass_py`` (an absolute ``XDG_CACHE_HOME``, as the XDG
    base directory specification requires) or ``~/.cache/catlass_py``. Raises :class:`ArgumentError` for a
    ``CATLASS_PY_CACHE`` value that is not a yes/no word.
    """
    switch = os.environ.get("CATLASS_PY_CACHE", "").strip().lower()
    if switch in _FALSE_WORDS:
        return None
    if switch not in _TRUE_WORDS:
        raise ArgumentError(f"CATLASS_PY_CACHE: expected 0/1 (or false/true, no/yes, off/on), got "
                            f"{os.environ['CATLASS_PY_CACHE']!r}")
    explicit = os.environ.get("CATLASS_PY_CACHE_DIR", "")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "catlass_py"


def cache_max_bytes() -> int:
    """Size bound of the input cache: ``CATLASS_PY_CACHE_MAX_BYTES`` (bytes, or with a ``K``/``M``/``G``
    binary suffix), 2 GiB by default. The oldest entries (least recently used) are removed beyond it."""
    text = os.environ.get("CATLASS_PY_CACHE_MAX_BYTES", "").strip()
    if not text:
        return _CACHE_MAX_BYTES
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1].upper(), 1)
    digits = text[:-1] if scale > 1 else text
    if not digits.isdigit():
        raise ArgumentError(f"CATLASS_PY_CACHE_MAX_BYTES: expected a byte count such as 2147483648 or 2G, got {text!r}")
    return int(digits) * scale


def _key_value(x):
    """``x`` as a JSON value for a cache key, or raise TypeError for arguments that cannot be part of one."""
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, (numbers.Integral, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return {"float": float(x).hex(), "type": type(x).__name__}
    if isinstance(x, (tuple, list)):
        return [_key_value(v) for v in x]
    if isinstance(x, np.dtype) or (isinstance(x, type) and issubclass(x, np.generic)):
        return {"dtype": np.dtype(x).name}
    raise TypeError(type(x).__name__)


def _cache_key(example: str, make, args: tuple, kwargs: dict, data_seed: int) -> dict | None:
    """The key of ``make(*args, **kwargs)`` in the cache, or ``None`` if an argument cannot be keyed."""
    import inspect

    try:
        source = hashlib.sha256(inspect.getsource(make).encode()).hexdigest()[:16]
    except (OSError, TypeError):
        source = None
    try:
        return {
            "format": _CACHE_FORMAT, "generator": GENERATOR_VERSION, "example": str(example),
            "make": f"{getattr(make, '__module__', '?')}.{getattr(make, '__qualname__', repr(make))}",
            "source": source, "args": _key_value(args), "kwargs": {k: _key_value(v) for k, v in sorted(kwargs.items())},
            "data_seed": _key_value(data_seed),
        }
    except TypeError:
        return None


def _storage(x: np.ndarray) -> tuple[np.ndarray, list[int]] | None:
    """(C-contiguous array, axis permutation) with ``stored.transpose(inverse(perm))`` laid out exactly like
    ``x`` (a transposed or axis-swapped view comes back as the same view), or ``None`` if ``x`` is not a
    permutation of one contiguous native-order block."""
    if not x.dtype.isnative or x.dtype.hasobject:
        return None
    perm = sorted(range(x.ndim), key=lambda i: (-abs(x.strides[i]), i))
    stored = x.transpose(perm)
    if not stored.flags.c_contiguous:
        return None
    return stored, perm


def _dtype_from_name(name: str) -> np.dtype:
    t = getattr(ml_dtypes, name, None)
    return np.dtype(t) if isinstance(t, type) else np.dtype(name)


def _pack(value) -> tuple[dict, dict[str, np.ndarray]] | None:
    """(metadata, arrays to store) for an array, a tuple/list of arrays or a dataclass of arrays; ``None``
    for anything else."""
    import dataclasses

    if isinstance(value, np.ndarray):
        kind, names, arrays = "array", [""], [value]
    elif isinstance(value, (tuple, list)) and all(isinstance(v, np.ndarray) for v in value):
        kind, names, arrays = type(value).__name__, [""] * len(value), list(value)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        names = [f.name for f in fields]
        arrays = [getattr(value, f) for f in names]
        if not all(f.init for f in fields) or not all(isinstance(v, np.ndarray) for v in arrays):
            return None
        kind = f"dataclass:{type(value).__module__}:{type(value).__qualname__}"
    else:
        return None
    meta = {"kind": kind, "names": names, "arrays": []}
    members = {}
    for i, x in enumerate(arrays):
        s = _storage(x)
        if s is None:
            return None
        stored, perm = s
        meta["arrays"].append({"dtype": x.dtype.name, "itemsize": x.dtype.itemsize, "shape": list(stored.shape),
                               "perm": perm})
        members[f"a{i}"] = stored.reshape(-1).view(np.uint8)
    return meta, members


def _unpack(meta: dict, npz) -> object:
    """The value :func:`_pack` described, from the open ``.npz``; raises on any inconsistency."""
    import importlib

    arrays = []
    for i, d in enumerate(meta["arrays"]):
        t = _dtype_from_name(d["dtype"])
        if t.itemsize != d["itemsize"]:
            raise ValueError(f"dtype {d['dtype']}: itemsize {t.itemsize} != stored {d['itemsize']}")
        raw = npz[f"a{i}"]
        if raw.dtype != np.uint8 or raw.ndim != 1:
            raise ValueError("member is not a byte vector")
        stored = raw.view(t).reshape(d["shape"])
        arrays.append(stored.transpose(np.argsort(d["perm"])))
    kind = meta["kind"]
    if kind == "array":
        return arrays[0]
    if kind in ("tuple", "list"):
        return tuple(arrays) if kind == "tuple" else arrays
    if kind.startswith("dataclass:"):
        _, module, qualname = kind.split(":", 2)
        cls = importlib.import_module(module)
        for part in qualname.split("."):
            cls = getattr(cls, part)
        return cls(**dict(zip(meta["names"], arrays)))
    raise ValueError(f"unknown kind {kind!r}")


def _cache_load(path, key: dict):
    """The cached value at ``path`` if it holds ``key``, else ``None``. A missing, truncated or corrupt file
    (zip CRC, metadata or shape mismatch) is a miss, never an error; a damaged file is removed."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            meta = json.loads(npz["meta"].tobytes().decode())
            if meta.get("key") != key:
                return None
            value = _unpack(meta, npz)
    except FileNotFoundError:
        return None
    except Exception:  # noqa: BLE001 - any damage to a cache file means: regenerate
        try:
            os.unlink(path)
        except OSError:
            pass
        return None
    try:
        os.utime(path)  # most recently used
    except OSError:
        pass
    return value


def _cache_store(directory, path, key: dict, meta: dict, members: dict, limit: int) -> None:
    """Write one entry atomically (temporary file, then rename) and evict the oldest entries beyond
    ``limit`` bytes; failures (read-only or full disk) leave the cache as it was."""
    size = sum(m.nbytes for m in members.values())
    if size > limit:
        return
    tmp = None
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".npz")
        blob = np.frombuffer(json.dumps({"key": key, **meta}, sort_keys=True).encode(), dtype=np.uint8)
        with os.fdopen(fd, "wb") as f:
            np.savez(f, meta=blob, **members)
        os.replace(tmp, path)
        tmp = None
    except OSError:
        return
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
    _cache_evict(directory, limit, keep=path)


def _cache_evict(directory, limit: int, keep=None) -> None:
    """Remove the least recently used entries until the directory holds at most ``limit`` bytes of them,
    and temporary files left by writers that died. Only files named like the cache's own are considered,
    whatever else the directory holds."""
    entries = []
    now = time.time()
    try:
        with os.scandir(directory) as it:
            for e in it:
                try:
                    st = e.stat()
                except OSError:
                    continue
                if _CACHE_TMP_NAME.fullmatch(e.name):
                    if now - st.st_mtime > _CACHE_STALE_TMP_SECONDS:
                        try:
                            os.unlink(e.path)
                        except OSError:
                            pass
                elif _CACHE_ENTRY_NAME.fullmatch(e.name):
                    entries.append((st.st_mtime, e.path, st.st_size))
    except OSError:
        return
    total = sum(s for _, _, s in entries)
    keep_name = None if keep is None else os.path.basename(keep)
    for _, p, s in sorted(entries):
        if total <= limit:
            break
        if os.path.basename(p) == keep_name:
            continue
        try:
            os.unlink(p)
            total -= s
        except OSError:
            pass


def cached_inputs(example: str, make, *args, data_seed: int = 1, **kwargs):
    """``(make(*args, **kwargs), False)``, or ``(value, True)`` when the on-disk input cache holds the value
    of an earlier call with the same key: ``example``, ``make``'s name and source, the arguments,
    ``data_seed`` (the seed of the random stream the inputs are drawn from: glibc's default 1 for CATLASS's
    examples) and :data:`GENERATOR_VERSION`.

    ``make`` must be deterministic in its arguments. Values made of numpy arrays are cached (an array, a
    tuple or list of arrays, a dataclass of arrays), one ``.npz`` file per key in :func:`cache_dir`, written
    atomically and bounded by :func:`cache_max_bytes`; a transposed or axis-swapped array comes back with
    the same strides. A damaged file is regenerated. Anything else, arguments that cannot form a key, or
    caching turned off (``CATLASS_PY_CACHE=0``) just calls ``make``. A cached value is a fresh copy that the
    caller may modify.
    """
    directory = cache_dir()
    # read here, so that a bad setting fails on a hit too, not only on a write
    limit = cache_max_bytes() if directory is not None else None
    key = None if directory is None else _cache_key(example, make, args, kwargs, data_seed)
    if key is None:
        return make(*args, **kwargs), False
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:32]
    path = directory / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', str(example))[:80]}-{digest}.npz"
    value = _cache_load(path, key)
    if value is not None:
        return value, True
    value = make(*args, **kwargs)
    packed = _pack(value)
    if packed is not None:
        _cache_store(directory, path, key, packed[0], packed[1], limit)
    return value, False
