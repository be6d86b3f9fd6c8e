"""Cost model: parameters in the ArchSpec, the timing rules on hand-built kernels, and the ordering the
flagship's components exist for (PreloadAsyncWithCallback + 2 workspace stages beats synchronous Pingpong +
1 stage)."""

import pytest

from catlass_py.analysis import CostModel, roofline
from catlass_py.arch import ASCEND_950, ATLAS_A2, CrossCoreFlag, GlobalBuffer, HardEvent, Pipe, launch, load_arch
from catlass_py.arch.spec import CostParams
from catlass_py.data import example10_inputs
from catlass_py.gemm import MmadAtlasA2Pingpong
from catlass_py.ops.grouped_matmul_slice_m_per_token_dequant import build_kernel, grouped_matmul_slice_m_per_token_dequant

# One byte per cycle on every path, no fixed costs, no launch head: durations equal byte counts.
UNIT = CostParams(
    clock_ghz=1.0, cube_macs_per_cycle={"float16": 4096, "int8": 8192}, gm_read_bytes_per_cycle=1,
    l2_read_bytes_per_cycle=1, gm_write_bytes_per_cycle=1, aiv_gm_read_bytes_per_cycle=1,
    aiv_l2_miss_read_bytes_per_cycle=1, ub_to_gm_bytes_per_cycle=1,
    l1_to_l0a_bytes_per_cycle=1, l1_to_l0b_bytes_per_cycle=1, l0c_read_bytes_per_cycle=1e9,
    vector_bytes_per_cycle=1, gm_bandwidth_gbps=1e6, l2_bandwidth_gbps=1e6, hbm_access_bytes=1, gm_run_cycles=0,
    hbm_run_cycles=0, launch_overhead_us=0, mix_launch_overhead_us=0, gm_latency_cycles=0, mte_overhead_cycles=0,
    cube_overhead_cycles=0, vector_overhead_cycles=0, scalar_issue_cycles=0, scalar_gm_read_cycles=0,
    cross_core_latency_cycles=0,
)
UNIT_ARCH = ATLAS_A2.model_copy(update={"cost": UNIT})


class TwoPipes:
    """AIC only: a 100-byte GM->L1 load, then a 50-byte L1->L0A copy, optionally ordered by MTE2_MTE1."""

    aiv = None

    def __init__(self, synced: bool):
        self.synced = synced

    def aic(self, ctx, p):
        ctx.emit(Pipe.MTE2, "CopyGmToL1", nbytes=100)
        if self.synced:
            ctx.set_flag(HardEvent.MTE2_MTE1, 0)
            ctx.wait_flag(HardEvent.MTE2_MTE1, 0)
        ctx.emit(Pipe.MTE1, "CopyL1ToL0A", nbytes=50)


def _cost(kernel, block_dim=1, **kw) -> CostModel:
    cm = CostModel(record=True, **kw)
    launch(kernel, None, block_dim, arch=UNIT_ARCH, observers=(cm,))
    return cm


def test_atlas_a2_parameters_are_the_cann_platform_values():
    p = ATLAS_A2.cost
    assert p.clock_ghz == 1.8
    assert (p.macs_per_cycle("int8"), p.macs_per_cycle("float16"), p.macs_per_cycle("bfloat16")) == (8192, 4096, 4096)
    assert (p.l2_read_bytes_per_cycle, p.l1_to_l0a_bytes_per_cycle, p.l1_to_l0b_bytes_per_cycle) == (110, 512, 256)
    assert (p.ub_to_gm_bytes_per_cycle, p.gm_write_bytes_per_cycle, p.l2_size_bytes) == (64, 86, 192 << 20)
    assert p.macs_per_cycle("no-such-dtype") == 4096  # falls back to float16
    assert ASCEND_950.cost.macs_per_cycle("hifloat8") == 8192
    assert (ASCEND_950.cost.aiv_gm_read_bytes_per_cycle, ASCEND_950.cost.aiv_l2_miss_read_bytes_per_cycle) == (100, 16)
    # Every field documents its source or says it is an estimate or fitted (the calibration).
    for name, info in CostParams.model_fields.items():
        text = info.description or ""
        assert "[CANN-" in text or "[CATLASS" in text or "stimate" in text or "Fitted" in text, name


