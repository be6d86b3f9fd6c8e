"""What the per-core BlockMmad objects share (the bodies of CATLASS ``gemm/block/block_mmad_*.hpp``).

* :func:`carve_stages`: the constructors' loops ``buf.GetBufferByByte<T>(start + SIZE * i)``;
* :class:`BlockMmadInstance`: GM -> L1 loads of one stage, the "L1 tile -> L0A/L0B -> Mmad" loop of the
  Pingpong-family blocks with its event flags, and the L0C -> GM fixpipe store;
* :class:`PingpongStagesInstance`: the constructor and destructor of the blocks with ``STAGES`` L1 and L0
  stages and one accumulator (Pingpong, PingpongBias, Preload, Streamk).

Each block keeps its own K-tile walk, its own event ids beyond these and its ``operator()`` signature in its
own module; these pieces issue exactly the instructions and flags the blocks issued inline before.
"""

from __future__ import annotations

from catlass_py.arch.pipes import HardEvent
from catlass_py.gemm.coord import ceil_div
from catlass_py.lifetime import CloseOnExit
from catlass_py.tile.copy_l1_to_l0 import CopyL1ToL0A, CopyL1ToL0B
from catlass_py.tile.mmad import TileMmad


def carve_stages(buf, element, first_byte: int, stage_bytes: int, stages: int) -> list:
    """``stages`` tensors of ``element`` in the local buffer ``buf``, ``stage_bytes`` apart from ``first_byte``."""
    return [buf.get_buffer_by_byte(element, first_byte + stage_bytes * i) for i in range(stages)]


def part_len(i: int, parts: int, total: int, part: int) -> int:
    """Length of part ``i`` of ``total`` cut into ``parts`` parts of ``part``: the last one takes the rest
    (CATLASS's ``(i < parts - 1) ? part : total - i * part``)."""
    return part if i < parts - 1 else total - i * part


