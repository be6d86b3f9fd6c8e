"""Block-level dispatch policies (CATLASS ``include/catlass/gemm/dispatch_policy.hpp``).

A policy is a small frozen value: the C++ template parameters become fields, and the policy selects the
``BlockMmad`` implementation (whose ``CAPABILITIES`` tell kernels how to call it). ``ASYNC`` is the C++
``MmadBase<ArchTag, ASYNC>`` parameter. The ``ArchTag`` is the keyword-only ``arch`` field: an Atlas A2 spec
(``arch_code`` 2201; :data:`~catlass_py.arch.ATLAS_A2` by default, or a variant of it such as one with more AI
cores). Checks that need only the policy itself run in ``__post_init__``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.errors import ConfigError
from catlass_py.integers import is_int


def _check_bool(name: str, v) -> None:
    if not isinstance(v, bool):
        raise ConfigError(f"{name} must be a bool, got {v!r}")


def _check_stages(name: str, v, low: int = 1) -> None:
    if not is_int(v) or v < low:
        raise ConfigError(f"{name} must be an int >= {low}, got {v!r}")


def check_arch_tag(what: str, arch, arch_code: int = ATLAS_A2.arch_code) -> None:
    """A policy's ``arch`` must be an :class:`ArchSpec` of the generation its name says (``arch_code``)."""
    if not isinstance(arch, ArchSpec) or arch.arch_code != arch_code:
        got = f"{arch.name} (arch_code {arch.arch_code})" if isinstance(arch, ArchSpec) else repr(arch)
        raise ConfigError(f"{what}: arch must be an ArchSpec with arch_code {arch_code} (ATLAS_A2 or a variant of it), "
                          f"got {got}")


@dataclass(frozen=True)
class MmadBase:
    """CATLASS ``MmadBase<ArchTag, ASYNC>``."""

    ASYNC: ClassVar[bool] = False
    arch: ArchSpec = field(default=ATLAS_A2, kw_only=True, repr=False)

    def __post_init__(self):
        check_arch_tag(type(self).__name__, self.arch)

    @property
    def arch_tag(self) -> ArchSpec:
        return self.arch


@dataclass(frozen=True)
class MmadAtlasA2Pingpong(MmadBase):
    """CATLASS ``MmadAtlasA2Pingpong<ENABLE_UNIT_FLAG>``: 2-stage L1/L0 ping-pong, synchronous block.

    CATLASS notes that the unit flag must be off for int8 inputs; the BlockMmad checks that at assembly.
    """

    enable_unit_flag: bool = False
    STAGES: ClassVar[int] = 2

    def __post_init__(self):
        super().__post_init__()
        _check_bool("enable_unit_flag", self.enable_unit_flag)


@dataclass(frozen=True)
class MmadAtlasA2Preload(MmadBase):
    """CATLASS ``MmadAtlasA2Preload<ENABLE_UNIT_FLAG, ENABLE_SHUFFLE_K>``: ping-pong plus prefetch of the next
    block's first K tile, and optional shuffle-K."""

    enable_unit_flag: bool = False
    enable_shuffle_k: bool = False
    STAGES: ClassVar[int] = 2

    def __post_init__(self):
        super().__post_init__()
        _check_bool("enable_unit_flag", self.enable_unit_flag)
        _check_bool("enable_shuffle_k", self.enable_shuffle_k)


