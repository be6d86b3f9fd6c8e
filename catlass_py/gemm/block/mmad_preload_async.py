"""BlockMmad for ``MmadAtlasA2PreloadAsync[WithCallback]`` (CATLASS ``block_mmad_preload_async.hpp`` and
``block_mmad_preload_async_with_callback.hpp``).

*Preload*: GM->L1 loads run ``preload_stages`` L1 tiles ahead of the L1->L0/Mmad work, across block and
group boundaries (the queue of pending tiles lives in the block object). *Async*: a call returns before its
block is finished; the last tiles of a block, its fixpipe store and the callbacks around it run during a
later call or in :meth:`synchronize_block`.

Life of one L1 tile (a K slice of a block):

==========  ====================================================  =================================
state       entered                                               left
==========  ====================================================  =================================
loaded      ``__call__`` copies it GM->L1 into slot ``l1_list_id``  when the queue is full at the
                                                                  next load, or synchronize_block
queued      pushed on the FIFO (at most ``preload_stages``)        popped oldest-first
computed    L1->L0A/L0B and Mmad into L0C                          -
stored      (last tile of a block) callback_before, fixpipe,       -
            callback_after
==========  ====================================================  =================================
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Callable

from catlass_py.arch.pipes import HardEvent
from catlass_py.errors import ArgumentError
from catlass_py.gemm.block._base import BlockMmadSpec
from catlass_py.gemm.coord import GemmCoord, ceil_div, round_up
from catlass_py.gemm.dispatch_policy import MmadAtlasA2PreloadAsync
from catlass_py.layout import zN


class BlockMmadPreloadAsync(BlockMmadSpec):
    """Assembled CATLASS ``BlockMmad<MmadAtlasA2PreloadAsync<PRELOAD, L1, L0A, L0B, L0C, UNIT_FLAG, SHUFFLE_K>,
    ...>``: one optional ``callback`` runs after each block's fixpipe.

    Checks (reference 5.2): ``(L1A + L1B) * L1_STAGES <= L1``, ``L0A_TILE * L0A_STAGES <= L0A``,
    ``L0B_TILE * L0B_STAGES <= L0B``, ``L1.M * L1.N * sizeof(acc) * L0C_STAGES <= L0C``, L1/L0 tiles agree on
    M and N, ``L0.K <= L1.K``, 32-byte alignment, and the event ids fit the hardware's 8 per event pair.
    """

    name = "BlockMmadPreloadAsync"
    ASYNC = True
    WITH_CALLBACK = False

    def __init__(self, policy: MmadAtlasA2PreloadAsync, *args):
        super().__init__(policy, *args)
        what = self.describe_short(policy)
        p, arch, l1 = policy, self.arch, self.l1_tile_shape
        self._budget(what, "L1 (A + B tiles) x l1_stages", (self.l1a_tile_size + self.l1b_tile_size) * p.l1_stages,
                     arch.l1_size, "(L1A_TILE_SIZE + L1B_TILE_SIZE) * L1_STAGES <= L1_SIZE")
        self._budget(what, "L0A tiles", self.l0a_tile_size * p.l0a_stages, arch.l0a_size,
                     "L0A_TILE_SIZE * L0A_STAGES <= L0A_SIZE")
        self._budget(what, "L0B tiles", self.l0b_tile_size * p.l0b_stages, arch.l0b_size,
                     "L0B_TILE_SIZE * L0B_STAGES <= L0B_SIZE")
        self.l0c_tile_size = self.element_accumulator.nbytes(l1.m * l1.n)
        self._budget(what, "L0C tiles", self.l0c_tile_size * p.l0c_stages, arch.l0c_size,
                     "L1.M * L1.N * sizeof(acc) * L0C_STAGES <= L0C_SIZE")
        self._events(what, "L1 A/B stages (MTE1_MTE2)", 2 * p.l1_stages)
        self._events(what, "L0A + L0B stages (M_MTE1)", p.l0a_stages + p.l0b_stages)
        self._events(what, "L0C stages (FIX_M)", p.l0c_stages)

    def __call__(self, resource, l1_buf_addr_start: int = 0) -> "_PreloadAsyncBlock":
        return _PreloadAsyncBlock(self, resource, l1_buf_addr_start)


class BlockMmadPreloadAsyncWithCallback(BlockMmadPreloadAsync):
    """Assembled CATLASS ``BlockMmad<MmadAtlasA2PreloadAsyncWithCallback<...>, ...>``: each block takes two
    callbacks, run right before and right after its fixpipe store (example 10 waits for the vector cores
    to free the workspace slot before, and signals "stored" after)."""

    name = "BlockMmadPreloadAsyncWithCallback"
    WITH_CALLBACK = True


@dataclass
class _L1TileMmadParams:
    l1_list_id: int
    m_round: int
    n_round: int
    k_actual: int
    is_k_loop_first: bool
    is_k_loop_last: bool
    gm_block_c: Any = None
    layout_c_in_gm: Any = None
    callback_before_fixpipe: Callable[[], None] | None = None
    callback_after_fixpipe: Callable[[], None] | None = None


class _PreloadAsyncBlock:
    """One cube core's instance of :class:`BlockMmadPreloadAsync` (or ``WithCallback``)."""

    def __init__(self, spec: BlockMmadPreloadAsync, resource, l1_buf_addr_start: int = 0):
        self.spec = spec
        self.ctx = ctx = resource.ctx
        p = spec.policy
        ea, eb = spec.element_a, spec.element_b
        l1a_off = l1_buf_addr_start
        l1b_off = l1_buf_addr_start + spec.l1a_tile_size * p.l1_stages
        self.l1a = [resource.l1_buf.get_buffer_by_byte(ea, l1a_off + spec.l1a_tile_size * i) for i in range(p.l1_stages)]
        self.l1b = [resource.l1_buf.get_buffer_by_byte(eb, l1b_off + spec.l1b_tile_size * i) for i in range(p.l1_stages)]
        self.l1a_event = list(range(p.l1_stages))
        self.l1b_event = [i + p.l1_stages for i in range(p.l1_stages)]
        for i in range(p.l1_stages):
            ctx.set_flag(HardEvent.MTE1_MTE2, self.l1a_event[i])
            ctx.set_flag(HardEvent.MTE1_MTE2, self.l1b_event[i])
        self.l0a = [resource.l0a_buf.get_buffer_by_byte(ea, spec.l0a_tile_size * i) for i in range(p.l0a_stages)]
        self.l0a_event = list(range(p.l0a_stages))
        for e in self.l0a_event:
            ctx.set_flag(HardEvent.M_MTE1, e)
        self.l0b = [resource.l0b_buf.get_buffer_by_byte(eb, spec.l0b_tile_size * i) for i in range(p.l0b_stages)]
        self.l0b_event = [i + p.l0a_stages for i in range(p.l0b_stages)]
        for e in self.l0b_event:
            ctx.set_flag(HardEvent.M_MTE1, e)
        acc = spec.element_accumulator
        self.l0c = [resource.l0c_buf.get_buffer_by_byte(acc, spec.l0c_tile_size * i) for i in range(p.l0c_stages)]
        self.l0c_event = list(range(p.l0c_stages))
        for e in self.l0c_event:
            ctx.set_flag(HardEvent.FIX_M, e)
        self.l1_list_id = self.l0a_list_id = self.l0b_list_id = self.l0c_list_id = 0
        self.queue: deque[_L1TileMmadParams] = deque()

    # -- lifetime --------------------------------------------------------------------------------
    def close(self) -> None:
        """The C++ destructor: finish pending tiles, then wait for every buffer-free event."""
        self.synchronize_block()
        ctx, p = self.ctx, self.spec.policy
        for i in range(p.l1_stages):
            ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1a_event[i])
            ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1b_event[i])
        for e in self.l0a_event:
            ctx.wait_flag(HardEvent.M_MTE1, e)
        for e in self.l0b_event:
            ctx.wait_flag(HardEvent.M_MTE1, e)
        for e in self.l0c_event:
            ctx.wait_flag(HardEvent.FIX_M, e)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        return False

    # -- the block operation ----------------------------------------------------------------------
    def __call__(self, gm_block_a, layout_a, gm_block_b, layout_b, gm_block_c, layout_c, actual_shape,
                 callback_before_fixpipe: Callable[[], None] | None = None,
                 callback_after_fixpipe: Callable[[], None] | None = None) -> None:
        """Issue block C = A @ B of ``actual_shape`` (m, n, k). PreloadAsync takes one callback (run after
        the fixpipe); WithCallback takes the two around it. A block with k == 0 issues nothing at all
        (and so never runs its callbacks, like the C++)."""
        spec, ctx = self.spec, self.ctx
        p = spec.policy
        if not spec.WITH_CALLBACK:
            # PreloadAsync's single callback is the C++ `callback`, invoked after the fixpipe; it arrives as the
            # 8th positional argument or as callback_after_fixpipe= (never drop one silently).
            if callback_before_fixpipe is not None and callback_after_fixpipe is not None:
                raise ArgumentError(f"{spec.name} takes one callback (run after the fixpipe), got two")
            if callback_before_fixpipe is not None:
                callback_before_fixpipe, callback_after_fixpipe = None, callback_before_fixpipe
        m, n, k = GemmCoord(*actual_shape)
        l1 = spec.l1_tile_shape
        k_tiles = ceil_div(k, l1.k)
        m_round = round_up(m, spec.l1_a_align.m_aligned)
        n_round = round_up(n, spec.l1_b_align.n_aligned)
        start = ctx.block_idx % k_tiles if (p.enable_shuffle_k and k_tiles) else 0
        for k_loop in range(k_tiles):
            t = start + k_loop
            if t >= k_tiles:
                t -= k_tiles
            k_actual = l1.k if t < k_tiles - 1 else k - t * l1.k
            gm_tile_a = gm_block_a[layout_a.offset(0, t * l1.k)]
            gm_tile_b = gm_block_b[layout_b.offset(t * l1.k, 0)]
            lid = self.l1_list_id
            ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1a_event[lid])
            spec.tile_copy.copy_gm_to_l1_a(self.l1a[lid], gm_tile_a, spec.l1a_layout, layout_a.get_tile_layout(m, k_actual))
            ctx.set_flag(HardEvent.MTE2_MTE1, self.l1a_event[lid])
            ctx.wait_flag(HardEvent.MTE1_MTE2, self.l1b_event[lid])
            spec.tile_copy.copy_gm_to_l1_b(self.l1b[lid], gm_tile_b, spec.l1b_layout, layout_b.get_tile_layout(k_actual, n))
            ctx.set_flag(HardEvent.MTE2_MTE1, self.l1b_event[lid])
            if len(self.queue) == p.preload_stages:
                self._l1_tile_mmad(self.queue.popleft())
            last = k_loop == k_tiles - 1
            params = _L1TileMmadParams(lid, m_round, n_round, k_actual, k_loop == 0, last)
            if last:
                params.gm_block_c = gm_block_c
                params.layout_c_in_gm = layout_c.get_tile_layout(m, n)
                params.callback_before_fixpipe = callback_before_fixpipe
                params.callback_after_fixpipe = callback_after_fixpipe
            self.queue.append(params)
            self.l1_list_id = (lid + 1) % p.l1_stages

    def synchronize_block(self) -> None:
        """CATLASS ``SynchronizeBlock``: compute (and store) every queued tile, oldest first."""
        while self.queue:
            self._l1_tile_mmad(self.queue.popleft())

    def _l1_tile_mmad(self, prm: _L1TileMmadParams) -> None:
        spec, ctx = self.spec, self.ctx
        p, l0 = spec.policy, spec.l0_tile_shape
        m_loops = ceil_div(prm.m_round, l0.m)
        n_loops = ceil_div(prm.n_round, l0.n)
        k_loops = ceil_div(prm.k_actual, l0.k)
        l1a, l1b = self.l1a[prm.l1_list_id], self.l1b[prm.l1_list_id]
        l0c = self.l0c[self.l0c_list_id]
        layout_c_in_l0 = zN.make_layout_in_l0c(prm.m_round, prm.n_round)
        unit_flag = p.enable_unit_flag
        if not unit_flag and prm.is_k_loop_first:
            ctx.wait_flag(HardEvent.FIX_M, self.l0c_event[self.l0c_list_id])
        for mi in range(m_loops):
            m_part = l0.m if mi < m_loops - 1 else prm.m_round - mi * l0.m
            for ki in range(k_loops):
                k_part = l0.k if ki < k_loops - 1 else prm.k_actual - ki * l0.k
                l0a = self.l0a[self.l0a_list_id]
                ctx.wait_flag(HardEvent.M_MTE1, self.l0a_event[self.l0a_list_id])
                if mi == 0 and ki == 0:
                    ctx.wait_flag(HardEvent.MTE2_MTE1, self.l1a_event[prm.l1_list_id])
                spec.tile_copy.copy_l1_to_l0a(l0a, l1a[spec.l1a_layout.offset(mi * l0.m, ki * l0.k)],
                                              spec.layout_a_in_l0.make_layout(spec.element_a, m_part, k_part),
                                              spec.l1a_layout)
                if mi == m_loops - 1 and ki == k_loops - 1:
                    ctx.set_flag(HardEvent.MTE1_MTE2, self.l1a_event[prm.l1_list_id])
                for ni in range(n_loops):
                    n_part = l0.n if ni < n_loops - 1 else prm.n_round - ni * l0.n
                    l0b = self.l0b[self.l0b_list_id]
                    ctx.wait_flag(HardEvent.M_MTE1, self.l0b_event[self.l0b_list_id])
                    if ki == 0 and ni == 0:
                        ctx.wait_flag(HardEvent.MTE2_MTE1, self.l1b_event[prm.l1_list_id])
                    spec.tile_copy.copy_l1_to_l0b(l0b, l1b[spec.l1b_layout.offset(ki * l0.k, ni * l0.n)],
                                                  spec.layout_b_in_l0.make_layout(spec.element_b, k_part, n_part),
                                                  spec.l1b_layout)
                    if ki == k_loops - 1 and ni == n_loops - 1:
                        ctx.set_flag(HardEvent.MTE1_MTE2, self.l1b_event[prm.l1_list_id])
                    ctx.set_flag(HardEvent.MTE1_M, 0)
                    l0c_tile = l0c[layout_c_in_l0.offset(mi * l0.m, ni * l0.n)]
                    ctx.wait_flag(HardEvent.MTE1_M, 0)
                    init_c = prm.is_k_loop_first and ki == 0
                    flag = 0
                    if unit_flag:
                        last = prm.is_k_loop_last and mi == m_loops - 1 and ki == k_loops - 1 and ni == n_loops - 1
                        flag = 0b11 if last else 0b10
                    spec.tile_mmad(l0c_tile, l0a, l0b, m_part, n_part, k_part, init_c, flag)
                    ctx.set_flag(HardEvent.M_MTE1, self.l0b_event[self.l0b_list_id])
                    self.l0b_list_id = (self.l0b_list_id + 1) % p.l0b_stages
                ctx.set_flag(HardEvent.M_MTE1, self.l0a_event[self.l0a_list_id])
                self.l0a_list_id = (self.l0a_list_id + 1) % p.l0a_stages
        if prm.is_k_loop_last:
            if prm.callback_before_fixpipe is not None:
                prm.callback_before_fixpipe()
            if not unit_flag:
                ev = self.l0c_event[self.l0c_list_id]
                ctx.set_flag(HardEvent.M_FIX, ev)
                ctx.wait_flag(HardEvent.M_FIX, ev)
                spec.tile_copy.copy_l0c_to_gm(prm.gm_block_c, l0c, prm.layout_c_in_gm, layout_c_in_l0)
                ctx.set_flag(HardEvent.FIX_M, ev)
            else:
                spec.tile_copy.copy_l0c_to_gm(prm.gm_block_c, l0c, prm.layout_c_in_gm, layout_c_in_l0, 0b11)
            self.l0c_list_id = (self.l0c_list_id + 1) % p.l0c_stages
            if prm.callback_after_fixpipe is not None:
                prm.callback_after_fixpipe()