def test_cost_parameters_load_from_toml_and_keep_the_spec_hashable():
    spec = load_arch('[arch]\nbase = "AtlasA2"\n[arch.cost]\nclock_ghz = 1.5\ncube_macs_per_cycle = {int8 = 4096}\n')
    assert spec.cost.clock_ghz == 1.5
    assert spec.cost.gm_read_bytes_per_cycle == ATLAS_A2.cost.gm_read_bytes_per_cycle  # the base supplies the rest
    assert spec.cost.macs_per_cycle("int8") == 4096
    assert len({spec, ATLAS_A2, ASCEND_950}) == 3


def test_unsynchronised_pipes_overlap_and_a_flag_serialises_them():
    free = _cost(TwoPipes(synced=False)).report
    synced = _cost(TwoPipes(synced=True))
    assert free.cycles == 100  # MTE1 ran under the MTE2 load
    assert synced.report.cycles == 150
    starts = {pipe: start for _c, pipe, _op, start, _d, _s, _b in synced.intervals}
    assert starts == {"MTE2": 0, "MTE1": 100}
    assert synced.report.pipe_busy["AIC.MTE2"] == pytest.approx(100 / 150)
    assert synced.report.pipe_busy["AIC.MTE1"] == pytest.approx(50 / 150)


class Handoff:
    """AIC stores 100 bytes through the fixpipe and signals (mode 2 on FIX); the AIVs wait and load 40 bytes."""

    def aic(self, ctx, p):
        ctx.emit(Pipe.FIX, "Fixpipe", nbytes=100)
        ctx.cross_core_set_flag(CrossCoreFlag(0), 2, Pipe.FIX)

    def aiv(self, ctx, p):
        ctx.cross_core_wait_flag(CrossCoreFlag(0))
        ctx.emit(Pipe.MTE2, "CopyGm2Ub", nbytes=40 * (1 + ctx.sub_block_idx))


def test_cross_core_wait_starts_after_the_set_on_its_pipe():
    cm = _cost(Handoff())
    by_core = {c.short: (start, dur) for c, pipe, _op, start, dur, _s, _b in cm.intervals if pipe == "MTE2"}
    assert by_core == {"AIV0.0": (100, 40), "AIV0.1": (100, 80)}
    assert cm.report.cycles == 180
    assert cm.report.core_end_cycles == {"AIC0": 100, "AIV0.0": 140, "AIV0.1": 180}
    (core, pipe, flag, fire), = cm.flag_sets.values()
    assert (core.short, pipe, flag, fire) == ("AIC0", "FIX", 0, 100)
    assert [(w[0].short, w[3]) for w in cm.flag_waits] == [("AIV0.0", 100), ("AIV0.1", 100)]


def test_cube_time_counts_fractals_of_the_dtype():
    class OneMmad:
        aiv = None

        def aic(self, ctx, p):
            ctx.emit(Pipe.M, "Mmad", flops=2 * 16 * 256 * 128, info={"m": 16, "n": 256, "k": 128, "dtype": "int8"})

    cm = _cost(OneMmad())
    assert cm.report.cycles == 1 * 16 * 4  # (16/16) x (256/16) x (128/32) int8 fractals, one per cycle
    assert cm.report.cube_utilisation == 1.0
    assert cm.report.cube_macs == 16 * 256 * 128


def test_shared_hbm_bandwidth_queues_the_misses_of_all_cores_and_floors_the_total():
    slow = UNIT_ARCH.model_copy(update={"cost": UNIT.model_copy(update={"gm_bandwidth_gbps": 0.5})})

    class ReadAndWrite:
        """Each core: a GM load of its own 100 bytes and a fixpipe store of 100 bytes, on two pipes, unordered."""

        aiv = None

        def aic(self, ctx, p):
            a, c = p
            ctx.emit(Pipe.MTE2, "CopyGmToL1", nbytes=100, gm_reads=(a.access(100 * ctx.block_idx, 100),))
            ctx.emit(Pipe.FIX, "Fixpipe", nbytes=100, gm_writes=(c.access(100 * ctx.block_idx, 100),))

    gm = (GlobalBuffer.empty(200, "a").tensor("uint8"), GlobalBuffer.empty(200, "c").tensor("uint8"))
    one = CostModel(arch=slow)
    launch(ReadAndWrite(), gm, 1, arch=UNIT_ARCH, observers=(one,))
    rep = one.report
    assert (rep.gm_read_bytes, rep.gm_write_bytes, rep.hbm_read_bytes, rep.l2_hit_bytes) == (100, 100, 100, 0)
    assert rep.timeline_cycles == 200  # the core could read at 1 B/cycle, the HBM serves 0.5
    assert rep.cycles == rep.bandwidth_floor_cycles == 200  # 100 bytes fetched / 0.5 B per cycle
    two = CostModel(arch=slow)
    launch(ReadAndWrite(), gm, 2, arch=UNIT_ARCH, observers=(two,))
    assert two.report.hbm_read_bytes == 200
    assert two.report.timeline_cycles == 400  # two cores queue on the one HBM: the second read ends at 400
    assert sorted(two.report.core_end_cycles.values()) == [200, 400]


