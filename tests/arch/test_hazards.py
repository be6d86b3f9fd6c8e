"""The pipe model and its hazard detector: hand-built kernels with one synchronisation missing (each reported with
the synchronisation that would fix it), and the detector against an independent reference on random event
streams (happens-before as reachability over explicit edges, not vector clocks)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catlass_py.analysis import CostModel
from catlass_py.arch import (
    ATLAS_A2,
    CoreId,
    CoreType,
    CrossCoreSetEvent,
    CrossCoreWaitEvent,
    GlobalBuffer,
    HardEvent,
    InstructionEvent,
    LaunchInfo,
    MemAccess,
    Pipe,
    PipeBarrierEvent,
    SetFlagEvent,
    WaitFlagEvent,
    launch,
)
from catlass_py.arch.hazards import RaceDetector
from catlass_py.errors import ConfigError, RaceError

N = 64


# -- hand-built kernels: the synchronisation bugs of a vector core -----------------------------------------------
class Epilogue:
    """AIV: load a tile GM -> UB (MTE2), two dependent vector ops (V), store UB -> GM (MTE3); ``drop`` removes
    one synchronisation."""

    def __init__(self, drop=None):
        self.drop = drop

    def aiv(self, ctx, gm):
        ub = ctx.resource.ub_buf
        x, y, z = (ub.get_buffer_by_byte("float32", i * N * 4, N) for i in range(3))
        off = ctx.block_idx * N
        ctx.emit(Pipe.MTE2, "CopyGm2Ub", gm_reads=(gm["in"].access(off, N),), local_writes=(x.access(),))
        if self.drop != "MTE2_V":
            ctx.set_flag(HardEvent.MTE2_V, 0)
            ctx.wait_flag(HardEvent.MTE2_V, 0)
        ctx.emit(Pipe.V, "Cast", local_reads=(x.access(),), local_writes=(y.access(),))
        if self.drop != "PIPE_V":
            ctx.pipe_barrier(Pipe.V)
        ctx.emit(Pipe.V, "Muls", local_reads=(y.access(),), local_writes=(z.access(),))
        if self.drop != "V_MTE3":
            ctx.set_flag(HardEvent.V_MTE3, 0)
            ctx.wait_flag(HardEvent.V_MTE3, 0)
        ctx.emit(Pipe.MTE3, "CopyUb2Gm", local_reads=(z.access(),), gm_writes=(gm["out"].access(off, N),))


def _gm(block_dim=1):
    return {"in": GlobalBuffer.empty(N * 8 * block_dim, "in", fill=0).tensor("float32"),
            "out": GlobalBuffer.empty(N * 8 * block_dim, "out", fill=0).tensor("float32")}


def test_intact_epilogue_has_no_hazard():
    result = launch(Epilogue(), _gm(), 1, detect_races=True)
    assert result.race_detector.accesses == 2 * 8  # two AIVs, eight accesses each


@pytest.mark.parametrize("drop, first, second, missing", [
    ("MTE2_V", ("write", "CopyGm2Ub", Pipe.MTE2), ("read", "Cast", Pipe.V),
     "no SetFlag<MTE2_V>/WaitFlag<MTE2_V> between CopyGm2Ub (PIPE_MTE2) and Cast (PIPE_V) on AIV 0"),
    ("PIPE_V", ("write", "Cast", Pipe.V), ("read", "Muls", Pipe.V),
     "no PipeBarrier<PIPE_V> between Cast (PIPE_V) and Muls (PIPE_V) on AIV 0"),
    ("V_MTE3", ("write", "Muls", Pipe.V), ("read", "CopyUb2Gm", Pipe.MTE3),
     "no SetFlag<V_MTE3>/WaitFlag<V_MTE3> between Muls (PIPE_V) and CopyUb2Gm (PIPE_MTE3) on AIV 0"),
])
def test_a_missing_intra_core_synchronisation_is_a_hazard_naming_the_fix(drop, first, second, missing):
    with pytest.raises(RaceError) as info:
        launch(Epilogue(drop), _gm(), 1, detect_races=True)
    err = info.value
    assert (err.first.kind, err.first.op, err.first.pipe) == first
    assert (err.second.kind, err.second.op, err.second.pipe) == second
    assert err.space == "UB" and err.buffer == "UB of AIV0.0" and err.cores == (err.first.core, err.first.core)
    assert err.missing == "missing synchronisation: " + missing
    assert str(err).startswith("data race on UB of AIV0.0, bytes [")


def test_a_later_vector_write_after_an_earlier_vector_read_needs_no_barrier():
    class War:
        def aiv(self, ctx, gm):
            x, y = (ctx.resource.ub_buf.get_buffer_by_byte("float32", i * 256, N) for i in range(2))
            ctx.emit(Pipe.V, "Duplicate", local_writes=(x.access(),))
            ctx.pipe_barrier(Pipe.V)
            ctx.emit(Pipe.V, "Adds", local_reads=(x.access(),), local_writes=(y.access(),))
            ctx.emit(Pipe.V, "Duplicate", local_writes=(x.access(),))  # WAR on x: in order

    launch(War(), None, 1, detect_races=True)


class SlotHandoff:
    """AIC: Fixpipe a block into GM and tell the AIVs (cross-core flag 0 set on ``set_pipe``); AIV: wait, read."""

    def __init__(self, set_pipe=Pipe.FIX):
        self.set_pipe = set_pipe

    def aic(self, ctx, gm):
        l0c = ctx.resource.l0c_buf.get_buffer_by_byte("int32", 0, N)
        ctx.emit(Pipe.M, "Mmad", local_writes=(l0c.access(),))
        ctx.set_flag(HardEvent.M_FIX, 0)
        ctx.wait_flag(HardEvent.M_FIX, 0)
        ctx.emit(Pipe.FIX, "Fixpipe", local_reads=(l0c.access(),), gm_writes=(gm["out"].access(0, N),))
        ctx.cross_core_set_flag(0, 2, self.set_pipe)

    def aiv(self, ctx, gm):
        ctx.cross_core_wait_flag(0)
        ub = ctx.resource.ub_buf.get_buffer_by_byte("int32", 0, N // 2)
        ctx.emit(Pipe.MTE2, "CopyGm2Ub", gm_reads=(gm["out"].access(ctx.sub_block_idx * N // 2, N // 2),),
                 local_writes=(ub.access(),))


def test_a_cross_core_set_publishes_only_its_pipe():
    launch(SlotHandoff(), _gm(), 1, detect_races=True)
    with pytest.raises(RaceError) as info:
        launch(SlotHandoff(Pipe.S), _gm(), 1, detect_races=True)
    err = info.value
    assert (err.first.core.short, err.first.op, err.first.pipe) == ("AIC0", "Fixpipe", Pipe.FIX)
    assert (err.second.op, err.second.pipe) == ("CopyGm2Ub", Pipe.MTE2) and err.space == "GM"
    assert "AIC 0 set cross-core flag 0 on PIPE_S after its write" in err.missing
    assert "issue the set on PIPE_FIX (CrossCoreSetFlag<mode, PIPE_FIX>)" in err.missing
    # PIPE_ALL publishes every pipe.
    launch(SlotHandoff(Pipe.ALL), _gm(), 1, detect_races=True)


def test_an_instruction_without_a_pipe_is_a_config_error():
    class NoPipe:
        def aic(self, ctx, gm):
            ctx.emit(Pipe.ALL, "Mmad")

    with pytest.raises(ConfigError, match="declares pipe"):
        launch(NoPipe(), None, 1, detect_races=True)


# -- the unit flag ----------------------------------------------------------------------------------------------
class UnitFlag:
    def __init__(self, fix_flag=0b11):
        self.fix_flag = fix_flag

    def aic(self, ctx, gm):
        l0c = ctx.resource.l0c_buf.get_buffer_by_byte("int32", 0, 4096)
        ctx.emit(Pipe.M, "Mmad", local_writes=(l0c.access(),), unit_flag=0b10, info={"m": 64, "n": 64, "k": 512})
        ctx.emit(Pipe.M, "Mmad", local_writes=(l0c.access(),), unit_flag=0b11, info={"m": 64, "n": 64, "k": 512})
        ctx.emit(Pipe.FIX, "Fixpipe", local_reads=(l0c.access(),), gm_writes=(gm["out"].access(0, N),),
                 unit_flag=self.fix_flag, nbytes=4 * N)
        ctx.emit(Pipe.M, "Mmad", local_writes=(l0c.access(),), unit_flag=0b11, info={"m": 64, "n": 64, "k": 512})
        ctx.emit(Pipe.FIX, "Fixpipe", local_reads=(l0c.access(),), gm_writes=(gm["out"].access(0, N),),
                 unit_flag=self.fix_flag, nbytes=4 * N)


def test_the_unit_flag_orders_mmad_and_fixpipe_both_ways_and_in_time():
    cost = CostModel(record=True)
    launch(UnitFlag(), _gm(), 1, detect_races=True, observers=(cost,))
    spans = [(op, start, start + dur) for _c, _p, op, start, dur, _s, _n in cost.intervals]
    (_, _, mmad2_end), (_, fix1_start, fix1_end), (_, mmad3_start, mmad3_end), (_, fix2_start, _) = spans[1:]
    assert fix1_start >= mmad2_end and mmad3_start >= fix1_end and fix2_start >= mmad3_end
    with pytest.raises(RaceError, match="no SetFlag<M_FIX>/WaitFlag<M_FIX> between Mmad"):
        launch(UnitFlag(fix_flag=0), _gm(), 1, detect_races=True)


# -- the detector against an independent reference ---------------------------------------------------------------
CORES = (CoreId(CoreType.AIC, 0), CoreId(CoreType.AIV, 0, 0))
PIPES = (Pipe.S, Pipe.V, Pipe.M, Pipe.MTE1, Pipe.MTE2, Pipe.MTE3, Pipe.FIX)
EVENTS = (HardEvent.MTE2_V, HardEvent.V_MTE3, HardEvent.MTE2_MTE1, HardEvent.M_FIX, HardEvent.V_S, HardEvent.S_V)
GM_ID, LOCAL_ID = 1000, (1001, 1002)

_pipe = st.one_of(st.just(Pipe.V), st.sampled_from(PIPES))  # PIPE_V (ordered only by barriers) drawn often
_acc = st.tuples(st.integers(0, 1), _pipe, st.booleans(), st.booleans(), st.integers(0, 40),
                 st.integers(1, 12), st.integers(0, 3), st.integers(1, 3))
_step = st.one_of(
    st.tuples(st.just("acc"), _acc),
    st.tuples(st.just("acc"), _acc),
    st.tuples(st.just("set"), st.integers(0, 1), st.sampled_from(EVENTS), st.integers(0, 1)),
    st.tuples(st.just("wait"), st.integers(0, 1), st.integers(0, 7)),
    st.tuples(st.just("barrier"), st.integers(0, 1), st.sampled_from(PIPES[1:] + (Pipe.ALL,))),
    st.tuples(st.just("xset"), st.integers(0, 1), st.sampled_from(PIPES + (Pipe.ALL,))),
    st.tuples(st.just("xwait"), st.integers(0, 1), st.integers(0, 7)),
    st.tuples(st.just("unit"), st.integers(0, 1), st.sampled_from(["mmad2", "mmad3", "fix"]), st.integers(0, 32)),
)


def _events(steps):
    """Turn random steps into a legal event stream: (event, node) pairs, where node describes the step for the
    reference (core, position pipe, kind, accesses)."""
    out = []
    pending_sets: dict = {}
    xsets: list = []
    for seq, step in enumerate(steps, start=1):
        kind, c = step[0], step[1][0] if step[0] == "acc" else step[1]
        core = CORES[c]
        if kind == "acc":
            _, pipe, write, gm, start, length, extra, count = step[1]
            acc = MemAccess("gm" if gm else "local", GM_ID if gm else LOCAL_ID[c], start, length,
                            length + extra if count > 1 else 0, count, "GM" if gm else "UB")
            e = InstructionEvent(seq, core, pipe, "Op", gm_reads=(acc,) if gm and not write else (),
                                 gm_writes=(acc,) if gm and write else (),
                                 local_reads=(acc,) if not gm and not write else (),
                                 local_writes=(acc,) if not gm and write else ())
            out.append((e, dict(core=c, pipe=pipe, kind="instr", reads=[] if write else [acc], writes=[acc] if write else [])))
        elif kind == "set":
            _, _, ev, eid = step
            pending_sets.setdefault((c, ev, eid), []).append(seq)
            out.append((SetFlagEvent(seq, core, ev, eid), dict(core=c, pipe=ev.src, kind="set")))
        elif kind == "wait":
            keys = [k for k, v in pending_sets.items() if k[0] == c and v]
            if not keys:
                continue
            key = keys[step[2] % len(keys)]
            src = pending_sets[key].pop(0)
            out.append((WaitFlagEvent(seq, core, key[1], key[2], src), dict(core=c, pipe=key[1].dst, kind="wait", src=src)))
        elif kind == "barrier":
            out.append((PipeBarrierEvent(seq, core, step[2]), dict(core=c, pipe=step[2], kind="barrier")))
        elif kind == "xset":
            xsets.append((c, seq))
            out.append((CrossCoreSetEvent(seq, core, 0, 2, step[2]), dict(core=c, pipe=step[2], kind="xset")))
        elif kind == "xwait":
            others = [s for owner, s in xsets if owner != c]
            if not others:
                continue
            src = others[step[2] % len(others)]
            out.append((CrossCoreWaitEvent(seq, core, 0, (src,)), dict(core=c, pipe=Pipe.S, kind="xwait", src=src)))
        else:
            _, _, what, start = step
            acc = MemAccess("l0c", LOCAL_ID[c] + 10, start, 16, 0, 1, "L0C")
            if what == "fix":
                e = InstructionEvent(seq, core, Pipe.FIX, "Fixpipe", local_reads=(acc,), unit_flag=0b11)
                out.append((e, dict(core=c, pipe=Pipe.FIX, kind="instr", reads=[acc], writes=[], unit="fix")))
            else:
                uf = 0b11 if what == "mmad3" else 0b10
                e = InstructionEvent(seq, core, Pipe.M, "Mmad", local_writes=(acc,), unit_flag=uf)
                out.append((e, dict(core=c, pipe=Pipe.M, kind="instr", reads=[], writes=[acc],
                                    unit="mmad3" if uf == 0b11 else "mmad2")))
    return out


def _reference(stream):
    """Index (in ``stream``) of the first access that conflicts with an unordered earlier one, or None.

    Happens-before is reachability over the edges of the rules table of catlass_py.arch.pipe_order, written
    out pair by pair."""
    n = len(stream)
    nodes = [node for _, node in stream]
    seq_index = {e.seq: i for i, (e, _) in enumerate(stream)}
    preds = [set() for _ in range(n)]
    for j, b in enumerate(nodes):
        for i in range(j):
            a = nodes[i]
            if a["core"] != b["core"]:
                continue
            if a["pipe"] is Pipe.S or a["kind"] == "xwait":
                preds[j].add(i)  # scalar work is dispatched before everything after it
            if (a["pipe"] is Pipe.ALL and a["kind"] == "barrier") or b["pipe"] is Pipe.ALL:
                preds[j].add(i)  # PipeBarrier<PIPE_ALL>: both ways; a PIPE_ALL cross-core set: what came before
            if a["pipe"] is b["pipe"] and a["pipe"] is not Pipe.ALL:
                if a["pipe"] is not Pipe.V or a["kind"] in ("wait", "barrier") or b["kind"] in ("set", "xset", "barrier"):
                    if not (a["kind"] in ("set", "xset") and a["pipe"] is Pipe.V):
                        preds[j].add(i)
            if a.get("unit") == "mmad3" and b.get("unit") == "fix" and any(
                    x.overlaps(y) for x in a["writes"] for y in b["reads"]):
                preds[j].add(i)
            if a.get("unit") == "fix" and b.get("unit") in ("mmad2", "mmad3") and any(
                    x.overlaps(y) for x in a["reads"] for y in b["writes"]):
                preds[j].add(i)
        if b["kind"] in ("wait", "xwait"):
            preds[j].add(seq_index[b["src"]])
    reach = []
    for j in range(n):
        r = set()
        for p in preds[j]:
            r.add(p)
            r |= reach[p]
        reach.append(r)
    for j, b in enumerate(nodes):
        if b["kind"] != "instr":
            continue
        for i in range(j):
            a = nodes[i]
            if a["kind"] != "instr" or i in reach[j]:
                continue
            same_pipe = a["core"] == b["core"] and a["pipe"] is b["pipe"]
            for wa, accs_a in ((True, a["writes"]), (False, a["reads"])):
                for wb, accs_b in ((True, b["writes"]), (False, b["reads"])):
                    if not (wa or wb) or (same_pipe and not wa and wb):
                        continue
                    if any(x.overlaps(y) for x in accs_a for y in accs_b):
                        return j
    return None


@settings(max_examples=400, deadline=None)
@given(st.lists(_step, max_size=40), st.sampled_from([16, 1 << 14]))
def test_detector_agrees_with_reachability_on_random_streams(steps, page_bytes):
    stream = _events(steps)
    det = RaceDetector(page_bytes=page_bytes)
    det.on_launch_start(LaunchInfo(ATLAS_A2, 1, CORES, None, None))
    found = None
    for idx, (e, _node) in enumerate(stream):
        try:
            det.on_event(e)
        except RaceError as err:
            found = idx
            assert err.second.seq == e.seq
            break
    assert found == _reference(stream)


def test_the_reference_sees_the_vector_barrier_rule():
    # write on V, read on V without a barrier: a hazard; with one: none (sanity check of the reference itself).
    a = MemAccess("x", 5, 0, 8, 0, 1, "UB")
    core = CORES[1]
    w = (InstructionEvent(1, core, Pipe.V, "A", local_writes=(a,)), dict(core=1, pipe=Pipe.V, kind="instr", reads=[], writes=[a]))
    b = (PipeBarrierEvent(2, core, Pipe.V), dict(core=1, pipe=Pipe.V, kind="barrier"))
    r = (InstructionEvent(3, core, Pipe.V, "B", local_reads=(a,)), dict(core=1, pipe=Pipe.V, kind="instr", reads=[a], writes=[]))
    assert _reference([w, r]) == 1 and _reference([w, b, r]) is None
    assert np.array_equal([1], [1])
