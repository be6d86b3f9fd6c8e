"""Architecture specs: the buffer sizes and limits of a simulated Ascend AI core.

Counterpart of CATLASS ``Arch::AtlasA2`` / ``Arch::Ascend950`` (``include/catlass/arch/arch.hpp``) plus the
cross-core flag limits of Ascend C ``CrossCoreSetFlag``. A spec is a frozen pydantic model so that a user
can load a variant from TOML (:func:`load_arch`) and every field is validated.
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from catlass_py.errors import ArgumentError, ConfigError

KIB = 1024

# Public sources of the cost parameters (see docs/performance-model.md):
# [CANN-A2]  CANN platform configuration of the Atlas A2 910B (Ascend910B2C.ini, sections [AICoreSpec],
#            [AICoreMemoryRates], [DtypeMKN]; the same file ships with every CANN toolkit under
#            <arch>-linux/data/platform_config/ and is mirrored in the public hicann/runtime repository).
# [CANN-950] The same file for the Ascend 950PR (Ascend950PR_9599.ini; also [VectorCoreMemoryRates]).
# [CATLASS]  CATLASS include/catlass/catlass.hpp: BYTE_PER_VECTOR_FRACTAL = 256 (one vector repeat).
# [CANN-910B1], [CANN-910B2], [CANN-910B3], [CANN-910B4]: the CANN platform configurations of the Atlas A2
#            device variants (Ascend910B1.ini ... Ascend910B4.ini, same place as [CANN-A2]): [SoCInfo]
#            ai_core_cnt, l2_size; [AICoreSpec] cube_freq; [AICoreMemoryRates] l2_read_rate, l2_write_rate.
# [CATLASS-BW] CATLASS docs/zh/1_Practice/evaluation/bottleneck_analysis_and_optimization.md lines 118-131
#            ("GM peak bandwidth about 1.8 TB/s") and line 184 (full-core head overhead of an Atlas A2
#            launch about 20-21 us).
# [CATLASS-PAD] CATLASS examples/102_dynamic_optimized_matmul/include/select_kernel_b16.h lines 92-211
#            (GetPaddingTag, CATLASS's own cost model of the padding decision: 30 GB/s per vector core reading a
#            matrix that fits the 192 MiB L2, 10 GB/s for a larger one; at most 80 GB/s per cube core).
# [CATLASS-MIX] CATLASS examples/102_dynamic_optimized_matmul/docs/en/CommonMatmul_en.md line 155 (the AIV
#            launch of a MIX kernel costs about 1-5 us).
# [CATLASS-512] CATLASS docs/zh/1_Practice/11_matmul_optimization.md line 92 (row-major operands whose rows are
#            512-byte aligned move faster) and line 143 (L1 tile sides that are multiples of 256 move faster
#            for RowMajor / ColumnMajor operands, zN hardly cares).
# "estimate": no public number; chosen to be plausible and documented as such.
# "fitted": chosen by the calibration against CATLASS's published timings (catlass_py.calibration; the fit,
#            the points used and the residuals are in docs/performance-model.md).


class CostParams(BaseModel):
    """Parameters of the cost model (:class:`catlass_py.analysis.CostModel`): clock, cube throughput per
    dtype, bytes per cycle of each data path, shared GM bandwidth, vector throughput and fixed latencies.

    Every rate is per core and per cycle of ``clock_ghz``; each field's description names its public
    source or says "estimate". The defaults are Atlas A2's.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    clock_ghz: float = Field(1.8, gt=0, description="AI core clock in GHz. [CANN-A2] cube_freq=1800 (MHz).")
    cube_macs_per_cycle: tuple[tuple[str, int], ...] = Field(
        (("float16", 4096), ("bfloat16", 4096), ("float32", 2048), ("int8", 8192), ("int4", 16384)),
        description="Multiply-accumulates one Mmad retires per cycle, by input dtype: one (M0 x K0 x N0) "
                    "fractal product per cycle. [CANN-A2] cube_m/n/k_size=16 and [DtypeMKN] DT_INT8=16,32,16, "
                    "DT_INT4=16,64,16 (default 16,16,16); float32 16x8x16 is from [CANN-950] DT_FLOAT (estimate "
                    "for A2, which does not list it). Dtypes not listed fall back to 'float16'. A TOML table "
                    "{int8 = 8192, ...} is accepted.",
    )
    gm_read_bytes_per_cycle: float = Field(
        59.1, gt=0, description="GM -> L1 (MTE2) bytes per cycle of one cube core for data not in L2 (read from HBM). "
                              "Fitted (docs/performance-model.md, calibration); for comparison [CANN-A2] "
                              "ddr_read_rate=32, and the K slope of CATLASS's published 12_quant_matmul timings, one "
                              "core streaming A and B, is about 56 B per cycle.")
    l2_read_bytes_per_cycle: float = Field(
        110, gt=0, description="GM -> L1 (MTE2) bytes per cycle of one cube core for data in L2. [CANN-A2] "
                               "l2_read_rate=110.")
    gm_write_bytes_per_cycle: float = Field(
        86, gt=0, description="L0C -> GM (fixpipe) bytes per cycle on the GM side: writes land in L2. [CANN-A2] "
                              "l2_write_rate=86.")
    aiv_gm_read_bytes_per_cycle: float = Field(
        100, gt=0, description="GM -> UB (MTE2) bytes per cycle of one vector core for data in L2. Estimate: [CANN-A2] "
                               "lists no vector-core rates; [CANN-950]'s [VectorCoreMemoryRates] l2_read_rate=100.")
    aiv_l2_miss_read_bytes_per_cycle: float = Field(
        16.7, gt=0, description="GM -> UB (MTE2) bytes per cycle of one vector core for data not in L2. [CATLASS-PAD] "
                                "30 GB/s per vector core for a matrix that fits L2 (16.7 B at 1.8 GHz); its 10 GB/s "
                                "for a matrix larger than L2 (thrashing) is not modelled.")
    ub_to_gm_bytes_per_cycle: float = Field(
        64, gt=0, description="UB -> GM (MTE3) bytes per cycle. [CANN-A2] ub_to_ddr_rate=64.")
    l1_to_l0a_bytes_per_cycle: float = Field(
        512, gt=0, description="L1 -> L0A (MTE1) bytes per cycle. [CANN-A2] l1_to_l0_a_rate=512.")
    l1_to_l0b_bytes_per_cycle: float = Field(
        256, gt=0, description="L1 -> L0B / BT / FB (MTE1) bytes per cycle. [CANN-A2] l1_to_l0_b_rate=256.")
    l0c_read_bytes_per_cycle: float = Field(
        256, gt=0, description="Bytes of L0C the fixpipe reads per cycle. [CANN-A2] l0_c_to_ub_rate=256 (the "
                               "L0C read port; used as an estimate for L0C -> GM).")
    vector_bytes_per_cycle: float = Field(
        256, gt=0, description="Bytes one vector instruction processes per cycle (one 256-byte repeat per cycle; "
                               "the wider of source and destination counts). [CATLASS] BYTE_PER_VECTOR_FRACTAL=256, "
                               "[CANN-A2] vec_calc_size=128 (fp16 elements); one repeat per cycle is an estimate.")
    gm_bandwidth_gbps: float = Field(
        1800, gt=0, description="HBM bandwidth in GB/s shared by all cores, for the bytes that miss L2. "
                                "[CATLASS-BW] 'about 1.8 TB/s'.")
    l2_bandwidth_gbps: float = Field(
        2628, gt=0, description="L2 read bandwidth in GB/s shared by all cores (every GM read passes L2). Fitted; "
                                "for comparison [CANN-A2] 24 cores x l2_read_rate 110 B x 1.8 GHz = 4.75 TB/s, and "
                                "[CATLASS-PAD] models 80 GB/s per cube core (1.9 TB/s for 24).")
    l2_size_bytes: int = Field(
        201326592, ge=0, description="L2 cache bytes shared by all cores (0: no L2, every read goes to HBM). "
                                     "[CANN-A2] l2_size=201326592 (192 MiB).")
    hbm_access_bytes: int = Field(
        512, ge=1, description="Granule of an HBM access: a read that misses L2 fetches every aligned granule it "
                               "touches. [CATLASS-512] (512-byte aligned rows move faster).")
    gm_run_cycles: float = Field(
        0.6, ge=0, description="MTE2 cycles per contiguous run (a row of an ND tile, a panel of a zN tile) of a GM "
                               "read, beside bytes / rate: the cost of moving an ND tile row by row. Fitted.")
    hbm_run_cycles: float = Field(
        0.29, ge=0, description="Cycles the HBM (shared by all cores) spends per contiguous run of a read that misses "
                               "L2, beside bytes / gm_bandwidth. Fitted.")
    launch_overhead_us: float = Field(
        4.96, ge=0, description="Head overhead of every launch in microseconds (the cores start the kernel, fetch "
                               "its first instructions, and the task ends). Fitted; [CATLASS-BW] line 184 reports "
                               "about 20-21 us for an empty full-core kernel, which the published 12.74 us of a whole "
                               "256x512x1024 matmul (tuner README) rules out for these measurements.")
    mix_launch_overhead_us: float = Field(
        3.83, ge=0, description="Extra head overhead of a MIX (cube + vector) launch, microseconds. Fitted; "
                               "[CATLASS-MIX] puts the AIV launch of a MIX kernel at 1-5 us.")
    gm_latency_cycles: int = Field(
        1239, ge=0, description="Cycles from issuing a GM transfer to its data landing (not occupying the pipe). "
                                "Fitted.")
    mte_overhead_cycles: int = Field(
        30, ge=0, description="Fixed pipe cycles per data-move instruction (MTE1/MTE2/MTE3/FIX). Estimate.")
    cube_overhead_cycles: int = Field(10, ge=0, description="Fixed pipe cycles per Mmad. Estimate.")
    vector_overhead_cycles: int = Field(10, ge=0, description="Fixed pipe cycles per vector instruction. Estimate.")
    scalar_issue_cycles: int = Field(
        8, ge=0, description="Scalar-unit cycles to issue one instruction to its pipe queue. Estimate.")
    scalar_gm_read_cycles: int = Field(
        300, ge=0, description="Cycles of a scalar GM read (GetValue), which stalls instruction issue. Estimate.")
    cross_core_latency_cycles: int = Field(
        100, ge=0, description="Cycles from a cross-core set to the wait on another core observing it. Estimate.")

    @field_validator("cube_macs_per_cycle", mode="before")
    @classmethod
    def _table(cls, value):
        # Stored as sorted (dtype, MACs) pairs so that the spec stays hashable; a mapping is accepted.
        items = value.items() if isinstance(value, dict) else value
        return tuple(sorted((str(k), int(v)) for k, v in items))

    def macs_per_cycle(self, dtype: str | None) -> int:
        """Cube MACs per cycle for input ``dtype`` (falls back to float16's)."""
        table = dict(self.cube_macs_per_cycle)
        return table.get(dtype or "float16") or table.get("float16") or max(table.values())

    @property
    def cycle_ns(self) -> float:
        return 1.0 / self.clock_ghz


