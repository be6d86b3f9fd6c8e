"""Search spaces of the tuner: which assembly keywords vary, over which values, for each shipped example.

A configuration is a dict of assembly keywords written as on the command line (``{"l1_tile": "64x128x128",
"l0_tile": "64x128x64", "swizzle": "3,1"}``; :mod:`catlass_py.assemblies.settings`). A :class:`SearchSpace`
enumerates candidates as the product of its tile-shape range (:class:`TileRange`, CATLASS's ``TileShapeRange``)
and its other axes; :func:`legal_configs` keeps the candidates the example's ``assemble()`` accepts (every
``ConfigError`` check of the assembly: buffer budgets, alignment, stage rules, block capabilities), so the
space never needs its own copy of the rules.

The spaces follow CATLASS's tuner (msTuner_CATLASS, ``tools/tuner/README.md``; its search spaces are
``tools/library/scripts/search_space.py``): L1 tile M/N/K ranges walked in steps of 16 (32 for int8), the L0 tile
equal to the L1 tile on M and N ("the basic blocks of L1 and L0 differ on the m and n axes is not supported yet")
with its own K range, L0 K <= L1 K. Where CATLASS registers a space for the example (00, 02, 08, 12, 27 and 06,
which is example 26 without ReLU) the ranges are CATLASS's; the others use ranges around the example's own tile
shapes. CATLASS's spaces fix the swizzle; the tuner also tries the other direction, as the README's best case for
example 00 (<3,1>) differs from its space's <3,0>. :func:`describe_spaces` prints them (``catlass-py tune NAME
--help``); ``docs/tuning.md`` has the table.

A space may carry a roofline (``problem``): for GEMM-like examples the tuner bounds each configuration's time from
below (per-core cube and MTE2 work of its blocks, the GM bandwidth floor, at the cost model's peak rates) and skips
configurations whose bound already exceeds the N-th best prediction (:mod:`catlass_py.tune.sweep`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from catlass_py.errors import ArgumentError, CatlassError, ConfigError


@dataclass(frozen=True)
class TileRange:
    """CATLASS ``TileShapeRange``: L1 tile M, N, K and L0 tile K as inclusive ``(low, high)`` ranges walked in
    ``step`` (L0 K in ``l0_step``, default ``step``); L0 M, N = L1 M, N and L0 K <= L1 K. ``l1``/``l0`` are the
    keywords the shapes go to."""

    m: tuple[int, int]
    n: tuple[int, int]
    k: tuple[int, int]
    l0_k: tuple[int, int]
    step: int = 16
    l1: str = "l1_tile"
    l0: str | None = "l0_tile"
    l0_step: int | None = None

    def shapes(self) -> Iterator[tuple[str, ...]]:
        """``(l1 text, l0 text)`` pairs (or ``(l1 text,)`` without an L0 keyword)."""
        def walk(lo_hi, step=self.step):
            lo, hi = lo_hi
            return range(lo, hi + 1, step)
        for m, n, k in itertools.product(walk(self.m), walk(self.n), walk(self.k)):
            if self.l0 is None:
                yield (f"{m}x{n}x{k}",)
                continue
            for k0 in walk(self.l0_k, self.l0_step or self.step):
                if k0 <= k:
                    yield (f"{m}x{n}x{k}", f"{m}x{n}x{k0}")

    def size(self) -> int:
        return sum(1 for _ in self.shapes())


@dataclass(frozen=True)
class Problem:
    """What the roofline bound needs of a problem: ``batch`` GEMMs of m x n x k with ``elem`` bytes per A/B element
    and the input dtype (for the cube rate)."""

    m: int
    n: int
    k: int
    batch: int = 1
    elem: int = 2
    dtype: str = "float16"
    mix: bool = False  # the kernel runs cube and vector cores (a MIX launch pays mix_launch_overhead_us too)


@dataclass(frozen=True)
class SearchSpace:
    """The candidates of one example: :class:`TileRange` x ``axes`` (keyword -> candidate texts), every candidate
    with ``fixed`` keywords too. ``source`` cites where the ranges come from; ``problem(args)`` gives the
    roofline's :class:`Problem` for the example's positional arguments (None: no pruning), as integers, or, with
    ``problem_from_parse_args``, as the dict the example's own ``parse_args`` makes of them (an example whose
    arguments are not all integers)."""

    name: str
    source: str
    tiles: TileRange | None = None
    axes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    fixed: tuple[tuple[str, str], ...] = ()
    problem: Callable[[Any], Problem] | None = field(default=None, compare=False)
    problem_from_parse_args: bool = False

    def problem_for(self, example, args) -> Problem | None:
        """The roofline's :class:`Problem` for the loaded ``example``'s argument texts ``args`` (None: the space
        has no roofline)."""
        if self.problem is None:
            return None
        if self.problem_from_parse_args:
            return self.problem(example.parse_args(list(args)))
        from catlass_py.runner import parse_positional

        usage = getattr(example, "USAGE", None)
        return self.problem(parse_positional(example.NAME, usage, list(args)) if usage else [int(a) for a in args])

    def candidates(self) -> Iterator[dict[str, str]]:
        """Every candidate configuration (keyword -> text), in a fixed order."""
        tile_keys = () if self.tiles is None else ((self.tiles.l1,) if self.tiles.l0 is None else
                                                   (self.tiles.l1, self.tiles.l0))
        tiles = [()] if self.tiles is None else list(self.tiles.shapes())
        keys = [k for k, _ in self.axes]
        for shape in tiles:
            for values in itertools.product(*(v for _, v in self.axes)):
                cfg = dict(zip(tile_keys, shape))
                cfg.update(zip(keys, values))
                cfg.update(self.fixed)
                yield cfg

    def size(self) -> int:
        """Number of candidates (before the legality check)."""
        tiles = 1 if self.tiles is None else self.tiles.size()
        return tiles * math.prod(len(v) for _, v in self.axes)

    def varying(self) -> list[str]:
        """The keywords that vary across the candidates (the columns of a ranked table)."""
        out = [] if self.tiles is None else [self.tiles.l1] + ([self.tiles.l0] if self.tiles.l0 else [])
        return out + [k for k, v in self.axes if len(v) > 1]

    def describe(self) -> str:
        parts = []
        if self.tiles is not None:
            t = self.tiles
            rng = lambda r: f"{r[0]}..{r[1]}"  # noqa: E731
            l0_step = f" step {t.l0_step}" if t.l0_step and t.l0_step != t.step else ""
            what = "L1" if t.l1 == "l1_tile" else t.l1
            parts.append(f"{what} M {rng(t.m)}, N {rng(t.n)}, K {rng(t.k)} step {t.step}" +
                         (f"; L0 = L1 on M, N, L0 K {rng(t.l0_k)}{l0_step} (<= L1 K)" if t.l0 else ""))
        for k, v in self.axes:
            parts.append(f"{k} in {{{' | '.join(v)}}}")
        for k, v in self.fixed:
            parts.append(f"{k}={v}")
        return "; ".join(parts) + f"  [{self.size()} candidates; {self.source}]"


def config_key(config: dict[str, str]) -> str:
    """A configuration as one canonical string (``key=value`` pairs in keyword order)."""
    return " ".join(f"{k}={v}" for k, v in config.items())


# -- problems of the examples' arguments ---------------------------------------------------------------


def _mnk(args) -> Problem:
    m, n, k = args[:3]
    return Problem(m, n, k)


def _mnk_int8(args) -> Problem:
    m, n, k = args[:3]
    return Problem(m, n, k, elem=1, dtype="int8")


def _batched(args) -> Problem:
    b, m, n, k = args[:4]
    return Problem(m, n, k, batch=b)


def _strided_batched_tla(p: dict) -> Problem:
    """Example 45's arguments as its ``parse_args`` reads them (a trailing ``layoutA layoutB`` pair of words,
    strides)."""
    return Problem(p["m"], p["n"], p["k"], batch=p["batch"])


# -- the spaces ----------------------------------------------------------------------------------------

_CATLASS = "CATLASS tools/library/scripts/search_space.py"
_SWIZZLES = ("3,0", "3,1")
_DIRECTIONS = ("0", "1")

SPACES: dict[str, dict[str, SearchSpace]] = {
    "00_basic_matmul": {
        "catlass": SearchSpace(
            "catlass", f"{_CATLASS}, register_gemm_00_basic_matmul_operation (+ swizzle <3,1>)",
            TileRange((32, 128), (128, 256), (128, 256), (32, 64)), (("swizzle", _SWIZZLES),), problem=_mnk),
        "quick": SearchSpace(
            "quick", "a small grid around the example's 128x256x256 / 128x256x64",
            TileRange((64, 128), (128, 256), (128, 256), (32, 64), step=64, l0_step=32), (("swizzle", _SWIZZLES),),
            problem=_mnk),
    },
    "01_batched_matmul": {
        "default": SearchSpace(
            "default", "around the example's 128x256x256 / 128x256x64 (CATLASS registers no space)",
            TileRange((64, 256), (64, 256), (128, 256), (32, 64), step=64, l0_step=32), (("swizzle", _SWIZZLES),),
            problem=_batched),
    },
    "02_grouped_matmul_slice_m": {
        "catlass": SearchSpace(
            "catlass", f"{_CATLASS}, 02_grouped_matmul_slice_m (stages 1/2/4/2/1; step 32 here, CATLASS 16)",
            TileRange((128, 256), (128, 256), (128, 256), (32, 64), step=32),
            (("swizzle", _SWIZZLES),), fixed=(("l0a_stages", "4"), ("l0b_stages", "2"))),
    },
    "03_matmul_add": {
        "default": SearchSpace(
            "default", "around the example's 128x256x256 / 128x256x64 (CATLASS registers no space)",
            TileRange((64, 256), (128, 256), (128, 256), (32, 64), step=64, l0_step=32), (("swizzle_direction", _DIRECTIONS),),
            problem=_mnk),
    },
    "05_grouped_matmul_slice_k": {
        "default": SearchSpace(
            "default", "around the example's tiles and stages (CATLASS registers no space)",
            TileRange((64, 256), (128, 256), (128, 256), (32, 64), step=64, l0_step=32),
            (("swizzle", _SWIZZLES), ("l0a_stages", ("2", "4")))),
    },
    "06_optimized_matmul": {
        "catlass": SearchSpace(
            "catlass", f"{_CATLASS}, 06_optimized_matmul_* (step 32 here, CATLASS 16)",
            TileRange((32, 256), (128, 256), (128, 256), (32, 64), step=32), (("swizzle", _SWIZZLES),),
            problem=_mnk),
    },
    "07_grouped_matmul_slice_m_per_token_dequant_moe": {
        "default": SearchSpace(
            "default", "around the example's tiles and stages (CATLASS registers no space)",
            TileRange((64, 256), (128, 256), (256, 512), (64, 128), step=64),
            (("swizzle", _SWIZZLES), ("l0b_stages", ("2", "4")))),
    },
    "08_grouped_matmul": {
        "catlass": SearchSpace(
            "catlass", f"{_CATLASS}, register_gemm_08_grouped_matmul_operation (stages 1/2/4/2/1; step 32 here)",
            TileRange((128, 256), (128, 256), (128, 256), (32, 64), step=32), (("swizzle", _SWIZZLES),)),
    },
    "09_splitk_matmul": {
        "default": SearchSpace(
            "default", "around the example's 128x256x256 / 128x256x64 (CATLASS registers no space)",
            TileRange((64, 256), (128, 256), (128, 256), (32, 64), step=64, l0_step=32), (("swizzle", _SWIZZLES),)),
    },
    "10_grouped_matmul_slice_m_per_token_dequant": {
        "default": SearchSpace(
            "default", "around the example's 128x256x512 / 128x256x128 and its workspace stages",
            TileRange((64, 256), (128, 256), (256, 512), (64, 128), step=64),
            (("swizzle", _SWIZZLES), ("workspace_stages", ("1", "2")))),
    },
    "11_grouped_matmul_slice_k_per_token_dequant": {
        "default": SearchSpace(
            "default", "around the example's tiles and stages (CATLASS registers no space)",
            TileRange((64, 256), (128, 256), (256, 512), (64, 128), step=64),
            (("swizzle", _SWIZZLES), ("l0b_stages", ("2", "4")))),
    },
    "12_quant_matmul": {
        "catlass": SearchSpace(
            "catlass", f"{_CATLASS}, register_gemm_quant_matmul_operation (int8, step 32; 64 here)",
            TileRange((128, 256), (128, 512), (128, 512), (32, 128), step=64, l0_step=32),
            (("swizzle_direction", _DIRECTIONS),), problem=_mnk_int8),
    },
    "13_basic_matmul_tla": {
        "default": SearchSpace(
            "default", "around the example's 128x256x256 / 128x256x64 (CATLASS's search_space.py registers no TLA "
                       "example)",
            TileRange((64, 256), (128, 256), (128, 256), (32, 64), step=64, l0_step=32), (("swizzle", _SWIZZLES),),
            problem=_mnk),
    },
    "14_optimized_matmul_tla": {
        "default": SearchSpace(
            "default", "around the example's 128x256x256 / 128x256x64 (06's TLA twin; CATLASS's search_space.py "
                       "registers no TLA example)",
            TileRange((64, 256), (128, 256), (128, 256), (32, 64), step=64, l0_step=32), (("swizzle", _SWIZZLES),),
            problem=_mnk),
    },
    "19_mla": {
        "default": SearchSpace(
            "default", "the blocks fix the tiles (128x128x576: the 512 + 64 head dimensions); one configuration, "
                       "the example's"),
    },
    "20_matmul_bias": {
        "default": SearchSpace(
            "default", "around the example's 128x256x256 / 128x256x64 (L0 N <= 256: the BT buffer)",
            TileRange((64, 256), (128, 256), (128, 256), (32, 64), step=64, l0_step=32), (("swizzle", _SWIZZLES),),
            problem=_mnk),
    },
    "21_basic_matmul_preload_zN": {
        "default": SearchSpace(
            "default", "around the example's 128x256x256 / 128x256x64 (not in CATLASS's search_space.py)",
            TileRange((64, 256), (128, 256), (128, 256), (32, 64), step=64, l0_step=32), (("swizzle", _SWIZZLES),),
            problem=_mnk),
    },
    "23_flash_attention_infer": {
        "default": SearchSpace(
            "default", "the blocks fix the tiles (128x128x128: the KV and head-dimension split); the unit flag of "
                       "the QK / PV blocks", axes=(("enable_unit_flag", ("false", "true")),)),
    },
    "26_matmul_relu": {
        "catlass": SearchSpace(
            "catlass", f"{_CATLASS}, 06_optimized_matmul_* (example 26 is 06 with ReLU; step 32 here, CATLASS 16)",
            TileRange((32, 256), (128, 256), (128, 256), (32, 64), step=32), (("swizzle", _SWIZZLES),),
            problem=_mnk),
    },
    "27_matmul_gelu": {
        "catlass": SearchSpace(
            "catlass", f"{_CATLASS}, register_gemm_27_matmul_gelu_operation (step 64 here, CATLASS 16)",
            TileRange((64, 320), (128, 256), (64, 256), (32, 128), step=64, l0_step=32), (("swizzle_direction", _DIRECTIONS),),
            problem=_mnk),
    },
    "28_matmul_silu": {
        "default": SearchSpace(
            "default", "example 27's (CATLASS registers 27's; step 64)",
            TileRange((64, 320), (128, 256), (64, 256), (32, 128), step=64, l0_step=32), (("swizzle_direction", _DIRECTIONS),),
            problem=_mnk),
    },
    "34_single_core_splitk_matmul": {
        "default": SearchSpace(
            "default", "around the example's L1 128x256x512 / L0 128x128x128 (CATLASS registers no space)",
            TileRange((128, 256), (128, 256), (256, 512), (128, 128), step=128, l0=None),
            (("l0_tile", ("128x128x128", "128x128x64")), ("l0c_stages", ("1", "2")))),
    },
    "37_streamk_matmul": {
        "default": SearchSpace(
            "default", "around the example's 128x256x256 / 128x256x64 (CATLASS registers no space)",
            TileRange((64, 256), (128, 256), (128, 256), (32, 64), step=64, l0_step=32), (("swizzle", _SWIZZLES),)),
    },
    "41_sparse_matmul_tla": {
        "default": SearchSpace(
            "default", "around the example's 128x256x128 / 128x256x64 (int8 4:2 sparse B; the kernel's tile rule "
                       "and the block's static_asserts keep the legal ones, L0 K in whole 64s; no roofline: B is half dense)",
            TileRange((64, 256), (128, 256), (64, 256), (64, 128), step=64)),
    },
    "42_quant_optimized_matmul_tla": {
        "default": SearchSpace(
            "default", "around the example's 128x256x512 / 128x256x128 (int8) and its workspace stages",
            TileRange((64, 256), (128, 256), (256, 512), (64, 128), step=64),
            (("swizzle", _SWIZZLES), ("workspace_stages", ("1", "2"))), problem=_mnk_int8),
    },
    "44_quant_matmul_full_loadA_tla": {
        "default": SearchSpace(
            "default", "around the example's 128x256x512 / 128x256x128 (int8; A's K panel must fit half of L1: the "
                       "kernel's CanImplement) and B's L1 stages",
            TileRange((64, 256), (128, 256), (256, 512), (64, 128), step=64), (("l1b_stages", ("1", "2")),)),
    },
    "45_strided_batched_matmul_tla": {
        "default": SearchSpace(
            "default", "around the example's 128x256x256 / 128x256x64 (CATLASS's search_space.py registers no TLA "
                       "example)",
            TileRange((64, 256), (64, 256), (128, 256), (32, 64), step=64, l0_step=32), (("swizzle", _SWIZZLES),),
            problem=_strided_batched_tla, problem_from_parse_args=True),
    },
    "52_quant_multi_core_splitk_matmul_tla": {
        "default": SearchSpace(
            "default", "around the example's 128x256x512 / 128x256x128 (int8; split-K: no roofline)",
            TileRange((64, 256), (128, 256), (256, 512), (64, 128), step=64), (("swizzle", _SWIZZLES),)),
    },
    "transpose_quant_batch_matmul": {
        "default": SearchSpace(
            "default", "the kernel's m0/n0 (multiples of 16) and k0 (multiples of 64) around the seed's 256x256x128",
            TileRange((64, 256), (64, 256), (64, 256), (0, 0), step=64, l1="tile_shape", l0=None)),
    },
}


def spaces_of(example: str) -> dict[str, SearchSpace]:
    """The search spaces of an example (by its NAME); the first is the default."""
    spaces = SPACES.get(example)
    if not spaces:
        raise ArgumentError(f"tune: no search space for {example!r} (spaces exist for: {', '.join(SPACES)})")
    return spaces


def space_of(example: str, name: str | None = None) -> SearchSpace:
    """The search space ``name`` of ``example`` (default: its first)."""
    spaces = spaces_of(example)
    if name is None:
        return next(iter(spaces.values()))
    if name not in spaces:
        raise ArgumentError(f"--space: {example} has the spaces {', '.join(spaces)}, not {name!r}")
    return spaces[name]


def describe_spaces(example: str) -> list[str]:
    """Lines describing the search spaces of ``example`` (for ``catlass-py tune NAME --help``)."""
    try:
        spaces = spaces_of(example)
    except ArgumentError:
        return [f"{example} has no search space."]
    lines = [f"search spaces of {example} (--space NAME; the first is the default):"]
    for name, space in spaces.items():
        lines.append(f"  {name}: {space.describe()}")
    return lines


# -- legality ------------------------------------------------------------------------------------------


def check_config(assemble, config: dict[str, str], arch) -> str | None:
    """None when ``assemble(arch, **config)`` builds a kernel; else the reason (the assembly's :class:`ConfigError`,
    or the setting that does not parse)."""
    from catlass_py.assemblies.settings import parse_settings

    try:
        kwargs = parse_settings(assemble, config, arch)
        assemble(arch=arch, **kwargs)
    except (ConfigError, ArgumentError, ValueError, TypeError) as exc:
        return f"{type(exc).__name__}: {exc}"
    except CatlassError as exc:  # pragma: no cover - any other assembly-time error
        return f"{type(exc).__name__}: {exc}"
    return None


def legal_configs(assemble, space: SearchSpace, arch, fixed: dict[str, str] | None = None,
                  rejected: list | None = None) -> Iterator[dict[str, str]]:
    """The candidates of ``space`` with the ``fixed`` settings (``tune --set``) that the assembly accepts (lazily),
    each with the fixed settings in it: a fixed keyword the space varies takes the fixed value in every candidate,
    so the space narrows to it (candidates that become the same are given once). ``rejected`` collects
    ``(config, reason)`` of the others."""
    fixed = fixed or {}
    seen: set = set()
    for cfg in space.candidates():
        if fixed:
            cfg = {**cfg, **fixed}
            key = tuple(sorted(cfg.items()))
            if key in seen:
                continue
            seen.add(key)
        reason = check_config(assemble, cfg, arch)
        if reason is None:
            yield cfg
        elif rejected is not None:
            rejected.append((cfg, reason))


# -- the roofline bound --------------------------------------------------------------------------------


def roofline_us(problem: Problem, l1_tile: str, arch, cores: int) -> float:
    """A lower bound on the cost model's predicted time (us) of a GEMM-like kernel with L1 tile ``l1_tile``
    (``MxNxK``): every output block reads its A rows x k and k x B columns from GM once at the faster of the
    per-core L2-hit and L2-miss read rates and runs ceil(rows/16) ceil(cols/16) ceil(k/K0) cube fractals at one
    per cycle; a core's time is at least its blocks' MTE2 time and at least their cube time, the busiest core has
    ceil(blocks/cores) blocks and the cores together all of them, A and B missing L2 once (at the slower miss
    rate); every read passes the shared L2 and A and B come from HBM at least once (the chip-wide floors); a core's
    last read and last store each land ``gm_latency_cycles`` after their transfer; every launch pays
    ``launch_overhead_us`` (and ``mix_launch_overhead_us`` when ``problem.mix``). Epilogues and other overheads only
    add time. (The sweep checks the bound against every prediction and stops pruning if one falls below it.)"""
    p = arch.cost
    bm, bn, _ = (int(x) for x in l1_tile.split("x"))
    m, n, k, batch = problem.m, problem.n, problem.k, problem.batch
    tm, tn = -(-m // bm), -(-n // bn)
    blocks = batch * tm * tn
    if blocks == 0:
        return 0.0
    used = min(cores, blocks)
    rate = max(p.gm_read_bytes_per_cycle, p.l2_read_bytes_per_cycle)
    miss = min(p.gm_read_bytes_per_cycle, p.l2_read_bytes_per_cycle)
    k0 = max(1, p.macs_per_cycle(problem.dtype) // 256)
    rows = [bm] * (m // bm) + ([m % bm] if m % bm else [])
    cols = [bn] * (n // bn) + ([n % bn] if n % bn else [])
    read = sum((r * k + k * c) * problem.elem for r in rows for c in cols) * batch
    cube = sum(-(-r // 16) * -(-c // 16) * -(-k // k0) for r in rows for c in cols) * batch
    small_read = (min(rows) * k + k * min(cols)) * problem.elem
    small_cube = -(-min(rows) // 16) * -(-min(cols) // 16) * -(-k // k0)
    busiest = -(-blocks // cores)
    compulsory = min(read, (m * k + k * n) * problem.elem * batch)  # A and B miss L2 at least once (it starts empty)
    mte2 = (compulsory / miss + (read - compulsory) / rate) / used
    per_core = max(mte2, busiest * small_read / rate, cube / used, busiest * small_cube)
    floor = max(read / (p.l2_bandwidth_gbps / p.clock_ghz), compulsory / (p.gm_bandwidth_gbps / p.clock_ghz))
    # A core's last read lands gm_latency after its transfer and the last store as long after its own; the chip-wide
    # floors bound the launch's time as they are (the cost model floors its time by the HBM's without the latencies).
    head = p.launch_overhead_us + (p.mix_launch_overhead_us if problem.mix else 0.0)
    return max(per_core + 2 * p.gm_latency_cycles, floor) / (p.clock_ghz * 1e3) + head


def is_mix(assemble, config: dict[str, str], arch) -> bool:
    """Whether the kernel ``assemble`` builds for ``config`` runs on cube and vector cores both (a MIX launch)."""
    from catlass_py.assemblies.settings import parse_settings

    kernel = assemble(arch=arch, **parse_settings(assemble, config, arch))
    return getattr(kernel, "aic", None) is not None and getattr(kernel, "aiv", None) is not None


__all__ = ["Problem", "SPACES", "SearchSpace", "TileRange", "check_config", "config_key", "describe_spaces",
           "is_mix", "legal_configs", "roofline_us", "space_of", "spaces_of"]
