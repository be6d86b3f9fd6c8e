"""The timeline causality check (catlass_py.analysis.causality): its rule on hand-made timelines, a missing unit
flag caught on a hand-built kernel, and the cost model's timelines of random race-free event streams."""

import dataclasses
from types import SimpleNamespace

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_hazards import CORES, UnitFlag, _events, _gm, _reference, _step

from catlass_py.analysis import AccessLog, CostModel, causality_violations
from catlass_py.analysis.causality import AccessRecord
from catlass_py.arch import ATLAS_A2, GlobalBuffer, HardEvent, InstructionEvent, LaunchInfo, MemAccess, Pipe, launch
from catlass_py.errors import ArgumentError, RaceError

AIC, AIV = CORES
UB = 7  # buffer ids of the hand-made timelines
GM = 8


def _acc(start, length, stride=0, count=1, buffer_id=UB):
    return MemAccess("buf", buffer_id, start, length, stride, count, "UB" if buffer_id == UB else "GM")


def _timeline(*steps):
    """A fake costed launch: steps are (core, pipe, start, dur, landing, reads, writes)."""
    intervals, landing, records = [], [], []
    for seq, (core, pipe, start, dur, lat, reads, writes) in enumerate(steps, start=1):
        intervals.append((core, pipe.value, f"op{seq}", start, dur, seq, 0))
        landing.append(lat)
        records.append(AccessRecord(core, pipe, f"op{seq}", seq, tuple(reads), tuple(writes)))
    return SimpleNamespace(record=True, intervals=intervals, landing=landing), SimpleNamespace(records=records)


def _violations(*steps):
    return causality_violations(*_timeline(*steps), limit=None)


W, R = _acc(0, 64), _acc(32, 64)  # overlapping bytes [32, 64)


def test_a_consumer_on_another_pipe_waits_for_the_producer_to_finish_and_land():
    assert _violations((AIV, Pipe.MTE2, 0, 10, 0, [], [W]), (AIV, Pipe.V, 10, 5, 0, [R], [])) == []
    (v,) = _violations((AIV, Pipe.MTE2, 0, 10, 0, [], [W]), (AIV, Pipe.V, 9, 5, 0, [R], []))
    assert (v.earlier.op, v.earlier.kind, v.later.op, v.later.kind) == ("op1", "write", "op2", "read")
    assert v.byte_range == (32, 64) and v.bound == 10 and v.memory == "buf"
    assert "starts at cycle 9.0, before cycle 10.0" in str(v)
    # The landing latency of a GM transfer counts: the data is there 500 cycles after the pipe is free.
    gw, gr = _acc(0, 64, buffer_id=GM), _acc(0, 8, buffer_id=GM)
    assert len(_violations((AIV, Pipe.MTE3, 0, 10, 500, [], [gw]), (AIC, Pipe.MTE2, 400, 5, 500, [gr], []))) == 1
    assert _violations((AIV, Pipe.MTE3, 0, 10, 500, [], [gw]), (AIC, Pipe.MTE2, 510, 5, 500, [gr], [])) == []


def test_every_conflicting_kind_counts_and_reads_never_conflict():
    early = (AIV, Pipe.V, 2, 5, 0)
    assert len(_violations((AIV, Pipe.MTE2, 0, 10, 0, [], [W]), (*early, [], [R]))) == 1  # WAW
    assert len(_violations((AIV, Pipe.MTE2, 0, 10, 0, [W], []), (*early, [], [R]))) == 1  # WAR
    assert _violations((AIV, Pipe.MTE2, 0, 10, 0, [W], []), (*early, [R], [])) == []  # two reads


def test_within_an_in_order_pipe_the_start_is_enough_and_pipe_v_needs_the_end_except_for_war():
    # Two Fixpipes writing the same GM bytes: the second may start while the first's data is in flight.
    gw = _acc(0, 64, buffer_id=GM)
    assert _violations((AIC, Pipe.FIX, 0, 10, 500, [], [gw]), (AIC, Pipe.FIX, 10, 10, 500, [], [gw])) == []
    assert len(_violations((AIC, Pipe.FIX, 5, 10, 0, [], [gw]), (AIC, Pipe.FIX, 4, 10, 0, [], [gw]))) == 1
    # The same pipe of two cores is two queues.
    assert len(_violations((AIC, Pipe.MTE2, 0, 10, 0, [], [gw]), (AIV, Pipe.MTE2, 5, 10, 0, [gw], []))) == 1
    # PIPE_V: a read after a write needs the write finished; a write after a read only the read started.
    assert len(_violations((AIV, Pipe.V, 0, 10, 0, [], [W]), (AIV, Pipe.V, 5, 5, 0, [R], []))) == 1
    assert _violations((AIV, Pipe.V, 0, 10, 0, [W], []), (AIV, Pipe.V, 5, 5, 0, [], [R])) == []


def test_strided_accesses_conflict_only_on_common_bytes():
    rows_a = _acc(0, 16, stride=64, count=4)  # bytes [0,16), [64,80), ...
    rows_b = _acc(32, 16, stride=64, count=4)  # bytes [32,48), [96,112), ...: interleaved, disjoint
    assert _violations((AIV, Pipe.MTE2, 0, 10, 0, [], [rows_a]), (AIV, Pipe.V, 0, 5, 0, [rows_b], [])) == []
    (v,) = _violations((AIV, Pipe.MTE2, 0, 10, 0, [], [rows_a]), (AIV, Pipe.V, 0, 5, 0, [_acc(70, 4)], []))
    assert v.byte_range == (70, 74)


