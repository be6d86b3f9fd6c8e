"""Race detector between cores: hand-built kernels, the flagship's toggle tests (remove one wait -> a reported
race; intact -> none) and unconsumed flag sets. Hazards between the pipes of one core: tests/arch/test_hazards.py."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catlass_py.analysis import RaceDetector
from catlass_py.analysis.races import overlap
from catlass_py.arch import (
    ATLAS_A2,
    CoreId,
    CoreType,
    CrossCoreFlag,
    CrossCoreSetEvent,
    CrossCoreWaitEvent,
    GlobalBuffer,
    MemAccess,
    InstructionEvent,
    LaunchInfo,
    LaunchParams,
    Observer,
    Pipe,
    launch,
)
from catlass_py.data import example10_inputs
from catlass_py.errors import RaceError, UnpairedFlagError
from catlass_py.gemm import GemmCoord
from catlass_py.kernel import DeviceGemm, GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace
from catlass_py.ops.grouped_matmul_slice_m_per_token_dequant import build_kernel

N = 64  # int32 elements per AI core's tile
STORED, SECOND = CrossCoreFlag(0), CrossCoreFlag(1)


def _store(ctx, gm, start, count, op="Store"):
    gm[start].view(count, write=True)[:] = ctx.block_idx
    ctx.emit(Pipe.MTE3 if ctx.is_aiv else Pipe.FIX, op, gm_writes=(gm.access(start, count),))


def _load(ctx, gm, start, count, op="Load"):
    gm[start].view(count).copy()
    ctx.emit(Pipe.MTE2, op, gm_reads=(gm.access(start, count),))


class Handoff:
    """AIC writes its tile and sets a mode-2 flag; each AIV (optionally) waits, then reads its half."""

    def __init__(self, aiv_waits=True, aiv_read=(0, N // 2)):
        self.aiv_waits = aiv_waits
        self.aiv_read = aiv_read

    def aic(self, ctx, gm):
        ctx.mark("block", index=ctx.block_idx)
        _store(ctx, gm, ctx.block_idx * N, N, "Fixpipe")
        ctx.cross_core_set_flag(STORED, 2, Pipe.FIX)

    def aiv(self, ctx, gm):
        if self.aiv_waits:
            ctx.cross_core_wait_flag(STORED)
        off, count = self.aiv_read
        _load(ctx, gm, ctx.ai_core_idx * N + off + ctx.sub_block_idx * count, count, "CopyGm2Ub")
        if not self.aiv_waits:
            ctx.cross_core_wait_flag(STORED)  # consume the set afterwards: no order for the read


def _launch(kernel, block_dim=2, nbytes=None, **kw):
    gm = GlobalBuffer.empty(nbytes or block_dim * N * 4, "tile", fill=0).tensor("int32")
    return launch(kernel, gm, block_dim, detect_races=True, **kw)


def test_flag_orders_a_write_before_the_reads_of_other_cores():
    result = _launch(Handoff())
    det = result.race_detector
    assert isinstance(det, RaceDetector) and det in result.observers
    assert det.accesses == 2 * 3  # per AI core: one write, two reads
    assert result.unconsumed_flags == []


def test_read_without_the_wait_is_a_race_naming_both_cores_instructions_buffer_and_bytes():
    with pytest.raises(RaceError) as info:
        _launch(Handoff(aiv_waits=False), block_dim=1)
    err = info.value
    msg = str(err)
    assert err.buffer == "tile"
    assert err.byte_range == (0, 128)  # AIV0.0 reads elements [0, 32) of AI core 0's tile
    assert {c.short for c in err.cores} == {"AIC0", "AIV0.0"}
    assert "AIC 0" in msg and "AIV 0 (AI core 0, sub-block 0)" in msg
    assert "Fixpipe (event #" in msg and "CopyGm2Ub (event #" in msg
    assert "'tile', bytes [0, 128)" in msg
    assert "last mark on that core: block {index=0}" in msg
    kinds = {err.first.kind, err.second.kind}
    assert kinds == {"read", "write"}


def test_the_race_is_found_whichever_core_runs_first():
    for seed in range(6):
        with pytest.raises(RaceError):
            _launch(Handoff(aiv_waits=False), block_dim=1, seed=seed)


def test_disjoint_bytes_never_race_even_unordered():
    # Each AIC writes the first half of its tile; its AIVs read quarters of the second half, with no flag at all.
    class Split:
        def aic(self, ctx, gm):
            _store(ctx, gm, ctx.block_idx * N, N // 2)

        def aiv(self, ctx, gm):
            _load(ctx, gm, ctx.ai_core_idx * N + N // 2 + ctx.sub_block_idx * (N // 4), N // 4)

    result = _launch(Split())
    assert result.race_detector.accesses == 2 * 3


def test_strided_accesses_race_only_where_their_runs_meet():
    gm = GlobalBuffer.empty(1024, "m", fill=0).tensor("uint8")
    cols_0_8 = gm.access(0, 8, 32, 4)  # 4 rows of bytes [0, 8) with a 32-byte pitch
    cols_8_16 = gm.access(8, 8, 32, 4)
    cols_4_12 = gm.access(4, 8, 32, 4)
    assert overlap(cols_0_8, cols_8_16) == (0, 0, 0)
    assert overlap(cols_0_8, cols_4_12) == (4, 104, 16)

    class Columns:
        def __init__(self, second):
            self.second = second

        def aic(self, ctx, p):
            ctx.emit(Pipe.FIX, "Fixpipe", gm_writes=(cols_0_8,))

        def aiv(self, ctx, p):
            if ctx.sub_block_idx == 0:
                ctx.emit(Pipe.MTE2, "CopyGm2Ub", gm_reads=(self.second,))

    launch(Columns(cols_8_16), None, 1, detect_races=True)
    with pytest.raises(RaceError, match=r"bytes \[4, 104\) \(16 byte"):
        launch(Columns(cols_4_12), None, 1, detect_races=True)


def test_two_writers_of_the_same_bytes_race_and_happens_before_is_transitive():
    class Chain:
        """AIV0.0 writes, hands over to the AIC (mode 2 needs both AIVs), the AIC hands over to AIV0.1, which
        overwrites the same bytes: ordered through the AIC although AIV0.1 never waited on AIV0.0."""

        def __init__(self, ordered):
            self.ordered = ordered

        def aic(self, ctx, gm):
            ctx.cross_core_wait_flag(STORED)
            ctx.cross_core_set_flag(SECOND, 2, Pipe.S)

        def aiv(self, ctx, gm):
            if ctx.sub_block_idx == 0:
                _store(ctx, gm, 0, 8)
                ctx.cross_core_set_flag(STORED, 2, Pipe.MTE3)
                ctx.cross_core_wait_flag(SECOND)
            else:
                ctx.cross_core_set_flag(STORED, 2, Pipe.MTE3)
                if self.ordered:
                    ctx.cross_core_wait_flag(SECOND)
                _store(ctx, gm, 0, 8)
                if not self.ordered:
                    ctx.cross_core_wait_flag(SECOND)

    _launch(Chain(ordered=True), block_dim=1)
    with pytest.raises(RaceError, match="(?s)write by AIV 0 .* write by AIV 1|write by AIV 1 .* write by AIV 0") as info:
        _launch(Chain(ordered=False), block_dim=1)
    assert {c.short for c in info.value.cores} == {"AIV0.0", "AIV0.1"}


def test_read_only_buffers_are_skipped_and_launch_params_switch_the_detector_on():
    ro = GlobalBuffer.from_array(np.zeros(N * 4, np.int32), "weights", read_only=True).tensor("int32")

    class ReadOnly:
        def aic(self, ctx, gm):
            _load(ctx, gm, 0, N)

        def aiv(self, ctx, gm):
            _load(ctx, gm, 0, N)

    result = launch(ReadOnly(), ro, 2, options=LaunchParams(detect_races=True))
    assert result.race_detector is not None and result.race_detector.accesses == 0
    assert launch(ReadOnly(), ro, 1).race_detector is None


# -- the flagship kernel ------------------------------------------------------------------------------
BASE = build_kernel(ATLAS_A2, "bfloat16")


def _variant(**overrides) -> GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace:
    cls = type("Variant", (GroupedMatmulSliceMPerTokenDequantMultiStageWorkspace,), overrides)
    return cls(BASE.block_mmad, BASE.block_epilogue, BASE.block_scheduler, workspace_stages=BASE.workspace_stages)


def _skip(self, ctx, stage):
    """A synchronisation point removed."""


def _flagship(kernel, g=4, m=128, n=512, k=1024, cores=2, **kw):
    x = example10_inputs(g, m, n, k)
    gm = {nm: GlobalBuffer.from_array(v, nm, read_only=True).tensor(v.dtype) for nm, v in x.as_dict().items()}
    d = np.zeros((m, n), x.scale.dtype)
    args = kernel.Arguments(GemmCoord(m, n, k), g, cores, gm["group_list"], gm["a"], gm["b"], gm["scale"],
                            gm["per_token_scale"], GlobalBuffer.from_array(d, "d").tensor(d.dtype))
    op = DeviceGemm(kernel)
    op.initialize(args)
    return op.run(cores, detect_races=True, **kw), d


class _DeclaredAccesses(Observer):
    """Counts the non-empty accesses the instructions declare, in GM and in on-chip buffers and registers."""

    interests = frozenset({"instruction"})

    def __init__(self):
        self.gm = self.local = 0

    def on_event(self, e):
        if not isinstance(e, InstructionEvent):
            return
        self.gm += sum(1 for a in e.gm_reads + e.gm_writes if a.length and a.count)
        self.local += sum(1 for a in e.local_reads + e.local_writes if a.length and a.count)


def test_intact_flagship_has_no_race_and_no_unpaired_flag():
    count = _DeclaredAccesses()
    result, _ = _flagship(_variant(), observers=(count,))
    det = result.race_detector
    assert result.unconsumed_flags == [] and result.unconsumed_intra_core_flags == []
    # Checked in GM: each block's fixpipe store into the workspace, and per 32-row epilogue tile one workspace
    # read and one D store (every other input is read-only); and every on-chip access.
    sizes = np.diff(np.concatenate([[0], example10_inputs(4, 128, 512, 1024).group_list]))
    blocks = sum(-(-int(mg) // 128) * 2 for mg in sizes)
    tiles = sum(-(-int(mg) // 32) * 2 for mg in sizes)
    assert det.accesses == blocks + 2 * tiles + count.local
    assert blocks + 2 * tiles == 32 and count.local > 0


@pytest.mark.parametrize("seed", [None, 3])
def test_flagship_without_the_aic_wait_before_its_fixpipe_is_a_race(seed):
    with pytest.raises(RaceError) as info:
        _flagship(_variant(aic_wait_slot_free=_skip), seed=seed)
    err = info.value
    assert err.buffer == "workspace"
    ai_cores = {c.ai_core for c in err.cores}
    assert len(ai_cores) == 1  # the slot is private to one AI core: its AIC and one of its AIVs
    assert {c.type.value for c in err.cores} == {"AIC", "AIV"}
    by_kind = {a.kind: a for a in (err.first, err.second)}
    assert by_kind["write"].op == "Fixpipe" and by_kind["write"].core.type.value == "AIC"
    assert by_kind["read"].op == "CopyGm2Ub" and by_kind["read"].core.type.value == "AIV"
    lo, hi = err.byte_range
    slot_bytes = 128 * 256 * 4  # the AIC's slot s of AI core c starts at (s * cores + c) * slot_bytes
    assert hi > lo and lo // slot_bytes == hi // slot_bytes - (hi % slot_bytes == 0)


def test_flagship_without_the_aiv_wait_before_reading_the_workspace_is_a_race():
    with pytest.raises(RaceError) as info:
        _flagship(_variant(aiv_wait_slot_stored=_skip))
    err = info.value
    assert err.buffer == "workspace"
    assert {(a.kind, a.op, a.core.type.value) for a in (err.first, err.second)} == {
        ("write", "Fixpipe", "AIC"), ("read", "CopyGm2Ub", "AIV")}
    assert f"GM buffer 'workspace', bytes [{err.byte_range[0]}, {err.byte_range[1]})" in str(err)


def test_flagship_without_its_final_drain_leaves_unpaired_sets():
    with pytest.raises(UnpairedFlagError, match="never waited") as info:
        _flagship(_variant(aic_drain_slot=_skip))
    # Each AIC leaves the AIVs' last "computed" signal of both slots (flags 1 and 3) unconsumed.
    assert sorted((c.short, fid, n) for c, fid, n in info.value.cross_core) == [
        ("AIC0", 1, 1), ("AIC0", 3, 1), ("AIC1", 1, 1), ("AIC1", 3, 1)]
    result, _ = _flagship(_variant(aic_drain_slot=_skip), options=LaunchParams(allow_unpaired_flags=True))
    assert sorted((c.short, fid, n) for c, fid, n in result.unconsumed_flags) == [
        ("AIC0", 1, 1), ("AIC0", 3, 1), ("AIC1", 1, 1), ("AIC1", 3, 1)]


def test_detector_arguments_and_empty_overlap():
    det = RaceDetector()
    assert det.shift == 14
    with pytest.raises(ValueError):
        RaceDetector(page_bytes=3000)
    assert overlap(MemAccess("x", 1, 0, 0), MemAccess("x", 1, 0, 8)) == (0, 0, 0)


# -- the detector against a brute-force reference on random event streams --------------------------------
CORES3 = (CoreId(CoreType.AIC, 0), CoreId(CoreType.AIV, 0, 0), CoreId(CoreType.AIV, 0, 1))

_access = st.tuples(st.integers(0, 2), st.booleans(), st.integers(0, 48), st.integers(1, 16),
                    st.integers(0, 3), st.integers(1, 4))
_step = st.one_of(st.tuples(st.just("acc"), _access),
                  st.tuples(st.just("set"), st.integers(0, 2)),
                  st.tuples(st.just("wait"), st.integers(0, 2), st.integers(0, 5)))


def _reference(steps):
    """Index of the first access that conflicts with an unordered earlier access (naive vector clocks), or None."""
    n = len(CORES3)
    clock = [[int(i == j) for j in range(n)] for i in range(n)]
    published, history = [], []
    for idx, step in enumerate(steps):
        if step[0] == "set":
            c = step[1]
            published.append((c, clock[c][:]))
            clock[c][c] += 1
        elif step[0] == "wait":
            c, pick = step[1], step[2]
            others = [p for p in published if p[0] != c]
            if others:
                src = others[pick % len(others)][1]
                clock[c] = [max(a, b) for a, b in zip(clock[c], src)]
        else:
            c, write, start, length, stride_extra, count = step[1]
            acc = MemAccess("buf", 7, start, length, length + stride_extra if count > 1 else 0, count)
            for oc, oepoch, owrite, oacc in history:
                if oc != c and oepoch > clock[c][oc] and (write or owrite) and acc.overlaps(oacc):
                    return idx
            history.append((c, clock[c][c], write, acc))
    return None


@settings(max_examples=300, deadline=None)
@given(st.lists(_step, max_size=30), st.sampled_from([16, 64, 1 << 14]))
def test_detector_agrees_with_brute_force_on_random_streams(steps, page_bytes):
    det = RaceDetector(page_bytes=page_bytes)
    det.on_launch_start(LaunchInfo(ATLAS_A2, 1, CORES3, None, None))
    published = []
    found = None
    for idx, step in enumerate(steps):
        seq = idx + 1
        if step[0] == "set":
            published.append((step[1], seq))
            # Issued on the pipe of the accesses, so that it publishes them (as in the per-core reference).
            det.on_event(CrossCoreSetEvent(seq, CORES3[step[1]], 0, 2, Pipe.MTE2))
        elif step[0] == "wait":
            c = step[1]
            others = [s for owner, s in published if owner != c]
            if others:
                det.on_event(CrossCoreWaitEvent(seq, CORES3[c], 0, (others[step[2] % len(others)],)))
        else:
            c, write, start, length, stride_extra, count = step[1]
            acc = MemAccess("buf", 7, start, length, length + stride_extra if count > 1 else 0, count)
            e = InstructionEvent(seq, CORES3[c], Pipe.MTE2, "Op", gm_reads=() if write else (acc,),
                                 gm_writes=(acc,) if write else ())
            try:
                det.on_event(e)
            except RaceError as err:
                found = idx
                assert err.second.seq == seq and err.first.core != err.second.core
                break
    assert found == _reference(steps)