@dataclass(frozen=True)
class MmadAtlasA2PreloadAsync(MmadBase):
    """CATLASS ``MmadAtlasA2PreloadAsync<PRELOAD_STAGES, L1_STAGES, L0A_STAGES, L0B_STAGES, L0C_STAGES,
    ENABLE_UNIT_FLAG, ENABLE_SHUFFLE_K>``: n-buffered L1/L0 stages and a FIFO of ``preload_stages`` pending
    L1 tiles that crosses block boundaries; one optional callback after each block's fixpipe.

    Rules checked here: every stage count >= 1, ``preload_stages < l1_stages`` (documented in
    ``03_dispatch_policies.md``: otherwise the refill of an L1 slot waits for a tile still queued in the FIFO
    and the core deadlocks). Buffer budgets are checked by the BlockMmad that uses the policy.
    """

    preload_stages: int = 1
    l1_stages: int = 2
    l0a_stages: int = 2
    l0b_stages: int = 2
    l0c_stages: int = 1
    enable_unit_flag: bool = False
    enable_shuffle_k: bool = False
    ASYNC: ClassVar[bool] = True

    def __post_init__(self):
        super().__post_init__()
        for name in ("preload_stages", "l1_stages", "l0a_stages", "l0b_stages", "l0c_stages"):
            _check_stages(name, getattr(self, name))
        _check_bool("enable_unit_flag", self.enable_unit_flag)
        _check_bool("enable_shuffle_k", self.enable_shuffle_k)
        if self.preload_stages >= self.l1_stages:
            raise ConfigError(
                f"{type(self).__name__}: preload_stages ({self.preload_stages}) must be < l1_stages "
                f"({self.l1_stages}); otherwise the L1 slot being refilled still holds a queued tile and the "
                f"MTE1->MTE2 wait never completes"
            )


@dataclass(frozen=True)
class MmadAtlasA2PreloadAsyncWithCallback(MmadAtlasA2PreloadAsync):
    """CATLASS ``MmadAtlasA2PreloadAsyncWithCallback<...>``: as :class:`MmadAtlasA2PreloadAsync` but each block
    takes two callbacks, run right before and right after its fixpipe store (example 10, 12)."""


@dataclass(frozen=True)
class MmadAtlasA2PingpongBias(MmadBase):
    """CATLASS ``MmadAtlasA2PingpongBias<ENABLE_UNIT_FLAG>``: the 2-stage ping-pong block with a bias row that
    initialises the accumulator from the BT buffer (example 20); synchronous."""

    enable_unit_flag: bool = False
    STAGES: ClassVar[int] = 2

    def __post_init__(self):
        super().__post_init__()
        _check_bool("enable_unit_flag", self.enable_unit_flag)


@dataclass(frozen=True)
class MmadAtlasA2SingleCoreSplitk(MmadBase):
    """CATLASS ``MmadAtlasA2SingleCoreSplitk<L1A_STAGES, L1B_STAGES, L0C_STAGES, ENABLE_UNIT_FLAG>``
    (example 34): one K tile of one block per call, separate L1 stage counts for A and B (an operand that
    the next call reuses stays in L1), 2 L0A/L0B stages, ``l0c_stages`` accumulators; synchronous.

    Rule checked here: the unit flag is forbidden with more than one L0C stage (CATLASS static_assert).
    """

    l1a_stages: int = 2
    l1b_stages: int = 2
    l0c_stages: int = 1
    enable_unit_flag: bool = False
    L0AB_STAGES: ClassVar[int] = 2

    def __post_init__(self):
        super().__post_init__()
        for name in ("l1a_stages", "l1b_stages", "l0c_stages"):
            _check_stages(name, getattr(self, name))
        _check_bool("enable_unit_flag", self.enable_unit_flag)
        if self.enable_unit_flag and self.l0c_stages > 1:
            raise ConfigError(
                f"MmadAtlasA2SingleCoreSplitk: the unit flag cannot be enabled with l0c_stages = {self.l0c_stages} > 1"
            )


@dataclass(frozen=True)
class MmadAtlasA2Streamk(MmadBase):
    """CATLASS ``MmadAtlasA2Streamk<ENABLE_UNIT_FLAG, ENABLE_SHUFFLE_K>`` (example 37): ping-pong block that
    stores either a whole block (to C) or a stream-K partial sum (fp32, to the workspace), and prefetches the
    next block's first K tile; synchronous."""

    enable_unit_flag: bool = False
    enable_shuffle_k: bool = False
    STAGES: ClassVar[int] = 2

    def __post_init__(self):
        super().__post_init__()
        _check_bool("enable_unit_flag", self.enable_unit_flag)
        _check_bool("enable_shuffle_k", self.enable_shuffle_k)


