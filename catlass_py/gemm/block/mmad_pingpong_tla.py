"""``BlockMmadTla`` for ``MmadPingpong`` (CATLASS ``gemm/block/block_mmad_pingpong_tla.hpp``): the TLA ping-pong
block of examples 13 and 52.

Synchronous: one call computes one block of C and stores it. Its operands are TLA tensors (the block's tiles of
A, B and C, :func:`catlass_py.tla.get_tile` of the kernel's GM tensors); inside, every buffer is a TLA tensor as
well (L1 stages in the L1 layouts of ``PackedTileCopyTla``, L0 tiles in zZ / nZ, the accumulator in the L0C
layout), moved by the TLA tile copies of :mod:`catlass_py.tile.copy_tla`. Compared with the 1.x
``MmadAtlasA2Pingpong`` block: separate stage counts for L1 A, L1 B, L0A, L0B and L0C, each L0 stage one tile
apart (not ``L0A_SIZE / STAGES``), tiles not rounded up before the L0 loads (the fractal layouts do it), a block
of one row computed as 16 rows on Atlas A2 (the cube's GEMV mode avoided), and the L1-resident option.
"""

from __future__ import annotations

from catlass_py.arch.context import EVENT_ID_COUNT
from catlass_py.arch.pipes import HardEvent
from catlass_py.errors import ArgumentError, ConfigError
from catlass_py.gemm.block.capabilities import TLA_CALL, BlockMmadCapabilities
from catlass_py.gemm.coord import GemmCoord, GemmShape, ceil_div
from catlass_py.gemm.dispatch_policy import MmadPingpong
from catlass_py.lifetime import CloseOnExit
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.tile.copy_tla import PackedTileCopyTla, TileMmadTla, make_tensor
from catlass_py.tla import get_tile, make_layout_l0c, make_layout_tag


def _aligned(label: str, extent: int, bits: int) -> str | None:
    return None if (extent * bits) % 256 == 0 else f"{label}={extent} ({extent * bits} bits)"


