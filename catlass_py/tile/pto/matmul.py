"""PTO ``TMATMUL`` family on tiles: ``TMATMUL``, ``TMATMUL_ACC``, ``TMATMUL_BIAS`` and the MX forms.

Counterparts: ``docs/isa/TMATMUL.md``, ``docs/isa/TMATMUL_MX.md``, ``include/pto/cpu/TMatmul.hpp``. Static checks
(:class:`ConfigError`): Left / Right / Acc tile types and layouts (Ascend 950: Left NZ, Right ZN, Acc NZ 16x16;
Atlas A2/A3: Left ZZ), ``Left.Rows == Acc.Rows``, ``Left.Cols == Right.Rows``, ``Right.Cols == Acc.Cols``, the
dtype tables of :mod:`~catlass_py.tile.pto.mx_mmad`; run time: m, k, n = (a.valid_row, a.valid_col,
b.valid_col) in [1, 4095]. MX: ``Left.Cols % 64 == 0``, fp4 needs even columns, ScaleLeft ZZ / ScaleRight NN
e8m0 tiles covering (m, ceil(k/32)) and (ceil(k/32), n); bias: a ``Bias`` tile of float (int32 for int8), 1 row.
"""

from __future__ import annotations

from catlass_py.arch.pipes import Pipe
from catlass_py.errors import ConfigError
from catlass_py.tile.pto import mx_mmad
from catlass_py.tile.pto._common import emit, listening, region
from catlass_py.tile.pto.tile import FRACTAL_C, Tile, TileType

MAX_MNK = 4095


def _check(c: Tile, a: Tile, b: Tile, what: str, *, mx: bool):
    for t, loc in ((a, TileType.Left), (b, TileType.Right), (c, TileType.Acc)):
        if not isinstance(t, Tile) or t.loc is not loc:
            raise ConfigError(f"{what}: expected a {loc.value} tile, got {t!r}")
    arch = c._bound().ctx.arch
    is950 = arch.arch_code >= 3510
    want_left = "NZ" if is950 else "ZZ"
    if a.fmt != want_left:
        raise ConfigError(f"{what}: the Left tile must be {want_left} on {arch.name}, got {a.fmt}")
    if b.fmt != "ZN":
        raise ConfigError(f"{what}: the Right tile must be ZN, got {b.fmt}")
    if c.fmt != "NZ" or c.fractal != FRACTAL_C:
        raise ConfigError(f"{what}: the Acc tile must be NZ with 16x16 (1024-byte) boxes, got {c.fmt}/{c.fractal}")
    if a.rows != c.rows or a.cols != b.rows or b.cols != c.cols:
        raise ConfigError(f"{what}: static shapes must chain: Left.Rows == Acc.Rows, Left.Cols == Right.Rows, "
                          f"Right.Cols == Acc.Cols (Left {a.rows}x{a.cols}, Right {b.rows}x{b.cols}, Acc {c.rows}x{c.cols})")
    mx_mmad.check_combo(a.dtype, b.dtype, c.dtype, mx=mx, arch=arch, what=what)
    m, k, n = a.valid_row, a.valid_col, b.valid_col
    if not (1 <= m <= MAX_MNK and 1 <= k <= MAX_MNK and 1 <= n <= MAX_MNK):
        raise ConfigError(f"{what}: m, k, n must lie in [1, {MAX_MNK}], got m={m}, k={k}, n={n}")
    if b.valid_row < k:
        raise ConfigError(f"{what}: the Right tile's valid rows ({b.valid_row}) are fewer than k = {k}")
    return m, k, n


