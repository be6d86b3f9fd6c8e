"""Compiled cost-model templates (catlass_py.analysis.cost_records): the timing rules on hand-built records, and
whole launches timed the same with and without them."""

import pytest

import catlass_py.analysis.cost as cost_module
from catlass_py.analysis import CostModel
from catlass_py.analysis.cost import _CoreTiming
from catlass_py.analysis.cost_records import _BARRIER, _EVENT, _INSTR, _SET, _WAIT, compilable, compile_template
from catlass_py.arch import LaunchParams
from catlass_py.arch.events import CoreId, MemAccess
from catlass_py.arch.pipe_order import PIPE_INDEX, PIPES, CoreOrder
from catlass_py.arch.pipes import CoreType, Pipe
from catlass_py.assemblies.settings import parse_settings
from catlass_py.data import example10_inputs
from catlass_py.ops.grouped_matmul_slice_m_per_token_dequant import grouped_matmul_slice_m_per_token_dequant
from catlass_py.runner import load_script
from catlass_py.tune.evaluate import example_arch

MTE1, M, S = PIPE_INDEX[Pipe.MTE1], PIPE_INDEX[Pipe.M], PIPE_INDEX[Pipe.S]


def _timing(**pipes) -> _CoreTiming:
    t = _CoreTiming(0.0, PIPES)
    for name, (free, done) in pipes.items():
        t.free[Pipe[name]], t.done[Pipe[name]] = free, done
    return t


def test_a_compiled_template_follows_the_timing_rules():
    records = [_WAIT, MTE1, 0, 0, -1,      # WaitFlag into MTE1: its set fired at 40
               _INSTR, MTE1, 10, 0, -1,    # L1 -> L0A, 10 cycles
               _SET, MTE1, 0, 0, -1,       # SetFlag on MTE1
               _WAIT, M, 0, 0, -1,         # WaitFlag into M of that set
               _INSTR, M, 20, 5, -1,       # Mmad, 20 cycles, lands 5 later
               _BARRIER, M, 0, 0, -1,
               _INSTR, S, 3, 1, -1]        # a scalar step: issue waits for it
    assert compilable(records, {})
    run = compile_template(records, {})
    t = _timing(MTE1=(30.0, 30.0), M=(0.0, 0.0))
    t.issue, t.clock = 2.0, 2.0
    tokens = {7: 40.0}
    seqs = [7, 8, 8]  # the wait's set, the set's own number, the wait of it
    clocks = run(t, seqs, 0, tokens, 1.0, None)
    # MTE1 starts at the token (40), ends 50; the set fires at 50; M waits for it, ends 70, done 75; the barrier
    # holds M until 75; S starts at issue = 2 + 1 (wait) + 1 (instr) + 1 (set) + 1 (wait) + 1 (instr) = 7.
    assert clocks == (40.0, 50.0, 50.0)
    assert (t.free[Pipe.MTE1], t.done[Pipe.MTE1], t.busy[Pipe.MTE1]) == (50.0, 50.0, 10.0)
    assert (t.free[Pipe.M], t.done[Pipe.M], t.last_end[Pipe.M], t.busy[Pipe.M]) == (75.0, 75.0, 75.0, 20.0)
    assert (t.free[Pipe.S], t.last_end[Pipe.S]) == (10.0, 11.0)
    assert t.issue == 11.0 and t.clock == 50.0
    assert tokens == {}  # both sets consumed


def test_a_unit_flag_mmad_joins_the_fixpipe_on_its_l0c_bytes_and_publishes_when_it_closes_the_tile():
    l0c = (MemAccess("L0C of AIC0", 1, 0, 1024, space="L0C"),)
    other = (MemAccess("L0C of AIC0", 1, 4096, 1024, space="L0C"),)
    records = [_INSTR, MTE1, 4, 0, -1, _EVENT, 0, 0, 0, -1]
    units = {5: (M, l0c, True, 20, 0)}
    assert compilable(records, units) and not compilable(records, {})
    run = compile_template(records, units)
    st = CoreOrder(CoreId(CoreType.AIC, 0), 0)
    st.unit_fix = [(l0c, 100.0), (other, 500.0)]  # the Fixpipe reading these bytes ends at 100
    t = _timing()
    clocks = run(t, [], 0, {}, 1.0, st)
    assert clocks == (0.0, 100.0)  # the Mmad waited for the Fixpipe on its bytes only
    assert t.free[Pipe.M] == 120.0 and st.unit_mmad == [(l0c, 120.0)]