@dataclass(frozen=True)
class MmadPingpong(MmadBase):
    """CATLASS ``MmadPingpong<ArchTag, ENABLE_UNIT_FLAG, USE_HF32_MODE, L0C_STAGES, ENABLE_L1_RESIDENT, L1A_STAGES,
    L1B_STAGES, L0A_STAGES, L0B_STAGES>`` (``gemm/dispatch_policy.hpp``): the ping-pong policy of the TLA block
    ``BlockMmadTla`` (``gemm/block/block_mmad_pingpong_tla.hpp``, examples 13 and 52), with separate stage counts
    for L1 A, L1 B, L0A, L0B and L0C and the L1-resident option (a K tile of A or B already in its L1 stage is
    not loaded again); synchronous. Buffer budgets and the other rules are checked by the block."""

    enable_unit_flag: bool = False
    use_hf32_mode: bool = False
    l0c_stages: int = 1
    enable_l1_resident: bool = False
    l1a_stages: int = 2
    l1b_stages: int = 2
    l0a_stages: int = 2
    l0b_stages: int = 2

    def __post_init__(self):
        super().__post_init__()
        for name in ("enable_unit_flag", "use_hf32_mode", "enable_l1_resident"):
            _check_bool(name, getattr(self, name))
        for name in ("l0c_stages", "l1a_stages", "l1b_stages", "l0a_stages", "l0b_stages"):
            _check_stages(name, getattr(self, name))


@dataclass(frozen=True)
class MmadPingpongTlaV2(MmadBase):
    """CATLASS ``MmadPingpongTlaV2<ArchTag, ENABLE_UNIT_FLAG>`` (``gemm/dispatch_policy.hpp``): the policy of the
    second TLA ping-pong block (``gemm/block/block_mmad_pingpong_tla_v2.hpp``, example 45), two L1 and L0 stages,
    whose call takes only the block's tensors (the extents are their origin shapes); synchronous."""

    enable_unit_flag: bool = False
    STAGES: ClassVar[int] = 2

    def __post_init__(self):
        super().__post_init__()
        _check_bool("enable_unit_flag", self.enable_unit_flag)


@dataclass(frozen=True)
class SparseMatmulMultiBlockOnKAxis(MmadBase):
    """CATLASS ``SparseMatmulMultiBlockOnKAxis<ArchTag, ENABLE_UNIT_FLAG>`` (``gemm/dispatch_policy.hpp``): the policy
    of ``BlockMmadSparseTla`` (``gemm/block/block_mmad_sparse_tla.hpp``, example 41), two stages in L1 and L0,
    synchronous. ``ENABLE_UNIT_FLAG`` is kept as a template parameter but the block never uses it (its Mmads pass
    ``unitFlag = 0``)."""

    enable_unit_flag: bool = False
    STAGES: ClassVar[int] = 2

    def __post_init__(self):
        super().__post_init__()
        _check_bool("enable_unit_flag", self.enable_unit_flag)


@dataclass(frozen=True)
class MmadFullLoadA(MmadBase):
    """CATLASS ``MmadFullLoadA<ArchTag, ENABLE_UNIT_FLAG, ENABLE_SHUFFLE_K, USE_HF32_MODE, L0C_STAGES,
    ENABLE_L1_RESIDENT, L1A_STAGES, L1B_STAGES, L0A_STAGES, L0B_STAGES>`` (``gemm/dispatch_policy.hpp``): the TLA
    block that keeps the whole ``L1_TILE_M x K`` panel of A in L1 (half of L1) and streams B's K tiles
    (``gemm/block/block_mmad_pingpong_full_loadA_tla.hpp``, example 44); synchronous."""

    enable_unit_flag: bool = False
    enable_shuffle_k: bool = False
    use_hf32_mode: bool = False
    l0c_stages: int = 1
    enable_l1_resident: bool = False
    l1a_stages: int = 1
    l1b_stages: int = 2
    l0a_stages: int = 2
    l0b_stages: int = 2

    def __post_init__(self):
        super().__post_init__()
        for name in ("enable_unit_flag", "enable_shuffle_k", "use_hf32_mode", "enable_l1_resident"):
            _check_bool(name, getattr(self, name))
        for name in ("l0c_stages", "l1a_stages", "l1b_stages", "l0a_stages", "l0b_stages"):
            _check_stages(name, getattr(self, name))

