"""BlockMmad for ``MmadAtlasA2SingleCoreSplitk`` (CATLASS ``gemm/block/block_mmad_single_core_splitk.hpp``,
example 34).

Synchronous. One call computes one K tile (``actual_shape.k <= L1.K``) of one output block and stores it to
C, *adding* to C when the kernel requests atomic accumulation (every K tile after the first). A and B have
their own L1 stage counts: the kernel tells each call whether the next call needs a new A and/or B tile
(``need_load_next_a/b``); with two stages the next tile is loaded before computing, with one stage after,
and an operand the next call shares stays in L1 untouched. Unlike the other A2 blocks, L0 tiles may split M
and N (``L0.M <= L1.M``, ``L0.N <= L1.N``); every (m, n) L0 tile has its own accumulator, ``l0c_stages`` of
which rotate.

Pipeline events: L1 A stage i -> i, L1 B stage i -> L1A_STAGES + i (MTE1_MTE2 / MTE2_MTE1); L0A i -> i, L0B i
-> 2 + i (M_MTE1); L0C stage i -> i (FIX_M / M_FIX / MTE1_M).
"""

from __future__ import annotations

from catlass_py.arch.context import EVENT_ID_COUNT as EVENT_IDS
from catlass_py.arch.pipes import HardEvent
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm.block.block_mmad_instance import (
    BlockMmadInstance,
    carve_stages,
    part_len,
)
from catlass_py.gemm.block.capabilities import (
    SINGLE_CORE_SPLITK_CALL,
    BlockMmadCapabilities,
)
from catlass_py.gemm.coord import GemmCoord, GemmShape, ceil_div, round_up
from catlass_py.gemm.dispatch_policy import MmadAtlasA2SingleCoreSplitk
from catlass_py.gemm.gemm_type import GemmType
from catlass_py.gemm.helper import (
    check_tile_shape_alignment,
    element_accumulator,
    l0a_layout,
    l0b_layout,
    l1_align,
    l1_layout_for,
)
from catlass_py.layout import RowMajor, zN
from catlass_py.tile.atomic import AtomicCopyL0CToGm, set_atomic_add, set_atomic_none
from catlass_py.tile.mmad import TileMmad
from catlass_py.tile.tile_copy import TileCopy