class ArchSpec(BaseModel):
    """One simulated chip generation (CATLASS ``ArchTag``).

    Sizes are bytes per core: L1/L0A/L0B/L0C/BT/FB belong to the cube core (AIC), UB to each vector
    core (AIV).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="Display name, e.g. 'AtlasA2'.")
    arch_code: int = Field(description="CATLASS_ARCH value: 2201 = Atlas A2/A3, 3510 = Ascend 950.")
    core_num: int = Field(gt=0, description="AI cores (1 AIC + aiv_per_aic AIV each) a launch may use.")
    aiv_per_aic: int = Field(2, ge=1, le=2, description="Vector cores per AI core (mix ratio 1:2).")
    l1_size: int = Field(gt=0, description="L1 (A1/B1, 'cbuf') bytes.")
    l0a_size: int = Field(gt=0, description="L0A (A2) bytes.")
    l0b_size: int = Field(gt=0, description="L0B (B2) bytes.")
    l0c_size: int = Field(gt=0, description="L0C (CO1, accumulator) bytes.")
    ub_size: int = Field(gt=0, description="Unified buffer (VECCALC) bytes per AIV.")
    bt_size: int = Field(gt=0, description="Bias table (C2) bytes.")
    fb_size: int = Field(gt=0, description="Fixpipe buffer (C2PIPE2GM) bytes.")
    local_alignment: int = Field(32, gt=0, description="Byte alignment of local-buffer views (BYTE_PER_C0).")
    byte_per_blk_fp: int = Field(128, gt=0, description="Data block of L1->FB copies (BYTE_PER_BLK_FP).")
    mmad_max_mnk: int = Field(4095, gt=0, description="Largest m, n or k one Mmad instruction accepts.")
    flag_id_count: int = Field(16, gt=0, description="Cross-core flag ids per core (ids 0..count-1).")
    max_pending_sets: int = Field(15, gt=0, description="Sets a flag counter may hold unconsumed.")
    aiv_inter_block_barrier_id: int = Field(8, description="Flag id of CrossCoreBarrier<0> on AIVs.")
    aic_inter_block_barrier_id: int = Field(9, description="Flag id of CrossCoreBarrier<0> on AICs.")
    aiv_inter_subblock_barrier_id: int = Field(10, description="Flag id of CrossCoreBarrier<1> on AIVs.")
    cost: CostParams = Field(default_factory=CostParams,
                             description="Cost-model parameters (clock, throughputs, latencies); see CostParams.")

    def buffer_sizes(self) -> dict[str, int]:
        """Local buffer name -> bytes, in CATLASS ``Resource`` order."""
        return {
            "L1": self.l1_size,
            "L0A": self.l0a_size,
            "L0B": self.l0b_size,
            "BT": self.bt_size,
            "L0C": self.l0c_size,
            "UB": self.ub_size,
            "FB": self.fb_size,
        }

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        """``get_arch('AtlasA2')`` for a built-in spec, else ``arch_from_dict({...})`` with what differs from the
        built-in spec of its generation (its arch code): both evaluate to an equal spec, in a line or two."""
        for spec in _BUILTIN_SPECS:
            if self == spec:
                return f"get_arch({self.name!r})"
        base = next((b for b in _BUILTIN_SPECS if b.arch_code == self.arch_code), None)
        if base is None:
            return f"ArchSpec({', '.join(f'{k}={v!r}' for k, v in self.model_dump().items())})"
        mine, theirs = self.model_dump(), base.model_dump()
        diff = {k: v for k, v in mine.items() if k != "cost" and v != theirs[k]}
        cost = {k: v for k, v in mine["cost"].items() if _canonical(v) != _canonical(theirs["cost"][k])}
        if cost:
            diff["cost"] = cost
        return f"arch_from_dict({{'base': {base.name!r}, " + ", ".join(f"{k!r}: {v!r}" for k, v in diff.items()) + "})"


def _canonical(value):
    """A cost parameter as a value that compares by content (a table of (dtype, rate) pairs in any order)."""
    if isinstance(value, (tuple, list)) and all(isinstance(p, (tuple, list)) and len(p) == 2 for p in value):
        return sorted(map(tuple, value))
    return value


ATLAS_A2 = ArchSpec(
    name="AtlasA2",
    arch_code=2201,
    core_num=24,
    l1_size=512 * KIB,
    l0a_size=64 * KIB,
    l0b_size=64 * KIB,
    l0c_size=128 * KIB,
    ub_size=192 * KIB,
    bt_size=1 * KIB,
    fb_size=7 * KIB,
    byte_per_blk_fp=128,
)

ASCEND_950 = ArchSpec(
    name="Ascend950",
    arch_code=3510,
    core_num=32,
    l1_size=512 * KIB,
    l0a_size=64 * KIB,
    l0b_size=64 * KIB,
    l0c_size=256 * KIB,
    ub_size=248 * KIB,
    bt_size=4 * KIB,
    fb_size=16 * KIB,
    byte_per_blk_fp=64,
    cost=CostParams(
        clock_ghz=1.8,  # [CANN-950] cube_freq=1800
        cube_macs_per_cycle={"float16": 4096, "bfloat16": 4096, "float32": 2048, "int8": 8192, "int4": 16384,
                             "float8_e4m3fn": 8192, "float8_e5m2": 8192, "hifloat8": 8192,
                             "float4_e2m1fn": 16384, "float4_e1m2": 16384},  # [CANN-950] [DtypeMKN]
        gm_read_bytes_per_cycle=31,  # [CANN-950] ddr_read_rate=31 (an L2 miss)
        gm_write_bytes_per_cycle=31,  # [CANN-950] ddr_write_rate=31
        # The launch heads, latencies and run costs are the Atlas A2 fit's: no Ascend 950 kernel is calibrated.
        aiv_gm_read_bytes_per_cycle=100,  # [CANN-950] [VectorCoreMemoryRates] l2_read_rate=100 (an L2 hit)
        aiv_l2_miss_read_bytes_per_cycle=16,  # [CANN-950] [VectorCoreMemoryRates] ddr_read_rate=16
        ub_to_gm_bytes_per_cycle=40,  # [CANN-950] [VectorCoreMemoryRates] ub_to_ddr_rate=40
        l1_to_l0a_bytes_per_cycle=256,  # [CANN-950] l1_to_l0_a_rate=256
        l1_to_l0b_bytes_per_cycle=256,  # [CANN-950] l1_to_l0_b_rate=256
        l0c_read_bytes_per_cycle=128,  # [CANN-950] l0_c_to_ub_rate=128
        gm_bandwidth_gbps=1600,  # estimate: third-party reports of the 950PR's HiBL 1.0 memory (1.6 TB/s)
        l2_size_bytes=134217728,  # [CANN-950] l2_size=134217728 (128 MiB)
        l2_read_bytes_per_cycle=100,  # [CANN-950] l2_read_rate=100
    ),
)


def _a2_variant(name: str, core_num: int, clock_ghz: float, l2_size_bytes: int) -> ArchSpec:
    """An Atlas A2 device variant: ATLAS_A2's buffers and cost parameters with its own core count, clock and
    L2 size (the CANN platform configuration of each variant differs from Ascend910B2C.ini in these only)."""
    cost = ATLAS_A2.cost.model_copy(update={"clock_ghz": clock_ghz, "l2_size_bytes": l2_size_bytes})
    return ATLAS_A2.model_copy(update={"name": name, "core_num": core_num, "cost": cost})


ASCEND_910B1 = _a2_variant("Ascend910B1", 24, 1.85, 201326592)
"""Atlas A2 910B1: 24 AI cores at 1850 MHz, 192 MiB L2 ([CANN-910B1] ai_core_cnt, cube_freq, l2_size)."""
ASCEND_910B2 = _a2_variant("Ascend910B2", 24, 1.8, 201326592)
"""Atlas A2 910B2: 24 AI cores at 1800 MHz, 192 MiB L2 ([CANN-910B2]); ATLAS_A2 with its variant name."""
ASCEND_910B3 = _a2_variant("Ascend910B3", 20, 1.8, 201326592)
"""Atlas A2 910B3: 20 AI cores at 1800 MHz, 192 MiB L2 ([CANN-910B3])."""
ASCEND_910B4 = _a2_variant("Ascend910B4", 20, 1.5, 100663296)
"""Atlas A2 910B4: 20 AI cores at 1500 MHz, 96 MiB L2 ([CANN-910B4])."""
ASCEND_950PR = ASCEND_950.model_copy(update={"name": "Ascend950PR", "core_num": 36})
"""Ascend 950PR as [CANN-950] configures it: 36 AI cores (ai_core_cnt=36); ASCEND_950 launches at most 32."""

_BUILTIN_SPECS = (ATLAS_A2, ASCEND_950, ASCEND_910B1, ASCEND_910B2, ASCEND_910B3, ASCEND_910B4, ASCEND_950PR)

BUILTIN_ARCHS = {
    "atlasa2": ATLAS_A2, "atlas_a2": ATLAS_A2, "ascend950": ASCEND_950, "ascend_950": ASCEND_950,
    "ascend910b1": ASCEND_910B1, "910b1": ASCEND_910B1, "ascend910b2": ASCEND_910B2, "910b2": ASCEND_910B2,
    "ascend910b3": ASCEND_910B3, "910b3": ASCEND_910B3, "ascend910b4": ASCEND_910B4, "910b4": ASCEND_910B4,
    "ascend950pr": ASCEND_950PR, "950pr": ASCEND_950PR,
}
ARCH_NAMES = ("AtlasA2", "Ascend910B1", "Ascend910B2", "Ascend910B3", "Ascend910B4", "Ascend950", "Ascend950PR")
"""The names :func:`get_arch` knows (case-insensitive; '910B3' for 'Ascend910B3', '950PR' for 'Ascend950PR')."""


def get_arch(name_or_spec: "str | ArchSpec") -> ArchSpec:
    """Return a built-in spec by name (one of :data:`ARCH_NAMES`, any case; the 910B variants and 950PR also
    without 'Ascend'), or the spec itself."""
    if isinstance(name_or_spec, ArchSpec):
        return name_or_spec
    spec = BUILTIN_ARCHS.get(str(name_or_spec).lower())
    if spec is None:
        raise ArgumentError(f"arch: expected one of {', '.join(ARCH_NAMES)} or an ArchSpec, got {name_or_spec!r}")
    return spec


def arch_by_name(name: str) -> ArchSpec:
    """The built-in spec called ``name`` (one of :data:`ARCH_NAMES`, any case; the 910B variants and 950PR also
    without 'Ascend', e.g. '910B3'): what a command-line ``--arch NAME`` selects. Anything else is an
    :class:`ArgumentError` naming the choices."""
    if not isinstance(name, str):
        raise ArgumentError(f"arch: expected a name, one of {', '.join(ARCH_NAMES)}; got {name!r}")
    return get_arch(name.strip())


def arch_from_dict(data: dict[str, Any]) -> ArchSpec:
    """Build a spec from a mapping; ``base = 'AtlasA2'`` (optional) supplies every field not given."""
    data = dict(data)
    base = data.pop("base", None)
    fields = get_arch(base).model_dump() if base is not None else {}
    cost = data.pop("cost", None)
    fields.update(data)
    if cost is not None:  # a partial [arch.cost] table overrides single parameters of the base's
        fields["cost"] = {**fields.get("cost", {}), **cost} if isinstance(cost, dict) else cost
    try:
        return ArchSpec(**fields)
    except ValidationError as exc:
        raise ConfigError(f"invalid arch spec: {exc}") from None


def load_arch(path_or_text: "str | os.PathLike[str]") -> ArchSpec:
    """Load an :class:`ArchSpec` from a TOML file (or a TOML string containing a newline or '=')."""
    try:
        import tomllib  # Python >= 3.11
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    text = os.fspath(path_or_text)
    if "=" not in text:
        with open(text, "rb") as fh:
            data = tomllib.load(fh)
    else:
        data = tomllib.loads(text)
    if "arch" in data and isinstance(data["arch"], dict):
        data = data["arch"]
    return arch_from_dict(data)
