"""Chrome/Perfetto trace and timeline picture of a costed flagship run."""

import json
from collections import Counter, defaultdict

import pytest

from catlass_py.analysis import CostModel, chrome_trace, draw_timeline, write_chrome_trace
from catlass_py.arch import CrossCoreWaitEvent, InstructionEvent, Observer
from catlass_py.data import example10_inputs
from catlass_py.errors import ArgumentError
from catlass_py.ops import grouped_matmul_slice_m_per_token_dequant

CORES = 2


class Tally(Observer):
    interests = frozenset({"instruction", "cross_core"})

    def __init__(self):
        self.instructions = 0
        self.consumed = 0

    def on_event(self, e):
        if isinstance(e, InstructionEvent):
            self.instructions += 1
        elif isinstance(e, CrossCoreWaitEvent):
            self.consumed += len(e.sources)


@pytest.fixture(scope="module")
def costed():
    x = example10_inputs(4, 128, 512, 1024)
    cm, tally = CostModel(record=True), Tally()
    grouped_matmul_slice_m_per_token_dequant(x.a, x.b, x.group_list, x.scale, x.per_token_scale, core_num=CORES,
                                             observers=(cm, tally))
    return cm, tally


def test_trace_file_is_valid_json_with_a_process_per_ai_core_and_a_track_per_pipe(costed, tmp_path):
    cm, tally = costed
    path = tmp_path / "out.json"
    n = write_chrome_trace(cm, path)
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    assert len(events) == n
    procs = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert procs == {0: "AI core 0", 1: "AI core 1", 2: "launch"}
    threads = {(e["pid"], e["args"]["name"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    for c in range(CORES):
        for pipe in ("MTE2", "MTE1", "M", "FIX", "S", "flags"):
            assert (c, f"AIC{c} {pipe}") in threads
        for s in (0, 1):
            for pipe in ("MTE2", "V", "MTE3", "S", "flags"):
                assert (c, f"AIV{c}.{s} {pipe}") in threads
    tids = {(e["pid"], e["tid"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert len(tids) == len(threads)  # one tid per named track
    # One complete event per instruction, on the track of its core and pipe, in predicted microseconds.
    instr = [e for e in events if e["ph"] == "X" and e["cat"] == "instruction"]
    assert {e["cat"] for e in events if e["ph"] == "X"} == {"instruction", "cross-core", "launch"}
    assert len(instr) == tally.instructions
    names = {(e["pid"], e["tid"]): None for e in instr}
    assert all(key in tids for key in names)
    assert Counter(e["name"] for e in instr)["Mmad"] > 0
    end = max(e["ts"] + e["dur"] for e in instr)
    timeline_us = cm.report.timeline_cycles / (cm.report.clock_ghz * 1e3)  # the device time less the launch head
    assert 0.9 * timeline_us < end <= timeline_us  # the last data still lands after it
    assert trace["otherData"]["predicted_device_time_us"] == pytest.approx(cm.report.microseconds, abs=1e-3)
    # the launch overhead, in no pipe, closes the predicted time on a track of its own
    (head,) = [e for e in events if e["ph"] == "X" and e["cat"] == "launch"]
    head_us = cm.report.launch_overhead_cycles / (cm.report.clock_ghz * 1e3)
    assert head["pid"] == 2 and head["dur"] == pytest.approx(head_us, abs=2e-3) and head_us > 0
    assert head["ts"] + head["dur"] == pytest.approx(cm.report.microseconds, abs=2e-3)


def test_trace_slices_nest_properly_on_every_track(costed):
    # Perfetto requires that slices of one track either nest or follow each other.
    trace = chrome_trace(costed[0])
    by_track = defaultdict(list)
    for e in trace["traceEvents"]:
        if e["ph"] == "X":
            assert e["ts"] >= 0 and e["dur"] >= 0
            by_track[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    for slices in by_track.values():
        slices.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for b, e in slices:
            while stack and stack[-1] <= b + 1e-9:
                stack.pop()
            assert not stack or e <= stack[-1] + 1e-9, "partially overlapping slices"
            stack.append(e)


def test_every_consumed_cross_core_set_is_an_arrow_from_set_to_wait(costed):
    cm, tally = costed
    events = chrome_trace(cm)["traceEvents"]
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert len(starts) == len(ends) == tally.consumed > 0
    thread = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    slices = {(e["pid"], e["tid"], e["ts"], e["cat"], e["name"].split()[0]) for e in events if e["ph"] == "X"}
    kinds = Counter()
    for fid, s in starts.items():
        f = ends[fid]
        assert f["bp"] == "e" and f["name"] == s["name"]
        assert s["ts"] <= f["ts"]
        # Each end sits exactly on a slice of its track (the binding rule of both Perfetto and Chrome).
        assert (s["pid"], s["tid"], s["ts"], s["cat"], "set") in slices
        assert (f["pid"], f["tid"], f["ts"], f["cat"], "wait") in slices
        src, dst = thread[(s["pid"], s["tid"])], thread[(f["pid"], f["tid"])]
        assert src.endswith(" flags") and dst.endswith(" flags")
        assert s["pid"] == f["pid"]  # mode-2 flags stay inside one AI core
        kinds[(src.split()[0][:3], dst.split()[0][:3])] += 1
    assert set(kinds) == {("AIC", "AIV"), ("AIV", "AIC")}


def test_timeline_picture_is_a_png(costed, tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "t.png"
    draw_timeline(costed[0], path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_trace_needs_a_recording_cost_model():
    with pytest.raises(ArgumentError, match="record=True"):
        chrome_trace(CostModel())


def test_timeline_draws_every_core_with_legend_arrows_and_labels(costed, tmp_path):
    pytest.importorskip("matplotlib")
    cost = costed[0]
    launched = sorted({c.ai_core for c in cost.cores})
    drawn = draw_timeline(cost, tmp_path / "all.png")
    assert drawn["cores"] == launched  # every AI core, not the first four
    assert drawn["lanes"] == len(launched) * (5 + 2 * 4)  # AIC: MTE2 MTE1 M FIX S; each AIV: MTE2 V MTE3 S
    waits = sum(len(src) for *_, src in cost.flag_waits)
    assert 0 < drawn["arrows"] == drawn["flag_waits_released"] <= waits
    assert drawn["stalls"] > 0 and drawn["stall_labels"] > 0 and drawn["block_labels"] > 0
    assert "stall: waiting on a cross-core flag" in drawn["legend"] and "M (cube mmad)" in drawn["legend"]
    assert "launch overhead (no pipe busy)" in drawn["legend"]
    assert drawn["launch_overhead_us"] == pytest.approx(cost.report.launch_overhead_cycles / (cost.report.clock_ghz * 1e3),
                                                        abs=1e-3)
    one = draw_timeline(cost, tmp_path / "one.png", cores=[launched[-1]])
    assert one["cores"] == [launched[-1]] and one["lanes"] == 13 and one["arrows"] < drawn["arrows"]
    with pytest.raises(ArgumentError, match=r"^cores: the launch ran AI cores 0\.\.\d+, got \[99\]$"):
        draw_timeline(cost, tmp_path / "x.png", cores=[99])