class BlockMmadSingleCoreSplitk:
    """Assembled CATLASS ``BlockMmad<MmadAtlasA2SingleCoreSplitk<L1A, L1B, L0C, UNIT_FLAG>, L1, L0, A, B, C, Bias,
    TileCopy, TileMmad>``.

    Checks (the C++ static_asserts): ``L1A_SIZE * L1A_STAGES + L1B_SIZE * L1B_STAGES <= L1``,
    ``L0C_TILE * L0C_STAGES <= L0C``, ``L0A_TILE * 2 <= L0A``, ``L0B_TILE * 2 <= L0B``, ``L0.K <= L1.K``,
    ``L0.M <= L1.M``, ``L0.N <= L1.N``, 32-byte tile alignment, RowMajor C; plus the event ids fit.
    """

    name = "BlockMmadSingleCoreSplitk"
    CAPABILITIES = BlockMmadCapabilities(SINGLE_CORE_SPLITK_CALL)

    def __init__(self, policy: MmadAtlasA2SingleCoreSplitk, l1_tile_shape, l0_tile_shape, a_type: GemmType,
                 b_type: GemmType, c_type: GemmType, bias_type=None, tile_copy=None, tile_mmad=None):
        what = f"BlockMmad<{type(policy).__name__}>"
        self.policy = policy
        self.arch = arch = policy.arch
        self.l1_tile_shape = l1 = GemmShape(*l1_tile_shape).check(f"{what}: L1TileShape")
        self.l0_tile_shape = l0 = GemmShape(*l0_tile_shape).check(f"{what}: L0TileShape")
        for label, t in (("AType", a_type), ("BType", b_type), ("CType", c_type)):
            if not isinstance(t, GemmType):
                raise ConfigError(f"{what}: {label} must be a GemmType, got {t!r}")
        if bias_type is not None:
            raise ConfigError(f"{what}: the single-core split-K block takes no bias")
        self.a_type, self.b_type, self.c_type, self.bias_type = a_type, b_type, c_type, None
        self.element_a, self.element_b, self.element_c = a_type.element, b_type.element, c_type.element
        self.element_accumulator = element_accumulator(self.element_a, self.element_b, arch)
        if c_type.layout is not RowMajor:
            raise ConfigError(f"{what}: LayoutC only supports RowMajor, got {c_type.layout.__name__}")
        if tile_copy is None:
            tile_copy = TileCopy(arch, a_type, b_type, c_type)
        if (tile_copy.a_type, tile_copy.b_type, tile_copy.c_type) != (a_type, b_type, c_type):
            raise ConfigError(f"{what}: the TileCopy bundle was built for other operand types")
        # Atomic accumulation of later K tiles: route the fixpipe through the atomic-aware wrapper.
        tile_copy = tile_copy.replace(copy_l0c_to_gm=AtomicCopyL0CToGm(tile_copy.copy_l0c_to_gm))
        self.tile_copy = tile_copy
        self.tile_mmad = tile_mmad if tile_mmad is not None else TileMmad(arch, a_type, b_type)
        self.l1_a_align = l1_align(self.element_a, a_type.layout)
        self.l1_b_align = l1_align(self.element_b, b_type.layout)
        self.layout_a_in_l1 = l1_layout_for(a_type.layout)
        self.layout_b_in_l1 = l1_layout_for(b_type.layout)
        self.layout_a_in_l0 = l0a_layout(arch)
        self.layout_b_in_l0 = l0b_layout(arch)
        p = policy
        self.l1a_tile_size = self.element_a.nbytes(l1.m * l1.k)
        self.l1b_tile_size = self.element_b.nbytes(l1.k * l1.n)
        need = self.l1a_tile_size * p.l1a_stages + self.l1b_tile_size * p.l1b_stages
        if need > arch.l1_size:
            raise ConfigError(f"{what}: L1 needs {need} bytes but {arch.name} has {arch.l1_size} "
                              f"(L1A_SIZE * L1A_STAGES + L1B_SIZE * L1B_STAGES <= L1_SIZE)")
        self.l0a_tile_size = self.element_a.nbytes(l0.m * l0.k)
        self.l0b_tile_size = self.element_b.nbytes(l0.k * l0.n)
        self.l0c_tile_size = self.element_accumulator.nbytes(l0.m * l0.n)
        for label, size, stages, have in (("L0C", self.l0c_tile_size, p.l0c_stages, arch.l0c_size),
                                          ("L0A", self.l0a_tile_size, p.L0AB_STAGES, arch.l0a_size),
                                          ("L0B", self.l0b_tile_size, p.L0AB_STAGES, arch.l0b_size)):
            if size * stages > have:
                raise ConfigError(f"{what}: {label} needs {size} x {stages} = {size * stages} bytes but {arch.name} "
                                  f"has {have} (L0TileShape exceeding the {label} space)")
        for label, a, b in (("K", l0.k, l1.k), ("M", l0.m, l1.m), ("N", l0.n, l1.n)):
            if a > b:
                raise ConfigError(f"{what}: L0TileShape::{label} ({a}) cannot exceed L1TileShape::{label} ({b})")
        check_tile_shape_alignment(l1, l0, self.element_a, self.element_b, what)
        if p.l1a_stages + p.l1b_stages > EVENT_IDS or 2 * p.L0AB_STAGES > EVENT_IDS or p.l0c_stages > EVENT_IDS:
            raise ConfigError(f"{what}: the stage counts need more than {EVENT_IDS} event ids per event pair")
        self.l0a_pingpong_size = arch.l0a_size // p.L0AB_STAGES
        self.l0b_pingpong_size = arch.l0b_size // p.L0AB_STAGES
        self.l0c_pingpong_size = arch.l0c_size // p.l0c_stages
        self.l1a_layout = self.layout_a_in_l1.make_layout(self.element_a, l1.m, l1.k)
        self.l1b_layout = self.layout_b_in_l1.make_layout(self.element_b, l1.k, l1.n)

    def __call__(self, resource, l1_buf_addr_start: int = 0) -> "_SingleCoreSplitkBlock":
        return _SingleCoreSplitkBlock(self, resource, l1_buf_addr_start)

    def __repr__(self) -> str:
        return (f"{self.name}({self.policy!r}, L1 {tuple(self.l1_tile_shape)}, L0 {tuple(self.l0_tile_shape)}, "
                f"A {self.a_type}, B {self.b_type}, C {self.c_type})")


