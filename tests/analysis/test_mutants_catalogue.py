"""The mutant catalogue and checker on a hand-built kernel whose every synchronisation matters, and the automatic
equivalence arguments on one whose sites include a constructor burst, a final drain and an idle-pipe set."""

import numpy as np
import pytest

from catlass_py.analysis.mutants import automatic_equivalence, catalogue, check, record_sites
from catlass_py.arch import GlobalBuffer, HardEvent, LaunchParams, Observer, Pipe, SetFlagEvent, WaitFlagEvent, launch
from catlass_py.arch.mutation import Edit, Mutation

N = 64


class Handoff:
    """AIC: Mmad into L0C, Fixpipe to GM (M_FIX pair), cross-core set on FIX; AIV: wait, load its half to UB,
    Cast (MTE2_V pair), store (V_MTE3 pair). Ends with a final PIPE_ALL barrier on both sides."""

    def aic(self, ctx, gm):
        l0c = ctx.resource.l0c_buf.get_buffer_by_byte("int32", 0, N)
        ctx.emit(Pipe.M, "Mmad", local_writes=(l0c.access(),))
        ctx.set_flag(HardEvent.M_FIX, 0)
        ctx.wait_flag(HardEvent.M_FIX, 0)
        ctx.emit(Pipe.FIX, "Fixpipe", local_reads=(l0c.access(),), gm_writes=(gm["c"].access(0, N),))
        ctx.cross_core_set_flag(0, 2, Pipe.FIX)
        ctx.pipe_barrier(Pipe.ALL)

    def aiv(self, ctx, gm):
        ub = ctx.resource.ub_buf
        x, y = (ub.get_buffer_by_byte("int32", i * 256, N // 4) for i in range(2))
        for i in range(2):  # the constructor's burst of "buffer free" sets, and their drain at the end
            ctx.set_flag(HardEvent.V_MTE2, i)
        ctx.cross_core_wait_flag(0)
        for t in range(2):  # two tiles through the same UB buffers: the second reuses what the first read
            q = ctx.sub_block_idx * N // 2 + t * N // 4
            ctx.wait_flag(HardEvent.V_MTE2, 0)
            ctx.emit(Pipe.MTE2, "CopyGm2Ub", gm_reads=(gm["c"].access(q, N // 4),), local_writes=(x.access(),))
            ctx.set_flag(HardEvent.MTE2_V, 0)
            ctx.wait_flag(HardEvent.MTE2_V, 0)
            ctx.emit(Pipe.V, "Cast", local_reads=(x.access(),), local_writes=(y.access(),))
            ctx.set_flag(HardEvent.V_MTE2, 0)
            ctx.set_flag(HardEvent.V_MTE3, 0)
            ctx.wait_flag(HardEvent.V_MTE3, 0)
            ctx.emit(Pipe.MTE3, "CopyUb2Gm", local_reads=(y.access(),), gm_writes=(gm["d"].access(q, N // 4),))
            ctx.set_flag(HardEvent.MTE3_V, 0)
            ctx.wait_flag(HardEvent.MTE3_V, 0)
        for i in range(2):
            ctx.wait_flag(HardEvent.V_MTE2, i)
        ctx.pipe_barrier(Pipe.ALL)


def _run(options):
    gm = {k: GlobalBuffer.empty(N * 4, k, fill=0).tensor("int32") for k in "cd"}
    return launch(Handoff(), gm, 1, options=options)


def test_every_mutant_is_reported_or_argued_equivalent():
    sites = record_sites([_run])
    assert {r.site.kind for r in sites} == {"SetFlag", "WaitFlag", "PipeBarrier", "CrossCoreSetFlag",
                                            "CrossCoreWaitFlag"}
    mutants = catalogue(sites)
    results = check([_run], mutants)
    recs = {r.site: r for r in sites}
    undetected = [r for r in results if not r.detected]
    reasons = {str(r.mutation): automatic_equivalence(r.mutation, recs) for r in undetected}
    assert all(reasons.values()), reasons
    by = {}
    for r in results:
        by.setdefault(r.detected_by, []).append(str(r.mutation))
    assert len(by["RaceError"]) >= 6 and by["DeadlockError"] and by["UnpairedFlagError"]
    # the burst swap, the drain swap, the final barriers and the delayed drain waits are the equivalent ones
    assert sorted(reasons.values()) == sorted(
        ["the site issues both ids at the same points of the program: the swap only permutes them"] * 2
        + ["no instruction it orders ever follows it: there is nothing after it to order"] * 3)


def test_the_move_to_pipe_s_of_a_busy_pipe_is_reported_with_its_fix():
    sites = {r.site: r for r in record_sites([_run])}
    (xset,) = [s for s in sites if s.kind == "CrossCoreSetFlag"]
    assert not sites[xset].pipe_idle
    (res,) = check([_run], [m for m in catalogue(sites.values()) if m.edits[0].action == "move_pipe"])
    assert res.detected_by == "RaceError" and np.isscalar(res.runner)


# -- a constructor's set that only the destructor's drain consumes -------------------------------------------------
class Accumulator:
    """AIC: Mmad into L0C then Fixpipe it out, twice. ``ctor drain``: the Mmads and Fixpipes are ordered by the unit
    flag, and the accumulator event FIX_M is set by the "constructor" and waited by the "destructor" only (as in a
    unit-flag block); ``set after work``: the first Fixpipe sets FIX_M, the second Mmad waits it; ``reuse``: the
    constructor sets FIX_M, each Mmad waits it, each Fixpipe sets it, the destructor drains it."""

    def __init__(self, mode):
        self.mode = mode

    def aic(self, ctx, gm):
        l0c = ctx.resource.l0c_buf.get_buffer_by_byte("int32", 0, N)
        unit = 0b11 if self.mode == "ctor drain" else 0
        if self.mode != "set after work":
            ctx.set_flag(HardEvent.FIX_M, 0)
        for b in range(2):
            if self.mode == "reuse" or (self.mode == "set after work" and b == 1):
                ctx.wait_flag(HardEvent.FIX_M, 0)
            ctx.emit(Pipe.M, "Mmad", local_writes=(l0c.access(),), unit_flag=unit)
            if not unit:
                ctx.set_flag(HardEvent.M_FIX, 0)
                ctx.wait_flag(HardEvent.M_FIX, 0)
            ctx.emit(Pipe.FIX, "Fixpipe", local_reads=(l0c.access(),), gm_writes=(gm["c"].access(b * N, N),),
                     unit_flag=unit)
            if self.mode == "reuse" or (self.mode == "set after work" and b == 0):
                ctx.set_flag(HardEvent.FIX_M, 0)
        if self.mode != "set after work":
            ctx.wait_flag(HardEvent.FIX_M, 0)


def _accumulator(mode):
    def run(options):
        gm = {"c": GlobalBuffer.empty(N * 4 * 4, "c", fill=0).tensor("int32")}
        return launch(Accumulator(mode), gm, 1, options=options)
    return run


def _fix_m_pairs(mode):
    run = _accumulator(mode)
    sites = record_sites([run])
    recs = {r.site: r for r in sites}
    pairs = [m for m in catalogue(sites) if len(m.edits) == 2 and "FIX_M" in recs[m.edits[0].site].events]
    return run, recs, pairs


def test_a_set_and_wait_that_pair_only_with_each_other_with_nothing_after_are_equivalent():
    run, recs, pairs = _fix_m_pairs("ctor drain")
    (pair,) = pairs
    assert automatic_equivalence(pair, recs).startswith("the set and the wait pair only with each other")
    assert not check([run], [pair])[0].detected


def test_the_pair_argument_needs_nothing_after_the_wait():
    # near miss: the set (after the first Fixpipe) and the wait (before the second Mmad) pair only with each
    # other, but the Mmad after the wait overwrites what the Fixpipe reads
    run, recs, pairs = _fix_m_pairs("set after work")
    (pair,) = pairs
    assert recs[pair.edits[1].site].followed and automatic_equivalence(pair, recs) is None
    assert check([run], [pair])[0].detected_by == "RaceError"


def test_the_pair_argument_needs_the_pair_to_pair_only_with_each_other():
    # near miss: the constructor's set feeds the first block's wait, whose later calls consume the loop's sets
    run, recs, pairs = _fix_m_pairs("reuse")
    assert len(pairs) == 3  # constructor + Mmad wait, Fixpipe set + Mmad wait, Fixpipe set + drain
    for pair in pairs:
        assert automatic_equivalence(pair, recs) is None
    assert all(r.detected for r in check([run], pairs))


# -- what a wait orders: later instructions of its pipe, and of pipes later synchronisation orders after it --------
class Chain:
    """AIV: load GM -> UB (MTE2), WaitFlag<MTE2_V> (the watched wait), then ``via`` before a store UB -> GM on MTE3:
    a SetFlag/WaitFlag<V_MTE3> pair (the store reads the loaded bytes), a PipeBarrier<PIPE_ALL> (idem), or nothing
    (the store reads other bytes). ``cross``: a cross-core set on PIPE_V right after the wait."""

    def __init__(self, via, cross=False):
        self.via, self.cross = via, cross

    def aiv(self, ctx, gm):
        x, y = (ctx.resource.ub_buf.get_buffer_by_byte("int32", i * 256, N) for i in range(2))
        ctx.emit(Pipe.MTE2, "CopyGm2Ub", gm_reads=(gm["c"].access(0, N),), local_writes=(x.access(),))
        ctx.set_flag(HardEvent.MTE2_V, 0)
        ctx.wait_flag(HardEvent.MTE2_V, 0)
        if self.cross:
            ctx.cross_core_set_flag(0, 2, Pipe.V)
        if self.via == "flags":
            ctx.set_flag(HardEvent.V_MTE3, 0)
            ctx.wait_flag(HardEvent.V_MTE3, 0)
        elif self.via == "barrier":
            ctx.pipe_barrier(Pipe.ALL)
        src = y if self.via is None else x
        ctx.emit(Pipe.MTE3, "CopyUb2Gm", local_reads=(src.access(),),
                 gm_writes=(gm["d"].access(ctx.block_idx * N, N),))

    def aic(self, ctx, gm):
        if self.cross:  # mode 2 from the two AIVs: one count when both have set
            ctx.cross_core_wait_flag(0)


def _chain_sites(via, cross=False):
    def run(options):
        gm = {k: GlobalBuffer.empty(N * 4 * 4, k, fill=0).tensor("int32") for k in "cd"}
        return launch(Chain(via, cross), gm, 1, options=options)
    recs = {r.site: r for r in record_sites([run])}
    (wait,) = [r for r in recs.values() if r.site.kind == "WaitFlag" and "MTE2_V" in r.events]
    return run, recs, wait


@pytest.mark.parametrize("via, cross, followed", [
    ("flags", False, True), ("barrier", False, True), (None, True, True), (None, False, False)])
def test_a_wait_is_followed_through_later_sets_barriers_and_cross_core_sets(via, cross, followed):
    run, recs, wait = _chain_sites(via, cross)
    assert wait.followed is followed
    delay = Mutation((Edit(wait.site, "delay"),))
    if followed:
        assert automatic_equivalence(delay, recs) is None
    else:
        assert automatic_equivalence(delay, recs).startswith("no instruction it orders ever follows it")
    if via == "flags":  # the store reads what the load wrote and only the wait's order, passed on, protects it
        assert check([run], [delay])[0].detected_by == "RaceError"


# -- swapping the two ids of a two-stage ring at one side -------------------------------------------------------------
class Ring:
    """AIV: ``uses`` tiles through two UB stages (stage t % 2): wait the stage free (V_MTE2, id = stage), load it
    (MTE2), hand it to V (MTE2_V), read it (V), free it (V_MTE2). The constructor sets both free events, the
    destructor drains both."""

    def __init__(self, uses):
        self.uses = uses

    def aiv(self, ctx, gm):
        bufs = [ctx.resource.ub_buf.get_buffer_by_byte("int32", s * 256, N) for s in range(2)]
        for s in range(2):
            ctx.set_flag(HardEvent.V_MTE2, s)
        for t in range(self.uses):
            s = t % 2
            ctx.wait_flag(HardEvent.V_MTE2, s)
            ctx.emit(Pipe.MTE2, "CopyGm2Ub", gm_reads=(gm["c"].access(t * N, N),), local_writes=(bufs[s].access(),))
            ctx.set_flag(HardEvent.MTE2_V, s)
            ctx.wait_flag(HardEvent.MTE2_V, s)
            ctx.emit(Pipe.V, "ReduceSum", local_reads=(bufs[s].access(),))
            ctx.set_flag(HardEvent.V_MTE2, s)
        for s in range(2):
            ctx.wait_flag(HardEvent.V_MTE2, s)


class _Waits(Observer):
    interests = frozenset({"sync"})

    def __init__(self):
        self.sets, self.waits = {}, []

    def on_event(self, e):
        if isinstance(e, SetFlagEvent) and e.event is HardEvent.V_MTE2 and e.core.short == "AIV0.0":
            self.sets[e.seq] = len(self.sets)
        elif isinstance(e, WaitFlagEvent) and e.event is HardEvent.V_MTE2 and e.core.short == "AIV0.0":
            self.waits.append(self.sets[e.source_seq])


def _ring(uses):
    def run(options, observers=()):
        gm = {"c": GlobalBuffer.empty(N * 4 * uses, "c", fill=0).tensor("int32")}
        return launch(Ring(uses), gm, 1, options=options, observers=observers)
    return run


@pytest.mark.parametrize("side", ["WaitFlag", "SetFlag"])
def test_a_one_sided_swap_of_a_two_stage_ring_keeps_every_order_with_even_uses_and_deadlocks_with_odd(side):
    run = _ring(6)
    (site,) = [r.site for r in record_sites([run]) if r.site.kind == side and "V_MTE2" in r.events
               and r.calls == 12]  # the loop's site (not the constructor's burst or the drain)
    swap = Mutation((Edit(site, "swap_ids", ids=(0, 1)),))
    # The sets of V_MTE2 in issue order: 0 and 1 by the constructor (ids 0 and 1), then 2 + t after use t (id t % 2).
    # Use t of stage t % 2 must follow the V read of use t - 2 (its stage's last use): consume set t, or a later
    # one (a set on V publishes all earlier V work). Intact, use t consumes set t. Swapped at either side, use
    # t >= 2 consumes set t + 1 for even t (the release of the other stage's use t - 1, which follows use t - 2 on
    # the V queue) and set t - 1 for odd t (use t - 3's release), but the MTE2 queue is in order and its use
    # t - 1 (even) consumed set t: every use still follows its stage's last use.
    uses = [0, 1, 2, 3, 4, 5]
    swapped = [1, 0] if side == "WaitFlag" else [0, 1]
    swapped += [t + 1 if t % 2 == 0 else t - 1 for t in uses[2:]]
    drain = [6, 7] if side == "WaitFlag" else [7, 6]
    for mutation, want in ((None, uses + [6, 7]), (swap, swapped + drain)):
        waits = _Waits()
        run(LaunchParams(detect_races=True, mutation=mutation), observers=(waits,))
        assert waits.waits == want  # the uses' waits, then the drain's two
    # With an odd number of uses one id ends with a set too many, the other with a wait too many: the drain's wait
    # on it never finds a set.
    (res,) = check([_ring(5)], [swap])
    assert res.detected_by == "DeadlockError"