def test_templates_of_other_durations_share_their_code_and_keep_their_numbers():
    a = compile_template([_INSTR, MTE1, 10, 0, -1, _INSTR, M, 20, 0, -1], {})
    b = compile_template([_INSTR, MTE1, 1, 0, -1, _INSTR, M, 2, 0, -1], {})
    assert a.__code__ is b.__code__
    ta, tb = _timing(), _timing()
    assert a(ta, [], 0, {}, 0.0, None) == (0.0, 0.0) and (ta.free[Pipe.MTE1], ta.free[Pipe.M]) == (10, 20)
    assert b(tb, [], 0, {}, 0.0, None) == (0.0, 0.0) and (tb.free[Pipe.MTE1], tb.free[Pipe.M]) == (1, 2)


def test_records_that_meet_another_core_are_not_compiled():
    assert not compilable([_INSTR, MTE1, 10, 0, 3, _INSTR, M, 1, 0, -1], {})  # writes GM (x names the buffers)
    assert not compilable([1, PIPE_INDEX[Pipe.MTE2], 10, 0, -1, _INSTR, M, 1, 0, -1], {})  # a GM read
    assert not compilable([_SET, MTE1, 0, 0, -1, _WAIT, M, 0, 0, -1], {})  # no instruction


def _report_tuple(cm: CostModel):
    r = cm.report
    return r, r.busy_cycles, r.core_cycles, r.core_end_cycles


def _without_compiling(monkeypatch, fn):
    monkeypatch.setattr(cost_module, "compilable", lambda records, units: False)
    try:
        return fn()
    finally:
        monkeypatch.undo()


def _count_compiled(monkeypatch) -> list:
    made = []

    def spy(records, units):
        made.append(len(records) // 5)
        return compile_template(records, units)

    monkeypatch.setattr(cost_module, "compile_template", spy)
    return made


def _timing_only(name, args, config, cores):
    example = load_script(name)
    cm = CostModel()
    example.run(args, cores=cores, observers=(cm,), options=LaunchParams(numerics=False),
                config=parse_settings(example.assemble, config, example_arch(example)))
    return _report_tuple(cm)


# 09 with this configuration has cores whose GM reads start at the same cycle: their order decides the L2/HBM
# shares, and it is the order of the records one by one only because the loop brings a core back inside a
# compiled template where it would have stopped.
@pytest.mark.parametrize("name,args,config,cores", [
    ("09_splitk_matmul", ["256", "512", "4096"], {"l1_tile": "64x128x192", "l0_tile": "64x128x32", "swizzle": "3,0"},
     24),
    ("00_basic_matmul", ["256", "512", "1024"], {"l1_tile": "128x256x256", "l0_tile": "128x256x64"}, 24),
])
def test_a_timing_only_run_predicts_the_same_with_compiled_templates(monkeypatch, name, args, config, cores):
    plain = _without_compiling(monkeypatch, lambda: _timing_only(name, args, config, cores))
    made = _count_compiled(monkeypatch)
    assert _timing_only(name, args, config, cores) == plain
    assert made  # the unit-flag Mmads' L1 tiles were compiled


def test_the_flagship_predicts_the_same_with_compiled_templates(monkeypatch):
    x = example10_inputs(16, 256, 512, 1024)

    def run():
        cm = CostModel()
        grouped_matmul_slice_m_per_token_dequant(x.a, x.b, x.group_list, x.scale, x.per_token_scale, core_num=8,
                                                 observers=(cm,))
        return _report_tuple(cm)

    plain = _without_compiling(monkeypatch, run)
    made = _count_compiled(monkeypatch)
    assert run() == plain
    assert made