class _SingleCoreSplitkBlock(BlockMmadInstance):
    """One cube core's instance of :class:`BlockMmadSingleCoreSplitk` (events as in the module doc)."""

    def __init__(self, spec: BlockMmadSingleCoreSplitk, resource, l1_buf_addr_start: int = 0):
        self.spec = spec
        self.ctx = ctx = resource.ctx
        p = spec.policy
        ea, eb = spec.element_a, spec.element_b
        l1b_off = l1_buf_addr_start + spec.l1a_tile_size * p.l1a_stages
        self.l1a = carve_stages(resource.l1_buf, ea, l1_buf_addr_start, spec.l1a_tile_size, p.l1a_stages)
        self.l1a_event = list(range(p.l1a_stages))
        self.l1b = carve_stages(resource.l1_buf, eb, l1b_off, spec.l1b_tile_size, p.l1b_stages)
        self.l1b_event = [i + p.l1a_stages for i in range(p.l1b_stages)]
        for e in self.l1a_event + self.l1b_event:
            ctx.set_flag(HardEvent.MTE1_MTE2, e)
        s = p.L0AB_STAGES
        self.l0a = carve_stages(resource.l0a_buf, ea, 0, spec.l0a_pingpong_size, s)
        self.l0b = carve_stages(resource.l0b_buf, eb, 0, spec.l0b_pingpong_size, s)
        self.l0a_event = list(range(s))
        self.l0b_event = [i + s for i in range(s)]
        for e in self.l0a_event + self.l0b_event:
            ctx.set_flag(HardEvent.M_MTE1, e)
        self.l0c = carve_stages(resource.l0c_buf, spec.element_accumulator, 0, spec.l0c_pingpong_size, p.l0c_stages)
        self.l0c_event = list(range(p.l0c_stages))
        for e in self.l0c_event:
            ctx.set_flag(HardEvent.FIX_M, e)
        self.pre_loaded_a = self.pre_loaded_b = False
        self.l1a_list_id = self.l1b_list_id = self.l0c_list_id = 0

    def close(self) -> None:
        """The C++ destructor: wait for every buffer-free event."""
        ctx = self.ctx
        for e in self.l1a_event + self.l1b_event:
            ctx.wait_flag(HardEvent.MTE1_MTE2, e)
        for e in self.l0a_event + self.l0b_event:
            ctx.wait_flag(HardEvent.M_MTE1, e)
        for e in self.l0c_event:
            ctx.wait_flag(HardEvent.FIX_M, e)

    def __call__(self, gm_block_a, layout_a, gm_block_b, layout_b, gm_block_c, layout_c, gm_next_block_a,
                 gm_next_block_b, actual_shape, actual_shape_next, need_load_next_a: bool, need_load_next_b: bool,
                 atomic_add: bool) -> None:
        """Multiply one K tile of a block (``actual_shape`` = m, n, k <= L1.K) and store (or, with
        ``atomic_add``, accumulate) it to ``gm_block_c``; load the next call's A/B tiles if needed."""
        spec, ctx = self.spec, self.ctx
        p, l0 = spec.policy, spec.l0_tile_shape
        shape = GemmCoord(*actual_shape)
        nxt = GemmCoord(*actual_shape_next)
        if shape.k == 0 or shape.k > spec.l1_tile_shape.k:
            raise ArgumentError(
                f"BlockMmadSingleCoreSplitk: the K tile must be 1..{spec.l1_tile_shape.k}, got {shape.k}")
        is_first = not self.pre_loaded_a and not self.pre_loaded_b
        is_last = not need_load_next_a and not need_load_next_b
        a_next = (self.l1a_list_id + 1) % p.l1a_stages
        b_next = (self.l1b_list_id + 1) % p.l1b_stages
        if is_first:
            self.load_l1_a(self.l1a_list_id, gm_block_a, layout_a, shape.m, shape.k)
            self.load_l1_b(self.l1b_list_id, gm_block_b, layout_b, shape.k, shape.n)
        if need_load_next_a and p.l1a_stages > 1:
            self.load_l1_a(a_next, gm_next_block_a, layout_a, nxt.m, nxt.k)
        if need_load_next_b and p.l1b_stages > 1:
            self.load_l1_b(b_next, gm_next_block_b, layout_b, nxt.k, nxt.n)
        l1a, l1b = self.l1a[self.l1a_list_id], self.l1b[self.l1b_list_id]
        if atomic_add:
            set_atomic_add(ctx, spec.element_accumulator)
        else:
            set_atomic_none(ctx)
        m_loops = ceil_div(shape.m, l0.m)
        n_loops = ceil_div(shape.n, l0.n)
        k_loops = ceil_div(shape.k, l0.k)
        unit_flag = p.enable_unit_flag
        for mi in range(m_loops):
            for ni in range(n_loops):
                m_act = part_len(mi, m_loops, shape.m, l0.m)
                n_act = part_len(ni, n_loops, shape.n, l0.n)
                m_round = round_up(m_act, spec.l1_a_align.m_aligned)
                n_round = round_up(n_act, spec.l1_b_align.n_aligned)
                layout_in_l0c = zN.make_layout_in_l0c(m_round, n_round)
                start = mi == 0 and ni == 0
                end = mi == m_loops - 1 and ni == n_loops - 1
                wait_a = (is_first or self.pre_loaded_a) and start
                set_a = (need_load_next_a or is_last) and end
                wait_b = (is_first or self.pre_loaded_b) and start
                set_b = (need_load_next_b or is_last) and end
                cid = self.l0c_list_id
                if not unit_flag:
                    ctx.wait_flag(HardEvent.FIX_M, self.l0c_event[cid])
                l0a_id = l0b_id = 0
                for ki in range(k_loops):
                    k_act = part_len(ki, k_loops, shape.k, l0.k)
                    l0a = self.l0a[l0a_id]
                    ctx.wait_flag(HardEvent.M_MTE1, self.l0a_event[l0a_id])
                    if wait_a and ki == 0:
                        ctx.wait_flag(HardEvent.MTE2_MTE1, self.l1a_event[self.l1a_list_id])
                    spec.tile_copy.copy_l1_to_l0a(l0a, l1a[spec.l1a_layout.offset(mi * l0.m, ki * l0.k)],
                                                  spec.layout_a_in_l0.make_layout(spec.element_a, m_round, k_act),
                                                  spec.l1a_layout)
                    if set_a and ki == k_loops - 1:
                        ctx.set_flag(HardEvent.MTE1_MTE2, self.l1a_event[self.l1a_list_id])
                    l0b = self.l0b[l0b_id]
                    ctx.wait_flag(HardEvent.M_MTE1, self.l0b_event[l0b_id])
                    if wait_b and ki == 0:
                        ctx.wait_flag(HardEvent.MTE2_MTE1, self.l1b_event[self.l1b_list_id])
                    spec.tile_copy.copy_l1_to_l0b(l0b, l1b[spec.l1b_layout.offset(ki * l0.k, ni * l0.n)],
                                                  spec.layout_b_in_l0.make_layout(spec.element_b, k_act, n_round),
                                                  spec.l1b_layout)
                    if set_b and ki == k_loops - 1:
                        ctx.set_flag(HardEvent.MTE1_MTE2, self.l1b_event[self.l1b_list_id])
                    ctx.set_flag(HardEvent.MTE1_M, self.l0c_event[cid])
                    ctx.wait_flag(HardEvent.MTE1_M, self.l0c_event[cid])
                    flag = 0
                    if unit_flag:
                        flag = 0b11 if ki == k_loops - 1 else 0b10
                    spec.tile_mmad(self.l0c[cid], l0a, l0b, m_round, n_round, k_act, ki == 0, flag)
                    ctx.set_flag(HardEvent.M_MTE1, self.l0b_event[l0b_id])
                    l0b_id = (l0b_id + 1) % p.L0AB_STAGES
                    ctx.set_flag(HardEvent.M_MTE1, self.l0a_event[l0a_id])
                    l0a_id = (l0a_id + 1) % p.L0AB_STAGES
                self.store_l0c(gm_block_c[layout_c.offset(mi * l0.m, ni * l0.n)], self.l0c[cid],
                               layout_c.get_tile_layout(m_act, n_act), layout_in_l0c, self.l0c_event[cid])
                self.l0c_list_id = (cid + 1) % p.l0c_stages
        if need_load_next_a and p.l1a_stages == 1:
            self.load_l1_a(a_next, gm_next_block_a, layout_a, nxt.m, nxt.k)
        if need_load_next_b and p.l1b_stages == 1:
            self.load_l1_b(b_next, gm_next_block_b, layout_b, nxt.k, nxt.n)
        self.pre_loaded_a = need_load_next_a
        self.pre_loaded_b = need_load_next_b
        if need_load_next_a:
            self.l1a_list_id = a_next
        if need_load_next_b:
            self.l1b_list_id = b_next


__all__ = ["BlockMmadSingleCoreSplitk"]