class BlockMmadInstance(CloseOnExit):
    """Base of one cube core's BlockMmad object.

    A subclass sets ``spec`` and ``ctx`` and the stage lists it uses: ``l1a``/``l1b`` with ``l1a_event``/
    ``l1b_event``; for :meth:`mmad_l1_tile` also ``l0a``/``l0b``, ``l0a_event``/``l0b_event``,
    ``l0a_stages``/``l0b_stages`` and the rotating ``l0a_list_id``/``l0b_list_id``.
    """

    def synchronize_block(self) -> None:
        """Nothing is pending in a synchronous block (present so kernels can call it uniformly)."""

    # -- GM -> L1 --------------------------------------------------------------------------------
    def load_l1_a(self, lid: int, gm_a, layout_a, m: int, k: int) -> None:
        """Copy the m x k tile of A at ``gm_a`` into L1 A stage ``lid`` once that stage is free
        (MTE1_MTE2), then mark it loaded (MTE2_MTE1)."""
        spec, ctx = self.spec, self.ctx
        ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1a_event[lid])
        spec.tile_copy.copy_gm_to_l1_a(self.l1a[lid], gm_a, spec.l1a_layout, layout_a.get_tile_layout(m, k))
        ctx.set_flag(HardEvent.MTE2_MTE1, self.l1a_event[lid])

    def load_l1_b(self, lid: int, gm_b, layout_b, k: int, n: int) -> None:
        """Copy the k x n tile of B at ``gm_b`` into L1 B stage ``lid`` (same events as :meth:`load_l1_a`)."""
        spec, ctx = self.spec, self.ctx
        ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1b_event[lid])
        spec.tile_copy.copy_gm_to_l1_b(self.l1b[lid], gm_b, spec.l1b_layout, layout_b.get_tile_layout(k, n))
        ctx.set_flag(HardEvent.MTE2_MTE1, self.l1b_event[lid])

    def load_l1(self, lid: int, gm_a, layout_a, gm_b, layout_b, m: int, n: int, k: int) -> None:
        """One K tile of A (m x k), then of B (k x n), into L1 stage ``lid``."""
        self.load_l1_a(lid, gm_a, layout_a, m, k)
        self.load_l1_b(lid, gm_b, layout_b, k, n)

    def load_k_tile(self, lid: int, gm_a, layout_a, gm_b, layout_b, m: int, n: int, k: int, t: int) -> int:
        """Load K tile ``t`` (``L1.K`` long, the last one shorter) of the m x k block of A at ``gm_a`` and the
        k x n block of B at ``gm_b`` into L1 stage ``lid``; return the tile's length."""
        l1k = self.spec.l1_tile_shape.k
        k_actual = part_len(t, ceil_div(k, l1k), k, l1k)
        self.load_l1(lid, gm_a[layout_a.offset(0, t * l1k)], layout_a, gm_b[layout_b.offset(t * l1k, 0)], layout_b,
                     m, n, k_actual)
        return k_actual

    # -- L1 -> L0A/L0B -> Mmad ---------------------------------------------------------------------
    def mmad_l1_tile(self, lid: int, k_actual: int, m_round: int, n_round: int, l0c, layout_c_in_l0,
                     first_k_tile: bool, last_k_tile: bool, m_actual: int | None = None) -> None:
        """Multiply the K tile in L1 stage ``lid`` into ``l0c`` (CATLASS ``L1TileMmad`` / the body of the K loop).

        For each L0 M part and K part, L1 A -> the next L0A stage; inside, for each N part, L1 B -> the next
        L0B stage and one Mmad. The L1 stage is awaited (MTE2_MTE1) before its first L1 -> L0 copy and freed
        (MTE1_MTE2) after its last; each L0 stage is awaited (M_MTE1) before it is written and freed after
        its Mmad. The accumulator starts from zero on the first K part of the block (``first_k_tile``); with
        the unit flag, the last Mmad of the block (``last_k_tile``) closes it (0b11, else 0b10).

        ``m_actual``: the block's real rows (``m_round`` rounds them up to the fractal), when only those are
        stored: the Mmads may then skip the data work of the padding rows (``TileMmad``'s ``valid_m``).
        """
        spec, ctx = self.spec, self.ctx
        l0 = spec.l0_tile_shape
        l1a, l1b = self.l1a[lid], self.l1b[lid]
        unit_flag = spec.policy.enable_unit_flag
        m_loops = ceil_div(m_round, l0.m)
        n_loops = ceil_div(n_round, l0.n)
        k_loops = ceil_div(k_actual, l0.k)
        fused = self._fused_product(l1a, l1b, k_actual, m_round, n_round, l0c, m_loops, n_loops, k_loops, m_actual)
        data = fused is None
        proof = None
        bus = ctx.bus
        capture = False
        replayable = not data or (not ctx.numerics and self._plain_tile(m_loops, n_loops, k_loops))
        if replayable and (not bus.instructions or bus.templates):
            # the geometry (buffers by arena name and offset: the same for every core of the launch), and what the
            # events depend on beside it: whether the Mmads start the accumulator and the last one's unit flag;
            # first the id of the launch's proof set of this BlockMmad (the key also names the template)
            proven = self._proven_l1_tiles
            if proven is None:
                proven = self._proven_l1_tiles = self._proof_set()
            proof = (id(proven), lid, self.l0a_list_id, self.l0b_list_id, k_actual, m_round, n_round, l0c.arena.name,
                     l0c.byte_offset, l0c.count, layout_c_in_l0.__class__, layout_c_in_l0._key(), first_k_tile,
                     unit_flag and last_k_tile, self.l0a[self.l0a_list_id].byte_offset,
                     self.l0b[self.l0b_list_id].byte_offset, l1a.byte_offset, l1b.byte_offset)
            if proof in proven:
                self._replay_l1_tile(lid, k_loops, m_round, fused, first_k_tile, m_actual, proof)
                return
            capture = bus.templates
            if capture:
                bus.capture_begin(ctx.core)
        for mi in range(m_loops):
            m_part = part_len(mi, m_loops, m_round, l0.m)
            self._valid_m = None if m_actual is None else min(m_part, max(0, m_actual - mi * l0.m))
            for ki in range(k_loops):
                k_part = part_len(ki, k_loops, k_actual, l0.k)
                l0a = self.l0a[self.l0a_list_id]
                ctx.wait_flag(HardEvent.M_MTE1, self.l0a_event[self.l0a_list_id])
                if mi == 0 and ki == 0:
                    ctx.wait_flag(HardEvent.MTE2_MTE1, self.l1a_event[lid])
                copy_a = spec.tile_copy.copy_l1_to_l0a
                args = (l0a, l1a[spec.l1a_layout.offset(mi * l0.m, ki * l0.k)],
                        spec.layout_a_in_l0.make_layout(spec.element_a, m_part, k_part), spec.l1a_layout)
                copy_a(*args) if data else copy_a(*args, data=False)
                if mi == m_loops - 1 and ki == k_loops - 1:
                    ctx.set_flag(HardEvent.MTE1_MTE2, self.l1a_event[lid])
                for ni in range(n_loops):
                    n_part = part_len(ni, n_loops, n_round, l0.n)
                    l0b = self.l0b[self.l0b_list_id]
                    ctx.wait_flag(HardEvent.M_MTE1, self.l0b_event[self.l0b_list_id])
                    if ki == 0 and ni == 0:
                        ctx.wait_flag(HardEvent.MTE2_MTE1, self.l1b_event[lid])
                    copy_b = spec.tile_copy.copy_l1_to_l0b
                    args = (l0b, l1b[spec.l1b_layout.offset(ki * l0.k, ni * l0.n)],
                            spec.layout_b_in_l0.make_layout(spec.element_b, k_part, n_part), spec.l1b_layout)
                    copy_b(*args) if data else copy_b(*args, data=False)
                    if ki == k_loops - 1 and ni == n_loops - 1:
                        ctx.set_flag(HardEvent.MTE1_MTE2, self.l1b_event[lid])
                    init_c = first_k_tile and ki == 0
                    if init_c:
                        self.before_first_mmad(ni, n_loops, n_part)
                    ctx.set_flag(HardEvent.MTE1_M, 0)
                    l0c_tile = l0c[layout_c_in_l0.offset(mi * l0.m, ni * l0.n)]
                    ctx.wait_flag(HardEvent.MTE1_M, 0)
                    flag = 0
                    if unit_flag:
                        last = last_k_tile and mi == m_loops - 1 and ki == k_loops - 1 and ni == n_loops - 1
                        flag = 0b11 if last else 0b10
                    if data:
                        self.mmad(l0c_tile, l0a, l0b, m_part, n_part, k_part, init_c, flag)
                    elif ki == k_loops - 1:  # the tile's last Mmad computes the whole tile (one M and N part)
                        spec.tile_mmad(l0c_tile, l0a, l0b, m_part, n_part, k_part, init_c, flag, data=False,
                                       l1_plan=fused, l1_init=first_k_tile)
                    else:
                        spec.tile_mmad(l0c_tile, l0a, l0b, m_part, n_part, k_part, init_c, flag, data=False)
                    ctx.set_flag(HardEvent.M_MTE1, self.l0b_event[self.l0b_list_id])
                    self.l0b_list_id = (self.l0b_list_id + 1) % self.l0b_stages
                ctx.set_flag(HardEvent.M_MTE1, self.l0a_event[self.l0a_list_id])
                self.l0a_list_id = (self.l0a_list_id + 1) % self.l0a_stages
        if proof is not None and (not capture or bus.capture_end(ctx.core, proof)):
            self._proven_l1_tiles.add(proof)

    def _replay_l1_tile(self, lid: int, k_loops: int, m_round: int, fused, first_k_tile: bool,
                        m_actual: int | None, proof) -> None:
        """:meth:`mmad_l1_tile` of a fused L1 tile (one L0 M part and one N part, see :meth:`_fused_product`), or
        of such a tile of any dtype in a timing-only run, whose geometry has already run through the full loop (the
        ``proof`` key; on this or another core of the launch, :meth:`_proof_set`), when nobody observes
        instructions or every observer of instructions took that run's events as a template (the cost model,
        :class:`~catlass_py.arch.events.ObserverBus`): the same flags in the same order (published one at a time
        to an observer of flag events that takes no templates) and the same product (none timing-only), without
        calling the L1 -> L0 loads and Mmads; the observers get the template again with this run's flag sequence
        numbers. With ``data=False``,
        or timing-only, those calls only make checks and publish events that depend on the geometry alone (the
        L1 stage, the L0A/L0B stages from the current list ids, K, the rounded M and N, the accumulator and its
        layout: the proof key), and the full loop made them without error."""
        ctx = self.ctx
        bus = ctx.bus
        seqs: list[int] | None = [] if bus.templates else None
        key = ("L1 tile flags", proof)  # the flags depend on what the proof key holds (stage, list ids, K parts)
        ops = ctx.tile_cache.get(key)
        if ops is None:
            ops = ctx.tile_cache[key] = self._l1_tile_flags(lid, k_loops)
        if not ctx.replay_flags(ops, seqs):  # an observer of flags events: each flag as the full loop issues it
            for is_set, event, event_id in ops:
                (ctx.set_flag if is_set else ctx.wait_flag)(event, event_id)
        self.l0a_list_id = (self.l0a_list_id + k_loops) % self.l0a_stages
        self.l0b_list_id = (self.l0b_list_id + k_loops) % self.l0b_stages
        self._valid_m = None if m_actual is None else min(m_round, max(0, m_actual))
        if fused is not None:  # (after every wait of the tile, as in the loop: the last Mmad computes it)
            TileMmad._run(fused, first_k_tile)
        if seqs is not None:
            bus.replay(ctx.core, proof, seqs)

    def _l1_tile_flags(self, lid: int, k_loops: int) -> tuple:
        """The ``(is_set, event, event_id)`` flags of :meth:`mmad_l1_tile`'s loop over one L1 tile of ``k_loops`` K
        parts (one M and N part), in its order, from the current L0A/L0B list ids: per K part the L0A stage's
        M_MTE1 wait (and the L1 stage's MTE2_MTE1 on the first part, its MTE1_MTE2 set on the last), the same for
        L0B, the MTE1_M set and wait around the Mmad, then the L0B and L0A stages' M_MTE1 sets."""
        m_mte1, mte2_mte1, mte1_mte2, mte1_m = HardEvent.M_MTE1, HardEvent.MTE2_MTE1, HardEvent.MTE1_MTE2, HardEvent.MTE1_M
        ev_l1a, ev_l1b = self.l1a_event[lid], self.l1b_event[lid]
        a_id, b_id = self.l0a_list_id, self.l0b_list_id
        ops = []
        last = k_loops - 1
        for ki in range(k_loops):
            ops.append((False, m_mte1, self.l0a_event[a_id]))
            if ki == 0:
                ops.append((False, mte2_mte1, ev_l1a))
            if ki == last:
                ops.append((True, mte1_mte2, ev_l1a))
            ops.append((False, m_mte1, self.l0b_event[b_id]))
            if ki == 0:
                ops.append((False, mte2_mte1, ev_l1b))
            if ki == last:
                ops.append((True, mte1_mte2, ev_l1b))
            ops += [(True, mte1_m, 0), (False, mte1_m, 0), (True, m_mte1, self.l0b_event[b_id]),
                    (True, m_mte1, self.l0a_event[a_id])]
            a_id = (a_id + 1) % self.l0a_stages
            b_id = (b_id + 1) % self.l0b_stages
        return tuple(ops)

    def _fused_product(self, l1a, l1b, k_actual, m_round, n_round, l0c, m_loops, n_loops, k_loops, m_actual):
        """The plan of :meth:`TileMmad.l1_product` when the L1 tile's data work can be one product: exact integer
        Mmads (any grouping of K sums the same), one L0 M part and one N part (one accumulator region), the
        standard L1 -> L0 loads and TileMmad, no hook of this class overridden (bias blocks move BT and start
        the accumulator from it), a computing core and no mutation being applied. Its Mmads and loads then run
        with ``data=False``: the same instructions, events and checks; the last Mmad computes the whole tile
        (L0C changes inside an instruction that declares writing it), L0A/L0B keep their old bytes (nothing but
        these Mmads read them) and L0C gets the same values. None otherwise."""
        spec, ctx = self.spec, self.ctx
        tile_mmad = spec.tile_mmad
        if not ctx.numerics or not self._plain_tile(m_loops, n_loops, k_loops) or tile_mmad.element_acc.kind != "int":
            return None
        valid = None if m_actual is None else min(m_round, max(0, m_actual))
        return tile_mmad.l1_product(l0c, l1a, spec.l1a_layout, l1b, spec.l1b_layout, m_round, n_round, k_actual,
                                    valid)

    def _proof_set(self) -> set:
        """Where :meth:`mmad_l1_tile` keeps the proof keys of the tiles it ran through the full loop: a set shared
        by the launch's instances of this class and BlockMmad, keyed on the arena names and buffer offsets
        instead of the arenas: every core's arenas have the launch arch's sizes, so a geometry one core ran
        without error passes the same checks on another (what the replay repeats, the flags, is checked on
        every core). Beside templates the proof key is also the template's: a core replays a template another
        core captured, whose on-chip accesses stand for its own at the same offsets (:meth:`ObserverBus.replay`)."""
        return self.ctx.launch_shared(("proven L1 tiles", type(self)), self.spec, set)

    def _plain_tile(self, m_loops: int, n_loops: int, k_loops: int) -> bool:
        """Whether :meth:`mmad_l1_tile`'s loop is the plain one :meth:`_replay_l1_tile` repeats: one L0 M part and
        one N part, the standard L1 -> L0 loads and TileMmad, no hook of this class overridden (bias blocks move BT
        and start the accumulator from it), no sync-site editor."""
        spec = self.spec
        tile_copy = spec.tile_copy
        return (m_loops == 1 and n_loops == 1 and k_loops >= 1 and self.ctx._editor is None
                and type(spec.tile_mmad) is TileMmad and type(tile_copy.copy_l1_to_l0a) is CopyL1ToL0A
                and type(tile_copy.copy_l1_to_l0b) is CopyL1ToL0B and type(self).mmad is BlockMmadInstance.mmad
                and type(self).before_first_mmad is BlockMmadInstance.before_first_mmad)

    def before_first_mmad(self, ni: int, n_loops: int, n_part: int) -> None:
        """Hook of :meth:`mmad_l1_tile`, before each Mmad that starts the accumulator (N part ``ni``):
        nothing here; the bias block moves the N part's bias to BT."""

    _valid_m: int | None = None  # rows of the current L0 M part that are stored (see mmad_l1_tile's m_actual)
    _proven_l1_tiles: set | None = None  # proof keys of the L1 tiles run through the full loop (_proof_set)

    def mmad(self, l0c_tile, l0a, l0b, m_part: int, n_part: int, k_part: int, init_c: bool, unit_flag: int) -> None:
        """Hook of :meth:`mmad_l1_tile`: one ``TileMmad`` (the bias block starts the accumulator from BT)."""
        tile_mmad = self.spec.tile_mmad
        if self._valid_m is None or not isinstance(tile_mmad, TileMmad):  # the hint is TileMmad's own keyword
            tile_mmad(l0c_tile, l0a, l0b, m_part, n_part, k_part, init_c, unit_flag)
        else:
            tile_mmad(l0c_tile, l0a, l0b, m_part, n_part, k_part, init_c, unit_flag, valid_m=self._valid_m)

    # -- L0C -> GM ---------------------------------------------------------------------------------
    def store_l0c(self, gm_c, l0c, layout_c, layout_c_in_l0, event_id: int = 0, copy=None) -> None:
        """Fixpipe ``l0c`` to ``gm_c`` with ``copy`` (default: the TileCopy's ``copy_l0c_to_gm``). Without the
        unit flag the store waits for the Mmads (M_FIX) and frees the accumulator after it (FIX_M,
        ``event_id``); with it, the unit flag (0b11) orders the two and no event is used."""
        if copy is None:
            copy = self.spec.tile_copy.copy_l0c_to_gm
        if not self.spec.policy.enable_unit_flag:
            ctx = self.ctx
            ctx.set_flag(HardEvent.M_FIX, event_id)
            ctx.wait_flag(HardEvent.M_FIX, event_id)
            copy(gm_c, l0c, layout_c, layout_c_in_l0)
            ctx.set_flag(HardEvent.FIX_M, event_id)
        else:
            copy(gm_c, l0c, layout_c, layout_c_in_l0, 0b11)