def test_a_tile_another_core_fetched_hits_l2_and_a_small_l2_forgets_it():
    class SameTile:
        """Every core loads the same 100 bytes (an A tile the cores of one block row share)."""

        aiv = None

        def aic(self, ctx, p):
            ctx.emit(Pipe.MTE2, "CopyGmToL1", nbytes=100, gm_reads=(p.access(0, 100),))

    gm = GlobalBuffer.empty(100, "x").tensor("uint8")
    hit_fast = UNIT_ARCH.model_copy(update={"cost": UNIT.model_copy(update={"l2_read_bytes_per_cycle": 4,
                                                                           "l2_size_bytes": 1 << 20})})
    cm = CostModel(arch=hit_fast)
    launch(SameTile(), gm, 3, arch=UNIT_ARCH, observers=(cm,))
    rep = cm.report
    assert (rep.hbm_read_bytes, rep.l2_hit_bytes) == (100, 200)  # one miss, two hits
    # The first read in simulated time misses; reads that start while it is fetching are served by it.
    assert sorted(rep.core_end_cycles.values()) == [25, 25, 100] or rep.cycles == 100
    no_l2 = CostModel(arch=hit_fast.model_copy(update={"cost": hit_fast.cost.model_copy(update={"l2_size_bytes": 0})}))
    launch(SameTile(), gm, 3, arch=UNIT_ARCH, observers=(no_l2,))
    assert (no_l2.report.hbm_read_bytes, no_l2.report.l2_hit_bytes) == (300, 0)


def test_a_launch_pays_its_head_and_a_mix_launch_more():
    head = UNIT_ARCH.model_copy(update={"cost": UNIT.model_copy(update={"launch_overhead_us": 0.5,
                                                                       "mix_launch_overhead_us": 0.25})})
    aic_only = CostModel(arch=head)
    launch(TwoPipes(synced=True), None, 1, arch=UNIT_ARCH, observers=(aic_only,))
    assert aic_only.report.cycles == 150 + 500  # 0.5 us at 1 GHz
    mix = CostModel(arch=head)
    launch(Handoff(), None, 1, arch=UNIT_ARCH, observers=(mix,))
    assert mix.report.launch_overhead_cycles == 750 and mix.report.cycles == 180 + 750


def _predict(kernel, x, cores):
    cm = CostModel()
    grouped_matmul_slice_m_per_token_dequant(x.a, x.b, x.group_list, x.scale, x.per_token_scale, core_num=cores,
                                             observers=(cm,), kernel=kernel)
    return cm.report


def test_preload_async_with_two_stages_beats_synchronous_pingpong_with_one():
    x = example10_inputs(4, 128, 512, 1024)
    fast = _predict(build_kernel(ATLAS_A2, "bfloat16"), x, 2)
    slow = _predict(build_kernel(ATLAS_A2, "bfloat16", policy=MmadAtlasA2Pingpong(), workspace_stages=1), x, 2)
    assert fast.cycles < slow.cycles
    # Same work either way: the difference is only how far the pipes overlap.
    assert (fast.gm_read_bytes, fast.gm_write_bytes, fast.cube_macs) == (slow.gm_read_bytes, slow.gm_write_bytes, slow.cube_macs)
    assert fast.pipe_busy["AIC.MTE2"] > slow.pipe_busy["AIC.MTE2"]
    for rep in (fast, slow):
        assert 0 < rep.cube_utilisation == rep.pipe_busy["AIC.M"] < 1
        assert all(0 <= v <= 1 for v in rep.pipe_busy.values())
        assert set(rep.pipe_busy) == {"AIC.MTE2", "AIC.MTE1", "AIC.M", "AIC.FIX", "AIC.S",
                                      "AIV.MTE2", "AIV.V", "AIV.MTE3", "AIV.S"}


