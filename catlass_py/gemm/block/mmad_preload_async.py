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
from catlass_py.gemm.block.block_mmad_instance import BlockMmadInstance, carve_stages
from catlass_py.gemm.block.block_mmad_spec import BlockMmadSpec
from catlass_py.gemm.block.capabilities import PLAIN_CALL, BlockMmadCapabilities
from catlass_py.gemm.coord import GemmCoord, ceil_div, round_up
from catlass_py.gemm.dispatch_policy import MmadAtlasA2PreloadAsync
from catlass_py.layout import zN


class BlockMmadPreloadAsync(BlockMmadSpec):
    """Assembled CATLASS ``BlockMmad<MmadAtlasA2PreloadAsync<PRELOAD, L1, L0A, L0B, L0C, UNIT_FLAG, SHUFFLE_K>,
    ...>``: one optional ``callback`` runs after each block's fixpipe.

    Checks: ``(L1A + L1B) * L1_STAGES <= L1``, ``L0A_TILE * L0A_STAGES <= L0A``,
    ``L0B_TILE * L0B_STAGES <= L0B``, ``L1.M * L1.N * sizeof(acc) * L0C_STAGES <= L0C``, L1/L0 tiles agree on
    M and N, ``L0.K <= L1.K``, 32-byte alignment, and the event ids fit the hardware's 8 per event pair.
    """

    name = "BlockMmadPreloadAsync"
    CAPABILITIES = BlockMmadCapabilities(PLAIN_CALL, asynchronous=True, callbacks=1)

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
    CAPABILITIES = BlockMmadCapabilities(PLAIN_CALL, asynchronous=True, callbacks=2)


@dataclass
class _L1TileMmadParams:
    l1_list_id: int
    m_round: int
    n_round: int
    k_actual: int
    is_k_loop_first: bool
    is_k_loop_last: bool
    m_actual: int | None = None  # the block's real rows (its fixpipe stores only those)
    gm_block_c: Any = None
    layout_c_in_gm: Any = None
    callback_before_fixpipe: Callable[[], None] | None = None
    callback_after_fixpipe: Callable[[], None] | None = None


class _PreloadAsyncBlock(BlockMmadInstance):
    """One cube core's instance of :class:`BlockMmadPreloadAsync` (or ``WithCallback``).

    Buffers: from ``l1_buf_addr_start`` every L1 A stage, then every L1 B stage; ``l0a_stages`` L0A and
    ``l0b_stages`` L0B tiles and ``l0c_stages`` accumulators, each a tile size apart. Event ids: L1 A stage i ->
    i, L1 B -> ``L1_STAGES + i`` (MTE1_MTE2); L0A i -> i, L0B i -> ``L0A_STAGES + i`` (M_MTE1); L0C i -> i
    (FIX_M).
    """

    def __init__(self, spec: BlockMmadPreloadAsync, resource, l1_buf_addr_start: int = 0):
        self.spec = spec
        self.ctx = ctx = resource.ctx
        p = spec.policy
        ea, eb = spec.element_a, spec.element_b
        l1b_off = l1_buf_addr_start + spec.l1a_tile_size * p.l1_stages
        self.l1a = carve_stages(resource.l1_buf, ea, l1_buf_addr_start, spec.l1a_tile_size, p.l1_stages)
        self.l1b = carve_stages(resource.l1_buf, eb, l1b_off, spec.l1b_tile_size, p.l1_stages)
        self.l1a_event = list(range(p.l1_stages))
        self.l1b_event = [i + p.l1_stages for i in range(p.l1_stages)]
        for i in range(p.l1_stages):
            ctx.set_flag(HardEvent.MTE1_MTE2, self.l1a_event[i])
            ctx.set_flag(HardEvent.MTE1_MTE2, self.l1b_event[i])
        self.l0a = carve_stages(resource.l0a_buf, ea, 0, spec.l0a_tile_size, p.l0a_stages)
        self.l0a_event = list(range(p.l0a_stages))
        for e in self.l0a_event:
            ctx.set_flag(HardEvent.M_MTE1, e)
        self.l0b = carve_stages(resource.l0b_buf, eb, 0, spec.l0b_tile_size, p.l0b_stages)
        self.l0b_event = [i + p.l0a_stages for i in range(p.l0b_stages)]
        for e in self.l0b_event:
            ctx.set_flag(HardEvent.M_MTE1, e)
        self.l0c = carve_stages(resource.l0c_buf, spec.element_accumulator, 0, spec.l0c_tile_size, p.l0c_stages)
        self.l0c_event = list(range(p.l0c_stages))
        for e in self.l0c_event:
            ctx.set_flag(HardEvent.FIX_M, e)
        self.l0a_stages, self.l0b_stages = p.l0a_stages, p.l0b_stages
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

    # -- the block operation ----------------------------------------------------------------------
    def __call__(self, gm_block_a, layout_a, gm_block_b, layout_b, gm_block_c, layout_c, actual_shape,
                 callback_before_fixpipe: Callable[[], None] | None = None,
                 callback_after_fixpipe: Callable[[], None] | None = None) -> None:
        """Issue block C = A @ B of ``actual_shape`` (m, n, k). PreloadAsync takes one callback (run after
        the fixpipe); WithCallback takes the two around it. A block with k == 0 issues nothing at all
        (and so never runs its callbacks, like the C++)."""
        spec, ctx = self.spec, self.ctx
        p = spec.policy
        if spec.CAPABILITIES.callbacks == 1:
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
            lid = self.l1_list_id
            k_actual = self.load_k_tile(lid, gm_block_a, layout_a, gm_block_b, layout_b, m, n, k, t)
            if len(self.queue) == p.preload_stages:
                self._l1_tile_mmad(self.queue.popleft())
            last = k_loop == k_tiles - 1
            params = _L1TileMmadParams(lid, m_round, n_round, k_actual, k_loop == 0, last, m)
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
        p = spec.policy
        l0c = self.l0c[self.l0c_list_id]
        layout_c_in_l0 = zN.make_layout_in_l0c(prm.m_round, prm.n_round)
        if not p.enable_unit_flag and prm.is_k_loop_first:
            ctx.wait_flag(HardEvent.FIX_M, self.l0c_event[self.l0c_list_id])
        self.mmad_l1_tile(prm.l1_list_id, prm.k_actual, prm.m_round, prm.n_round, l0c, layout_c_in_l0,
                          prm.is_k_loop_first, prm.is_k_loop_last, prm.m_actual)
        if prm.is_k_loop_last:
            if prm.callback_before_fixpipe is not None:
                prm.callback_before_fixpipe()
            self.store_l0c(prm.gm_block_c, l0c, prm.layout_c_in_gm, layout_c_in_l0, self.l0c_event[self.l0c_list_id])
            self.l0c_list_id = (self.l0c_list_id + 1) % p.l0c_stages
            if prm.callback_after_fixpipe is not None:
                prm.callback_after_fixpipe()
