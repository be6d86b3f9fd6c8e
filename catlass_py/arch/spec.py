"""Architecture specs: the buffer sizes and limits of a simulated Ascend AI core.

Counterpart of CATLASS ``Arch::AtlasA2`` / ``Arch::Ascend950`` (``include/catlass/arch/arch.hpp``) plus the
cross-core flag limits of Ascend C ``CrossCoreSetFlag``. A spec is a frozen pydantic model so that a user
can load a variant from TOML (:func:`load_arch`) and every field is validated.
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from catlass_py.errors import ArgumentError, ConfigError

KIB = 1024


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
)

BUILTIN_ARCHS = {"atlasa2": ATLAS_A2, "atlas_a2": ATLAS_A2, "ascend950": ASCEND_950, "ascend_950": ASCEND_950}


def get_arch(name_or_spec: "str | ArchSpec") -> ArchSpec:
    """Return a built-in spec by name ('AtlasA2', 'Ascend950'), or the spec itself."""
    if isinstance(name_or_spec, ArchSpec):
        return name_or_spec
    spec = BUILTIN_ARCHS.get(str(name_or_spec).lower())
    if spec is None:
        raise ArgumentError(f"arch: expected one of 'AtlasA2', 'Ascend950' or an ArchSpec, got {name_or_spec!r}")
    return spec


def arch_from_dict(data: dict[str, Any]) -> ArchSpec:
    """Build a spec from a mapping; ``base = 'AtlasA2'`` (optional) supplies every field not given."""
    data = dict(data)
    base = data.pop("base", None)
    fields = get_arch(base).model_dump() if base is not None else {}
    fields.update(data)
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