def test_roofline_of_the_readme_shape_is_bandwidth_bound():
    # 507 rows x 1024 x 2048 int8 MACs; the B matrices of the 113 non-empty groups dominate the traffic.
    r = roofline(ATLAS_A2, macs=507 * 1024 * 2048, gm_bytes=113 * 2048 * 1024)
    assert r["peak_tops"] == pytest.approx(24 * 8192 * 2 * 1.8e9 / 1e12)
    assert r["compute_s"] == pytest.approx(507 * 1024 * 2048 / (24 * 8192 * 1.8e9))
    bandwidth = ATLAS_A2.cost.gm_bandwidth_gbps * 1e9  # the fitted HBM bandwidth (docs/performance-model.md)
    assert r["bound_s"] == r["memory_s"] == pytest.approx(113 * 2048 * 1024 / bandwidth)


def test_launches_observed_one_after_another_add_up():
    cm = CostModel(record=True)
    launch(TwoPipes(synced=True), None, 1, arch=UNIT_ARCH, observers=(cm,))
    launch(TwoPipes(synced=False), None, 1, arch=UNIT_ARCH, observers=(cm,))
    rep = cm.report
    assert [r.cycles for r in cm.reports] == [150, 100]
    assert (rep.launches, rep.cycles) == (2, 250)
    assert rep.pipe_busy["AIC.MTE2"] == pytest.approx(200 / 250)
    # The second launch is placed after the first on the recorded timeline.
    assert [(pipe, start) for _c, pipe, _op, start, _d, _s, _b in cm.intervals] == [
        ("MTE2", 0), ("MTE1", 100), ("MTE2", 150), ("MTE1", 150)]


def test_a_model_with_and_without_record_predicts_the_same():
    # record=False queues compact records, record=True keeps every event for the trace: the same numbers.
    x = example10_inputs(3, 100, 96, 160)
    plain, traced = CostModel(), CostModel(record=True)
    grouped_matmul_slice_m_per_token_dequant(x.a, x.b, x.group_list, x.scale, x.per_token_scale, core_num=3,
                                              observers=(plain, traced))
    assert plain.report == traced.report
    assert (plain.report.busy_cycles, plain.report.core_cycles) == (traced.report.busy_cycles,
                                                                    traced.report.core_cycles)
    assert plain.report.cycles > 0 and len(traced.intervals) > 0


@pytest.mark.parametrize("record", [False, True])
def test_events_after_a_wait_whose_set_never_came_are_still_timed(record):
    # A stream the machine does not produce (a launch that failed): AIV0.0 consumed a cross-core set that
    # was never published. Its later work is timed after everything else, the wait joining no set.
    from catlass_py.arch import CoreId, CoreType, CrossCoreWaitEvent, InstructionEvent, LaunchInfo

    aic, aiv = CoreId(CoreType.AIC, 0), CoreId(CoreType.AIV, 0, 0)
    cm = CostModel(record=record)
    info = LaunchInfo(UNIT_ARCH, 1, (aic, aiv), None, None)
    cm.on_launch_start(info)
    for e in (InstructionEvent(1, aiv, Pipe.V, "Adds", nbytes=10),
              CrossCoreWaitEvent(2, aiv, 0, (99,)),
              InstructionEvent(3, aiv, Pipe.V, "Adds", nbytes=20),
              InstructionEvent(4, aic, Pipe.MTE1, "CopyL1ToL0A", nbytes=50)):
        cm.on_event(e)
    cm.on_launch_end(info, None)
    rep = cm.report
    assert rep.core_end_cycles == {"AIC0": 50, "AIV0.0": 30}
    assert rep.busy_cycles["AIV.V"] == 30 and rep.busy_cycles["AIC.MTE1"] == 50
    if record:
        assert [(c.short, pipe, start, dur) for c, pipe, _op, start, dur, _s, _b in cm.intervals] == [
            ("AIV0.0", "V", 0, 10), ("AIV0.0", "V", 10, 20), ("AIC0", "MTE1", 0, 50)]
