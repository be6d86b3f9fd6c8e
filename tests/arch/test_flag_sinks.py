"""Intra-core flags reach observers that take templates as calls (``ObserverBus.flag_sinks``) when every observer of
flags can take them so, and as events otherwise: the same flags, in the same order, with the same numbers; and a
replay's flags done in one call (``CoreContext.replay_flags``) are those done one at a time."""

from __future__ import annotations

from catlass_py.arch import ATLAS_A2, HardEvent, Observer, launch
from catlass_py.arch.events import SetFlagEvent, WaitFlagEvent


class _Kernel:
    aiv = None

    def aic(self, ctx, params):
        for i in range(3):
            ctx.set_flag(HardEvent.MTE2_MTE1, i)
        for i in (1, 0, 2):
            ctx.wait_flag(HardEvent.MTE2_MTE1, i)
        ctx.set_flag(HardEvent.M_MTE1, 0)
        ctx.wait_flag(HardEvent.M_MTE1, 0)


class _Calls(Observer):
    """Takes templates and flags as calls."""

    interests = frozenset({"sync"})
    accepts_templates = True

    def __init__(self):
        self.flags: list = []

    def template_flag(self, core, event, seq, is_set):
        self.flags.append((core.short, event.name, seq, is_set))


class _Events(Observer):
    interests = frozenset({"sync"})

    def __init__(self):
        self.flags: list = []

    def on_event(self, e):
        if isinstance(e, SetFlagEvent):
            self.flags.append((e.core.short, e.event.name, e.seq, True))
        elif isinstance(e, WaitFlagEvent):
            self.flags.append((e.core.short, e.event.name, e.source_seq, False))


def test_flags_as_calls_match_the_events():
    calls, events = _Calls(), _Events()
    launch(_Kernel(), None, 1, arch=ATLAS_A2, observers=(calls,))
    launch(_Kernel(), None, 1, arch=ATLAS_A2, observers=(events,))
    assert calls.flags == events.flags and len(calls.flags) == 8
    assert [f[3] for f in calls.flags] == [True] * 3 + [False] * 3 + [True, False]


def test_a_template_taker_without_template_flag_gets_events():
    class _TakesTemplates(_Events):
        accepts_templates = True

    events = _TakesTemplates()
    launch(_Kernel(), None, 1, arch=ATLAS_A2, observers=(events,))
    assert len(events.flags) == 8


def test_an_observer_of_flag_events_beside_it_turns_the_calls_off():
    calls, events = _Calls(), _Events()
    launch(_Kernel(), None, 1, arch=ATLAS_A2, observers=(calls, events))
    assert not calls.flags and len(events.flags) == 8  # no templates: the bus publishes events to both


def test_replayed_flags_match_the_flags_one_at_a_time():
    import pytest

    from catlass_py.arch import standalone_core
    from catlass_py.errors import DeadlockError

    ops = ((True, HardEvent.MTE2_MTE1, 0), (True, HardEvent.MTE2_MTE1, 0), (False, HardEvent.MTE2_MTE1, 0),
           (True, HardEvent.M_MTE1, 3), (False, HardEvent.M_MTE1, 3), (False, HardEvent.MTE2_MTE1, 0))
    log = _Calls()  # the flags one at a time, as calls: each set's number, each wait's consumed set
    one, batch = standalone_core(core_type="AIC", observers=(log,)), standalone_core(core_type="AIC")
    for is_set, event, event_id in ops:
        (one.set_flag if is_set else one.wait_flag)(event, event_id)
    replayed: list = []
    assert batch.replay_flags(ops, replayed)
    logged = [seq for _core, _event, seq, _is_set in log.flags]
    # each wait consumed the oldest set of its (event, id), in both (a published wait also takes a number of its own,
    # so the sets' numbers differ; they are identities only)
    for seqs in (replayed, logged):
        assert seqs[2] == seqs[0] and seqs[4] == seqs[3] and seqs[5] == seqs[1] and len(set(seqs)) == 3
    assert {k: len(q) for k, q in batch._events.items()} == {k: len(q) for k, q in one._events.items()}
    with pytest.raises(DeadlockError, match="has no earlier SetFlag"):
        batch.replay_flags(((False, HardEvent.MTE1_M, 1),), [])