class BlockMmadTlaSpec:
    """What the TLA blocks share: the tile shapes, the elements and the bundle, the L1 layouts, the tile sizes and
    the static checks of ``block_mmad_pingpong_tla.hpp`` (each :class:`ConfigError` quotes CATLASS's rule)."""

    name = "BlockMmadTla"

    def __init__(self, policy, l1_tile_shape, l0_tile_shape, element_a, element_b, element_c, element_bias=None,
                 tile_copy=None, tile_mmad=None):
        self.policy = policy
        self.arch = arch = policy.arch
        what = self.what = f"BlockMmadTla<{type(policy).__name__}>"
        self.l1_tile_shape = l1 = GemmShape(*l1_tile_shape).check(f"{what}: L1TileShape")
        self.l0_tile_shape = l0 = GemmShape(*l0_tile_shape).check(f"{what}: L0TileShape")
        ea, eb, ec = get_dtype(element_a), get_dtype(element_b), get_dtype(element_c)
        if element_bias is not None:
            raise ConfigError(f"{what}: ElementBias is not modelled for the TLA blocks yet (void only)")
        if tile_copy is None:
            tile_copy = PackedTileCopyTla(arch, ea, "RowMajor", eb, "RowMajor", ec, "RowMajor")
        if not isinstance(tile_copy, PackedTileCopyTla):
            raise ConfigError(f"{what}: TileCopy must be a PackedTileCopyTla, got {tile_copy!r}")
        if (tile_copy.element_a, tile_copy.element_b, tile_copy.element_c) != (ea, eb, ec):
            raise ConfigError(f"{what}: the TileCopy bundle was built for elements {tile_copy.element_a}, "
                              f"{tile_copy.element_b}, {tile_copy.element_c}, not {ea}, {eb}, {ec}")
        if tile_copy.arch is not arch and tile_copy.arch != arch:
            raise ConfigError(f"{what}: the TileCopy bundle is for {tile_copy.arch.name}, the policy for {arch.name}")
        self.element_a, self.element_b, self.element_c = ea, eb, ec
        self.element_accumulator = tile_copy.element_accumulator
        self.tile_copy = tile_copy
        self.tile_mmad = tile_mmad if tile_mmad is not None else TileMmadTla(arch, ea, eb)
        self.layout_tag_a, self.layout_tag_b, self.layout_tag_c = (tile_copy.layout_tag_a, tile_copy.layout_tag_b,
                                                                   tile_copy.layout_tag_c)
        if self.element_c.name not in ("float16", "bfloat16", "float32") and self.layout_tag_c == "zN":
            raise ConfigError(f"{what}: LayoutC only supports zN in half or bfloat16 or float, RowMajor in all "
                              f"dtype yet (C is {self.element_c} in zN)")
        if not (l1.m == l0.m and l1.n == l0.n):
            raise ConfigError(f"{what}: the basic blocks of L1 and L0 must agree on M and N "
                              f"(L1_TILE_M == L0_TILE_M && L1_TILE_N == L0_TILE_N): L1 {tuple(l1)}, L0 {tuple(l0)}")
        if l0.k > l1.k:
            raise ConfigError(f"{what}: L0TileShape::K cannot exceed L1TileShape::K (L0_TILE_K <= L1_TILE_K): "
                              f"{l0.k} > {l1.k}")
        if arch.arch_code == 2201:
            bad = [b for b in (_aligned("L1TileShape::M", l1.m, ea.bits), _aligned("L1TileShape::K (A)",
                               l1.k, ea.bits), _aligned("L1TileShape::K (B)", l1.k, eb.bits),
                               _aligned("L1TileShape::N", l1.n, eb.bits),
                               _aligned("L0TileShape::K", l0.k, eb.bits)) if b]
            if bad:
                raise ConfigError(f"{what}: tile extents must be 32B aligned (L1_TILE_M * SizeOfBits<ElementA> % 256 "
                                  f"== 0, ...): " + ", ".join(bad))
        self.l1a_tile_size = ea.nbytes(l1.m * l1.k)
        self.l1b_tile_size = eb.nbytes(l1.n * l1.k)
        self.l0a_tile_size = ea.nbytes(l0.m * l0.k)
        self.l0b_tile_size = eb.nbytes(l0.k * l0.n)
        self.l0c_tile_size = self.element_accumulator.nbytes(l1.m * l1.n)
        self.l1a_layout = make_layout_tag(ea, tile_copy.layout_tag_l1a, l1.m, l1.k)
        self.l1b_layout = make_layout_tag(eb, tile_copy.layout_tag_l1b, l1.k, l1.n)
        # Stages are one tile apart, but tiles are stored in whole fractals: if rounding a tile up to fractals makes
        # it larger than the tile size, consecutive stages overlap (CATLASS does not check this).
        for label, layout, element, stage in (
            ("L1 A", self.l1a_layout, ea, self.l1a_tile_size), ("L1 B", self.l1b_layout, eb, self.l1b_tile_size),
            ("L0A", make_layout_tag(ea, tile_copy.layout_tag_l0a, l0.m, l0.k), ea, self.l0a_tile_size),
            ("L0B", make_layout_tag(eb, tile_copy.layout_tag_l0b, l0.k, l0.n), eb, self.l0b_tile_size),
        ):
            spans = element.nbytes(layout.cosize())
            if spans > stage:
                raise ConfigError(f"{what}: the {label} tile is stored as {layout}, which spans {spans} bytes in whole "
                                  f"fractals, but stages are {stage} bytes apart, so consecutive stages would overlap; "
                                  f"make the tile dimensions multiples of the fractal sides")

    def budget(self, label: str, need: int, have: int, formula: str) -> None:
        if need > have:
            raise ConfigError(f"{self.what}: {label} needs {need} bytes but {self.arch.name} has {have} ({formula})")

    def events(self, label: str, used: int, have: int, formula: str) -> None:
        if used > have:
            raise ConfigError(f"{self.what}: {label} need {used} event ids but only {have} are available "
                              f"(EVENT_ID 0~{EVENT_ID_COUNT - 1}: {formula})")

    def __repr__(self) -> str:
        return (f"{self.name}({self.policy!r}, L1 {tuple(self.l1_tile_shape)}, L0 {tuple(self.l0_tile_shape)}, "
                f"A {self.element_a} {self.layout_tag_a}, B {self.element_b} {self.layout_tag_b}, "
                f"C {self.element_c} {self.layout_tag_c})")