def test_an_earlier_access_stays_checked_until_a_later_one_of_its_pipe_covers_it():
    # op2 rewrites only half of op1's bytes: op3 reading the other half still depends on op1 (which ends late).
    steps = [(AIV, Pipe.MTE2, 0, 100, 0, [], [_acc(0, 64)]), (AIV, Pipe.MTE2, 100, 1, 0, [], [_acc(0, 32)]),
             (AIV, Pipe.V, 101, 1, 0, [_acc(32, 32)], [])]
    assert _violations(*steps) == []
    steps[2] = (AIV, Pipe.V, 99, 1, 0, [_acc(32, 32)], [])
    assert [v.earlier.op for v in _violations(*steps)] == ["op1"]


def test_cost_and_log_must_have_observed_the_same_launch():
    cost, log = _timeline((AIV, Pipe.V, 0, 1, 0, [], [W]))
    with pytest.raises(ArgumentError, match="different launches"):
        causality_violations(cost, SimpleNamespace(records=[]))
    with pytest.raises(ArgumentError, match="record=True"):
        causality_violations(CostModel(), log)


# -- a kernel with a missing unit flag ----------------------------------------------------------------------------
def test_a_fixpipe_without_unit_flag_or_m_fix_flag_starts_before_its_mmad_and_the_check_says_so():
    cost, log = CostModel(record=True), AccessLog()
    launch(UnitFlag(), _gm(), 1, detect_races=True, observers=(cost, log))
    assert causality_violations(cost, log) == []
    # unit_flag=0 on the Fixpipes and no SetFlag<M_FIX>: the detector reports the race...
    with pytest.raises(RaceError, match="no SetFlag<M_FIX>/WaitFlag<M_FIX> between Mmad"):
        launch(UnitFlag(fix_flag=0), _gm(), 1, detect_races=True)
    # ...and the cost model alone starts the Fixpipe while the Mmad is still running: the check flags it.
    cost, log = CostModel(record=True), AccessLog()
    launch(UnitFlag(fix_flag=0), _gm(), 1, observers=(cost, log))
    found = causality_violations(cost, log)
    assert found, "the check missed a Fixpipe that reads L0C before the Mmad writing it finished"
    v = found[0]
    assert (v.earlier.op, v.earlier.pipe, v.earlier.kind) == ("Mmad", Pipe.M, "write")
    assert (v.later.op, v.later.pipe, v.later.kind) == ("Fixpipe", Pipe.FIX, "read")
    assert v.later.start < v.earlier.end and v.memory.startswith("L0C")


def test_a_wait_flag_into_the_scalar_pipe_holds_back_every_later_instruction():
    # WaitFlag<MTE2_S> blocks PIPE_S, which dispatches everything after it: the Muls reads UB only after the
    # load (and its GM latency) is done. The detector agrees that the pair is ordered.
    n = 4096

    class LoadThenScale:
        def aiv(self, ctx, gm):
            x = ctx.resource.ub_buf.get_buffer_by_byte("float32", 0, n)
            ctx.emit(Pipe.MTE2, "CopyGm2Ub", nbytes=4 * n, gm_reads=(gm.access(0, n),), local_writes=(x.access(),))
            ctx.set_flag(HardEvent.MTE2_S, 0)
            ctx.wait_flag(HardEvent.MTE2_S, 0)
            ctx.emit(Pipe.V, "Muls", nbytes=4 * n, local_reads=(x.access(),), local_writes=(x.access(),))

    cost, log = CostModel(record=True), AccessLog()
    launch(LoadThenScale(), GlobalBuffer.empty(4 * n, "in", fill=0).tensor("float32"), 1, detect_races=True,
           observers=(cost, log))
    assert causality_violations(cost, log) == []
    load, scale = cost.intervals[:2]
    assert scale[3] >= load[3] + load[4] + cost.landing[0]


# -- the cost model on random race-free streams --------------------------------------------------------------------
_V_S_THEN_MTE3 = [("acc", (1, Pipe.V, True, False, 0, 8, 0, 1)), ("set", 1, HardEvent.V_S, 0), ("wait", 1, 0),
                  ("acc", (1, Pipe.MTE3, False, False, 0, 8, 0, 1))]


@settings(max_examples=150, deadline=None)
@given(st.lists(_step, max_size=40), st.lists(st.sampled_from([0, 256, 4096, 1 << 16]), min_size=1, max_size=4))
@example(_V_S_THEN_MTE3, [1 << 16])  # a long V write, WaitFlag<V_S>, then MTE3 reads: the S pipe holds MTE3 back
def test_the_cost_model_timeline_of_a_race_free_stream_is_causal(steps, sizes):
    # The streams of the detector's reference test, with instructions that move bytes (so that durations and
    # GM landing latencies differ and a missing dependency shows as an overlap in time).
    stream = [(dataclasses.replace(e, nbytes=sizes[i % len(sizes)]) if isinstance(e, InstructionEvent) else e, node)
              for i, (e, node) in enumerate(_events(steps))]
    if _reference(stream) is not None:
        return  # a racy stream: its simulation order is not an order the model promises to respect
    cost, log = CostModel(record=True), AccessLog()
    info = LaunchInfo(ATLAS_A2, 1, CORES, None, None)
    for obs in (cost, log):
        obs.on_launch_start(info)
    for e, _node in stream:
        cost.on_event(e)
        log.on_event(e)
    cost.on_launch_end(info, None)
    assert causality_violations(cost, log) == []