def _check_mx(a: Tile, a_scale: Tile, b: Tile, b_scale: Tile, m: int, k: int, n: int, what: str) -> int:
    if a.cols % mx_mmad.MX_K_ALIGN:
        raise ConfigError(f"{what}: Left Cols must be a multiple of 64 (pairs of 32-element scale groups), got {a.cols}")
    if (a.dtype.packed and a.cols % 2) or (b.dtype.packed and b.rows % 2):
        raise ConfigError(f"{what}: fp4 operands need an even number of K elements")
    kg = -(-k // mx_mmad.MX_GROUP)
    for t, loc, fmt, need in ((a_scale, TileType.ScaleLeft, "ZZ", (m, kg)), (b_scale, TileType.ScaleRight, "NN", (kg, n))):
        if not isinstance(t, Tile) or t.loc is not loc:
            raise ConfigError(f"{what}: expected a {loc.value} tile, got {t!r}")
        if t.dtype.name != "float8_e8m0fnu":
            raise ConfigError(f"{what}: MX scales are float8_e8m0, got {t.dtype.name}")
        if t.fmt != fmt:
            raise ConfigError(f"{what}: the {loc.value} tile must be {fmt}, got {t.fmt}")
        if t.valid_row < need[0] or t.valid_col < need[1]:
            raise ConfigError(f"{what}: the {loc.value} tile's valid region {t.valid_row}x{t.valid_col} does not cover "
                              f"the {need[0]}x{need[1]} scales of m={m}, k={k}, n={n}")
    return kg


def _check_bias(bias: Tile, c: Tile, n: int, what: str) -> None:
    if not isinstance(bias, Tile) or bias.loc is not TileType.Bias:
        raise ConfigError(f"{what}: the bias must be a Bias tile, got {bias!r}")
    want = "int32" if c.dtype.name == "int32" else "float32"
    if bias.dtype.name != want:
        raise ConfigError(f"{what}: the bias of a {c.dtype.name} accumulator is {want}, got {bias.dtype.name}")
    if bias.rows != 1 or bias.valid_col < n:
        raise ConfigError(f"{what}: the bias tile must have 1 row and cover n = {n} columns, got "
                          f"{bias.rows}x{bias.cols} (valid cols {bias.valid_col})")


def _run(c_out: Tile, data, m: int, n: int, k: int, op: str, dtype: str, reads) -> None:
    """Write ``start + acc`` into ``c_out`` (``data()`` gives ``(start, acc)``; a timing-only core never calls it)
    and publish the instruction with its ``reads`` (callables giving access records)."""
    if c_out.computes:
        start, acc = data()
        c_out.write(mx_mmad.accumulate(start, acc, c_out.dtype))
    ctx = c_out.ctx
    if listening(ctx):
        emit(ctx, Pipe.M, op, flops=2 * m * n * k, reads=tuple(r() for r in reads), writes=(region(c_out, m, n),),
             m=m, n=n, k=k, dtype=dtype)


def _product(a: Tile, b: Tile, m: int, k: int, n: int):
    return mx_mmad.product(a.read(m, k), a.dtype, b.read(k, n), b.dtype)


def tmatmul(c: Tile, a: Tile, b: Tile) -> None:
    """PTO ``TMATMUL(c, a, b)``: ``C = A @ B``."""
    m, k, n = _check(c, a, b, "TMATMUL", mx=False)
    _run(c, lambda: (None, _product(a, b, m, k, n)), m, n, k, "TMATMUL", a.dtype.name, _ab(a, b, m, k, n))


def tmatmul_acc(c_out: Tile, c_in: Tile, a: Tile, b: Tile) -> None:
    """PTO ``TMATMUL_ACC(cOut, cIn, a, b)``: ``C_out = C_in + A @ B`` (``c_in`` may be ``c_out``)."""
    m, k, n = _check(c_out, a, b, "TMATMUL_ACC", mx=False)
    _run(c_out, lambda: (c_in.read(m, n), _product(a, b, m, k, n)), m, n, k, "TMATMUL_ACC", a.dtype.name,
         _ab(a, b, m, k, n) + (lambda: region(c_in, m, n),))


def tmatmul_bias(c: Tile, a: Tile, b: Tile, bias: Tile) -> None:
    """PTO ``TMATMUL_BIAS(c, a, b, bias)``: ``C = A @ B + bias[j]`` (bias row broadcast over rows)."""
    m, k, n = _check(c, a, b, "TMATMUL_BIAS", mx=False)
    _check_bias(bias, c, n, "TMATMUL_BIAS")
    _run(c, lambda: (bias.read(1, n), _product(a, b, m, k, n)), m, n, k, "TMATMUL_BIAS", a.dtype.name,
         _ab(a, b, m, k, n) + (lambda: region(bias, 1, n),))


def _ab(a: Tile, b: Tile, m: int, k: int, n: int) -> tuple:
    return (lambda: region(a, m, k), lambda: region(b, k, n))


def _mx(c, a, a_scale, b, b_scale, what):
    m, k, n = _check(c, a, b, what, mx=True)
    kg = _check_mx(a, a_scale, b, b_scale, m, k, n, what)

    def product():
        return mx_mmad.mx_product(a.read(m, k), a.dtype, a_scale.read(m, kg), b.read(k, n), b.dtype,
                                  b_scale.read(kg, n))
    reads = _ab(a, b, m, k, n) + (lambda: region(a_scale, m, kg), lambda: region(b_scale, kg, n))
    return product, m, k, n, reads


def tmatmul_mx(c: Tile, a: Tile, a_scale: Tile, b: Tile, b_scale: Tile, bias: Tile | None = None) -> None:
    """PTO ``TMATMUL_MX(c, a, aScale, b, bScale[, bias])``: ``C = (SA (x) A) @ (SB (x) B) [+ bias]``."""
    product, m, k, n, reads = _mx(c, a, a_scale, b, b_scale, "TMATMUL_MX")
    if bias is not None:
        _check_bias(bias, c, n, "TMATMUL_MX")
        reads += (lambda: region(bias, 1, n),)
    _run(c, lambda: (None if bias is None else bias.read(1, n), product()), m, n, k, "TMATMUL_MX", a.dtype.name,
         reads)


def tmatmul_mx_acc(c_out: Tile, c_in: Tile, a: Tile, a_scale: Tile, b: Tile, b_scale: Tile) -> None:
    """PTO ``TMATMUL_MX(cOut, cIn, a, aScale, b, bScale)``: ``C_out = C_in + (SA (x) A) @ (SB (x) B)``."""
    product, m, k, n, reads = _mx(c_out, a, a_scale, b, b_scale, "TMATMUL_MX")
    _run(c_out, lambda: (c_in.read(m, n), product()), m, n, k, "TMATMUL_MX", a.dtype.name,
         reads + (lambda: region(c_in, m, n),))


__all__ = ["tmatmul", "tmatmul_acc", "tmatmul_bias", "tmatmul_mx", "tmatmul_mx_acc"]