class BlockMmadPingpongTla(BlockMmadTlaSpec):
    """Assembled CATLASS ``BlockMmadTla<MmadPingpong<...>, L1TileShape, L0TileShape, ElementA, ElementB, ElementC,
    ElementBias, TileCopy, TileMmad>``.

    Checks (``static_assert`` in CATLASS): HF32 only for float (and not modelled here), ``L0C_STAGES == 1`` with
    the unit flag, ``L1A_TILE_SIZE * L1A_STAGES + L1B_TILE_SIZE * L1B_STAGES <= L1_SIZE``,
    ``L0A_TILE_SIZE * L0A_STAGES <= L0A_SIZE`` (B likewise), ``L0C_TILE_SIZE * L0C_STAGES <= L0C_SIZE``, L1/L0 tiles
    agree on M and N, ``L0_TILE_K <= L1_TILE_K``, 32-byte aligned tile extents, ``L1A_STAGES + L1B_STAGES <= 8`` and
    ``L0A_STAGES + L0B_STAGES <= 8`` (event ids). The 1.x policy's rule "unit flag off for int8" is not CATLASS's
    for this block (example 52 runs int8 with the unit flag).
    """

    CAPABILITIES = BlockMmadCapabilities(TLA_CALL)

    def __init__(self, policy: MmadPingpong, *args):
        super().__init__(policy, *args)
        p, arch, what = policy, self.arch, self.what
        if p.use_hf32_mode:
            if self.element_a.name != "float32" or self.element_b.name != "float32":
                raise ConfigError(f"{what}: HF32 MODE only supports in float (USE_HF32_MODE needs float A and B)")
            raise ConfigError(f"{what}: USE_HF32_MODE (fp32 inputs rounded to HF32 by the cube) is not modelled")
        if p.enable_unit_flag and p.l0c_stages != 1:
            raise ConfigError(f"{what}: L0C_STAGES must be 1 when UnitFlag is true (!(ENABLE_UNIT_FLAG && "
                              f"L0C_STAGES != 1)), got L0C_STAGES = {p.l0c_stages}")
        self.budget("L1 tiles", self.l1a_tile_size * p.l1a_stages + self.l1b_tile_size * p.l1b_stages, arch.l1_size,
                    "L1A_TILE_SIZE * L1A_STAGES + L1B_TILE_SIZE * L1B_STAGES <= L1_SIZE")
        self.budget("L0A tiles", self.l0a_tile_size * p.l0a_stages, arch.l0a_size, "L0A_TILE_SIZE * L0A_STAGES <= L0A_SIZE")
        self.budget("L0B tiles", self.l0b_tile_size * p.l0b_stages, arch.l0b_size, "L0B_TILE_SIZE * L0B_STAGES <= L0B_SIZE")
        self.budget("L0C tiles", self.l0c_tile_size * p.l0c_stages, arch.l0c_size, "L0C_TILE_SIZE * L0C_STAGES <= L0C_SIZE")
        self.events("L1 stages", p.l1a_stages + p.l1b_stages, EVENT_ID_COUNT, "(L1A_STAGES + L1B_STAGES) <= 8")
        self.events("L0 stages", p.l0a_stages + p.l0b_stages, EVENT_ID_COUNT, "(L0A_STAGES + L0B_STAGES) <= 8")
        self.events("L0C stages", p.l0c_stages, EVENT_ID_COUNT, "L0C_STAGES <= 8")

    def __call__(self, resource, l1_buf_addr_start: int = 0) -> "_PingpongTlaBlock":
        return _PingpongTlaBlock(self, resource, l1_buf_addr_start)