class PingpongStagesInstance(BlockMmadInstance):
    """Constructor and destructor of the blocks with ``STAGES`` L1 and L0 stages and one accumulator
    (Pingpong, PingpongBias, Preload, Streamk).

    Buffers: from ``l1_buf_addr_start`` every L1 A stage, then every L1 B stage (tile size apart); L0A and L0B
    cut into ``STAGES`` equal parts; L0C from byte 0. Event ids: L1 A stage i -> i, L1 B stage i ->
    ``STAGES + i`` (MTE1_MTE2 / MTE2_MTE1); L0A i -> i, L0B i -> ``STAGES + i`` (M_MTE1); the accumulator 0
    (FIX_M). Each buffer-free event is set here, stage by stage (L1 A, L1 B, L0A, L0B) and then the
    accumulator's, and waited in the same order by :meth:`close`.
    """

    def uses_accumulator_event(self) -> bool:
        """Whether the accumulator-free event FIX_M 0 is set and waited (the stream-K block skips it with the
        unit flag)."""
        return True

    def __init__(self, spec, resource, l1_buf_addr_start: int = 0):
        self.spec = spec
        self.ctx = ctx = resource.ctx
        s = spec.stages
        ea, eb = spec.element_a, spec.element_b
        l1b_off = l1_buf_addr_start + spec.l1a_tile_size * s
        self.l1a = carve_stages(resource.l1_buf, ea, l1_buf_addr_start, spec.l1a_tile_size, s)
        self.l1b = carve_stages(resource.l1_buf, eb, l1b_off, spec.l1b_tile_size, s)
        self.l0a = carve_stages(resource.l0a_buf, ea, 0, spec.l0a_pingpong_size, s)
        self.l0b = carve_stages(resource.l0b_buf, eb, 0, spec.l0b_pingpong_size, s)
        self.l0c = resource.l0c_buf.get_buffer_by_byte(spec.element_accumulator, 0)
        self.l1a_event = list(range(s))
        self.l1b_event = [i + s for i in range(s)]
        self.l0a_event = list(range(s))
        self.l0b_event = [i + s for i in range(s)]
        for i in range(s):
            ctx.set_flag(HardEvent.MTE1_MTE2, self.l1a_event[i])
            ctx.set_flag(HardEvent.MTE1_MTE2, self.l1b_event[i])
            ctx.set_flag(HardEvent.M_MTE1, self.l0a_event[i])
            ctx.set_flag(HardEvent.M_MTE1, self.l0b_event[i])
        if self.uses_accumulator_event():
            ctx.set_flag(HardEvent.FIX_M, 0)
        self.l0a_stages = self.l0b_stages = s
        self.l1_list_id = self.l0a_list_id = self.l0b_list_id = 0

    def close(self) -> None:
        """The C++ destructor: wait for every buffer-free event."""
        ctx = self.ctx
        for i in range(self.spec.stages):
            ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1a_event[i])
            ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1b_event[i])
            ctx.wait_flag(HardEvent.M_MTE1, self.l0a_event[i])
            ctx.wait_flag(HardEvent.M_MTE1, self.l0b_event[i])
        if self.uses_accumulator_event():
            ctx.wait_flag(HardEvent.FIX_M, 0)


__all__ = ["BlockMmadInstance", "PingpongStagesInstance", "carve_stages", "part_len"]