class _PingpongTlaBlock(CloseOnExit):
    """One cube core's :class:`BlockMmadPingpongTla` (the C++ constructor, ``operator()`` and destructor)."""

    def __init__(self, spec: BlockMmadPingpongTla, resource, l1_buf_addr_start: int = 0):
        self.spec = spec
        self.ctx = ctx = resource.ctx
        p = spec.policy
        ea, eb, acc = spec.element_a, spec.element_b, spec.element_accumulator
        l1b_start = l1_buf_addr_start + spec.l1a_tile_size * p.l1a_stages
        self.l1a = [resource.l1_buf.get_buffer_by_byte(ea, l1_buf_addr_start + spec.l1a_tile_size * i)
                    for i in range(p.l1a_stages)]
        self.l1b = [resource.l1_buf.get_buffer_by_byte(eb, l1b_start + spec.l1b_tile_size * i)
                    for i in range(p.l1b_stages)]
        self.l0a = [resource.l0a_buf.get_buffer_by_byte(ea, spec.l0a_tile_size * i) for i in range(p.l0a_stages)]
        self.l0b = [resource.l0b_buf.get_buffer_by_byte(eb, spec.l0b_tile_size * i) for i in range(p.l0b_stages)]
        self.l1a_event = list(range(p.l1a_stages))
        self.l1b_event = [p.l1a_stages + i for i in range(p.l1b_stages)]
        self.l0a_event = list(range(p.l0a_stages))
        self.l0b_event = [p.l0a_stages + i for i in range(p.l0b_stages)]
        for e in self.l1a_event + self.l1b_event:
            ctx.set_flag(HardEvent.MTE1_MTE2, e)
        for e in self.l0a_event + self.l0b_event:
            ctx.set_flag(HardEvent.M_MTE1, e)
        if not p.enable_unit_flag:
            self.l0c = [resource.l0c_buf.get_buffer_by_byte(acc, spec.l0c_tile_size * i) for i in range(p.l0c_stages)]
            self.l0c_event = list(range(p.l0c_stages))
            for e in self.l0c_event:
                ctx.set_flag(HardEvent.FIX_M, e)
        else:
            self.l0c = [resource.l0c_buf.get_buffer_by_byte(acc, 0)]
            self.l0c_event = [0]
        self.l1a_id = self.l1b_id = self.l0a_id = self.l0b_id = self.l0c_id = 0
        self.restore_status()

    def restore_status(self) -> None:
        """``RestoreStatus``: forget which tiles the L1 stages hold (L1-resident mode)."""
        self.last_a = [None] * self.spec.policy.l1a_stages
        self.last_b = [None] * self.spec.policy.l1b_stages

    def synchronize_block(self) -> None:
        """Nothing is pending in a synchronous block."""

    def close(self) -> None:
        """The destructor: wait for every buffer-free event."""
        ctx, p = self.ctx, self.spec.policy
        for e in self.l1a_event + self.l1b_event:
            ctx.wait_flag(HardEvent.MTE1_MTE2, e)
        for e in self.l0a_event + self.l0b_event:
            ctx.wait_flag(HardEvent.M_MTE1, e)
        if not p.enable_unit_flag:
            for e in self.l0c_event:
                ctx.wait_flag(HardEvent.FIX_M, e)

    # -- GM -> L1 ------------------------------------------------------------------------------------------------
    def _load(self, copy, stage, event: int, layout, tile, last: list, lid: int) -> None:
        """Wait for the L1 stage, copy the GM tile into it (unless the L1-resident mode finds it there), mark it
        loaded."""
        ctx = self.ctx
        ctx.wait_flag(HardEvent.MTE1_MTE2, event)
        key = (tile.builtin.buffer.id, tile.builtin.byte_offset, tile.coord)
        if not self.spec.policy.enable_l1_resident or last[lid] != key:
            copy(make_tensor(stage, layout), tile)
            last[lid] = key
        ctx.set_flag(HardEvent.MTE2_MTE1, event)

    def _load_k_tile(self, tensor_a, tensor_b, a_id: int, b_id: int, k_offset: int, m: int, n: int, k: int) -> None:
        spec = self.spec
        tc = spec.tile_copy
        tile_a = get_tile(tensor_a, (0, k_offset), (m, k))
        tile_b = get_tile(tensor_b, (k_offset, 0), (k, n))
        self._load(tc.copy_gm_to_l1_a, self.l1a[a_id], self.l1a_event[a_id], spec.l1a_layout, tile_a, self.last_a, a_id)
        self._load(tc.copy_gm_to_l1_b, self.l1b[b_id], self.l1b_event[b_id], spec.l1b_layout, tile_b, self.last_b, b_id)

    # -- operator() ----------------------------------------------------------------------------------------------
    def __call__(self, tensor_a, tensor_b, tensor_c, actual_shape) -> None:
        """Compute block C = A @ B (``actual_shape`` = m, n, k; the tensors are the block's tiles) and store it."""
        spec, ctx, p = self.spec, self.ctx, self.spec.policy
        m, n, k = GemmCoord(*actual_shape)
        if k == 0:
            raise ArgumentError(f"{spec.name}: k == 0 (CATLASS would store whatever L0C held)")
        for t, label in ((tensor_a, "A"), (tensor_b, "B"), (tensor_c, "C")):
            if getattr(t, "builtin", None) is None or t.position != "GM":
                raise ConfigError(f"{spec.name}: tensor{label} must be a TLA tensor over a GM tensor "
                                  f"(catlass_py.tile.copy_tla.make_tensor), got {t!r}")
        l1, l0, tc = spec.l1_tile_shape, spec.l0_tile_shape, spec.tile_copy
        m_l1 = 16 if (m == 1 and spec.arch.arch_code == 2201) else m  # no GEMV mode on Atlas A2
        n_l1 = n
        tensor_l0c = make_tensor(self.l0c[self.l0c_id], make_layout_l0c(m_l1, n_l1))
        k_l1 = min(k, l1.k)
        self._load_k_tile(tensor_a, tensor_b, self.l1a_id, self.l1b_id, 0, m, n, k_l1)
        if not p.enable_unit_flag:
            ctx.wait_flag(HardEvent.FIX_M, self.l0c_event[self.l0c_id])
        m_loops, n_loops = ceil_div(m_l1, l0.m), ceil_div(n_l1, l0.n)
        k_loops_l1 = ceil_div(k, l1.k)
        for k_idx in range(k_loops_l1):
            a_next = (self.l1a_id + 1) % p.l1a_stages
            b_next = (self.l1b_id + 1) % p.l1b_stages
            k_l1_next = 0
            if k_idx < k_loops_l1 - 1:
                k_l1_next = l1.k if k_idx + 1 < k_loops_l1 - 1 else k - (k_idx + 1) * l1.k
                self._load_k_tile(tensor_a, tensor_b, a_next, b_next, (k_idx + 1) * l1.k, m, n, k_l1_next)
            tensor_l1a = make_tensor(self.l1a[self.l1a_id], spec.l1a_layout)
            tensor_l1b = make_tensor(self.l1b[self.l1b_id], spec.l1b_layout)
            k_loops = ceil_div(k_l1, l0.k)
            for mi in range(m_loops):
                m_l0 = l0.m if mi < m_loops - 1 else m_l1 - mi * l0.m
                for ki in range(k_loops):
                    k_l0 = l0.k if ki < k_loops - 1 else k_l1 - ki * l0.k
                    tensor_l0a = make_tensor(self.l0a[self.l0a_id],
                                             make_layout_tag(spec.element_a, tc.layout_tag_l0a, m_l0, k_l0))
                    tile_l1a = get_tile(tensor_l1a, (mi * l0.m, ki * l0.k), (m_l0, k_l0))
                    ctx.wait_flag(HardEvent.M_MTE1, self.l0a_event[self.l0a_id])
                    if mi == 0 and ki == 0:
                        ctx.wait_flag(HardEvent.MTE2_MTE1, self.l1a_event[self.l1a_id])
                    tc.copy_l1_to_l0a(tensor_l0a, tile_l1a)
                    if mi == m_loops - 1 and ki == k_loops - 1:
                        ctx.set_flag(HardEvent.MTE1_MTE2, self.l1a_event[self.l1a_id])
                    init_c = k_idx == 0 and ki == 0
                    for ni in range(n_loops):
                        n_l0 = l0.n if ni < n_loops - 1 else n_l1 - ni * l0.n
                        tensor_l0b = make_tensor(self.l0b[self.l0b_id],
                                                 make_layout_tag(spec.element_b, tc.layout_tag_l0b, k_l0, n_l0))
                        tile_l1b = get_tile(tensor_l1b, (ki * l0.k, ni * l0.n), (k_l0, n_l0))
                        ctx.wait_flag(HardEvent.M_MTE1, self.l0b_event[self.l0b_id])
                        if mi == 0 and ki == 0 and ni == 0:
                            ctx.wait_flag(HardEvent.MTE2_MTE1, self.l1b_event[self.l1b_id])
                        tc.copy_l1_to_l0b(tensor_l0b, tile_l1b)
                        if mi == m_loops - 1 and ki == k_loops - 1 and ni == n_loops - 1:
                            ctx.set_flag(HardEvent.MTE1_MTE2, self.l1b_event[self.l1b_id])
                        ctx.set_flag(HardEvent.MTE1_M, self.l0c_event[self.l0c_id])
                        tile_l0c = get_tile(tensor_l0c, (mi * l0.m, ni * l0.n), (m_l0, n_l0))
                        ctx.wait_flag(HardEvent.MTE1_M, self.l0c_event[self.l0c_id])
                        unit_flag = 0
                        if p.enable_unit_flag:
                            last = (k_idx == k_loops_l1 - 1 and mi == m_loops - 1 and ki == k_loops - 1
                                    and ni == n_loops - 1)
                            unit_flag = 0b11 if last else 0b10
                        spec.tile_mmad(tile_l0c, tensor_l0a, tensor_l0b, m_l0, n_l0, k_l0, init_c, unit_flag)
                        ctx.set_flag(HardEvent.M_MTE1, self.l0b_event[self.l0b_id])
                        self.l0b_id = (self.l0b_id + 1) % p.l0b_stages
                    ctx.set_flag(HardEvent.M_MTE1, self.l0a_event[self.l0a_id])
                    self.l0a_id = (self.l0a_id + 1) % p.l0a_stages
            self.l1a_id, self.l1b_id = a_next, b_next
            k_l1 = k_l1_next
        if not p.enable_unit_flag:
            event = self.l0c_event[self.l0c_id]
            ctx.set_flag(HardEvent.M_FIX, event)
            ctx.wait_flag(HardEvent.M_FIX, event)
            tc.copy_l0c_to_gm(tensor_c, tensor_l0c)
            ctx.set_flag(HardEvent.FIX_M, event)
            self.l0c_id = (self.l0c_id + 1) % p.l0c_stages
        else:
            tc.copy_l0c_to_gm(tensor_c, tensor_l0c, 0b11)


__all__ = ["BlockMmadPingpongTla", "BlockMmadTlaSpec"]
