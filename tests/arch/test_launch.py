"""The launcher: demonstration kernel, determinism, deadlock detection, errors named by core."""

import time

import numpy as np
import pytest

from catlass_py.arch import (
    CrossCoreFlag,
    CrossCoreWaitEvent,
    GlobalBuffer,
    HardEvent,
    InstructionEvent,
    LaunchParams,
    Observer,
    Pipe,
    launch,
)
from catlass_py.errors import (
    ArgumentError,
    DeadlockError,
    FlagOverflowError,
    KernelError,
    OutOfBoundsError,
    UnpairedFlagError,
)

TILE = 64
STORED = CrossCoreFlag(0)


class Handoff:
    """AIC writes a tile of GM and sets a mode-2 flag; each AIV waits, reads it and writes its half x2."""

    def __init__(self, wait=True, flag_to_wait=STORED):
        self.wait = wait
        self.flag_to_wait = flag_to_wait

    def aic(self, ctx, p):
        l0c = ctx.resource.l0c_buf.get_buffer_by_byte("int32", 0, TILE)
        l0c.view()[:] = np.arange(TILE, dtype=np.int32) + 1000 * ctx.block_idx
        p["tile"][ctx.block_idx * TILE].view(TILE, write=True)[:] = l0c.view()
        ctx.emit(Pipe.FIX, "demo_store")
        ctx.cross_core_set_flag(STORED, 2, Pipe.FIX)

    def aiv(self, ctx, p):
        if self.wait:
            ctx.cross_core_wait_flag(self.flag_to_wait)
        half = TILE // 2
        src = p["tile"][ctx.ai_core_idx * TILE + ctx.sub_block_idx * half].view(half)
        ub = ctx.resource.ub_buf.get_buffer_by_byte("int32", 0, half)
        ub.view()[:] = src * 2
        p["out"][ctx.ai_core_idx * TILE + ctx.sub_block_idx * half].view(half, write=True)[:] = ub.view()


def _run(kernel, block_dim=3, **kw):
    tile = GlobalBuffer.empty(block_dim * TILE * 4, "tile", fill=0).tensor("int32")
    out = GlobalBuffer.empty(block_dim * TILE * 4, "out", fill=0).tensor("int32")
    result = launch(kernel, {"tile": tile, "out": out}, block_dim, **kw)
    return out.view().copy(), result


def test_demo_kernel_hands_tiles_from_aic_to_aivs():
    out, result = _run(Handoff(), block_dim=3)
    expect = np.concatenate([(np.arange(TILE) + 1000 * b) * 2 for b in range(3)])
    np.testing.assert_array_equal(out, expect)
    assert result.unconsumed_flags == []
    assert len(result.cores) == 9


def test_same_seed_same_interleaving_and_seeds_vary_it():
    runs = [_run(Handoff(), seed=s)[1].schedule for s in (None, None, 7, 7)]
    assert runs[0] == runs[1]
    assert runs[2] == runs[3]
    schedules = {tuple(_run(Handoff(), seed=s)[1].schedule) for s in range(8)}
    assert len(schedules) > 1


def test_kernel_without_its_wait_is_still_deterministic_when_unpaired_flags_are_allowed():
    allow = LaunchParams(allow_unpaired_flags=True, seed=3)
    outs = [_run(Handoff(wait=False), options=allow)[0] for _ in range(3)]
    for o in outs[1:]:
        np.testing.assert_array_equal(o, outs[0])
    _, result = _run(Handoff(wait=False), options=LaunchParams(allow_unpaired_flags=True))
    assert sorted((c.short, fid, n) for c, fid, n in result.unconsumed_flags) == [
        (f"AIV{b}.{s}", 0, 1) for b in range(3) for s in range(2)]


def test_unconsumed_sets_at_the_end_of_a_launch_are_an_error_listing_them():
    # The AIC's sets nobody waited for would corrupt the next operator on hardware.
    with pytest.raises(UnpairedFlagError) as info:
        _run(Handoff(wait=False))
    msg = str(info.value)
    assert msg.startswith("6 flag(s) were set but never waited for")
    assert "AIV 5 (AI core 2, sub-block 1): 1 unconsumed set(s) of cross-core flag 0" in msg
    assert len(info.value.cross_core) == 6 and info.value.intra_core == []


def test_an_unconsumed_intra_core_set_is_an_error_too():
    class Leaky:
        def aic(self, ctx, p):
            ctx.set_flag(HardEvent.MTE2_MTE1, 3)

    with pytest.raises(UnpairedFlagError, match=r"AIC 0: 1 unconsumed SetFlag<MTE2_MTE1>\(3\)"):
        launch(Leaky(), None, 1)
    result = launch(Leaky(), None, 1, options=LaunchParams(allow_unpaired_flags=True))
    assert [(c.short, ev, eid, n) for c, ev, eid, n in result.unconsumed_intra_core_flags] == [
        ("AIC0", HardEvent.MTE2_MTE1, 3, 1)]


def test_wait_that_is_never_satisfied_raises_deadlock_fast_naming_the_cores():
    t0 = time.perf_counter()
    with pytest.raises(DeadlockError) as info:
        _run(Handoff(flag_to_wait=CrossCoreFlag(5)), block_dim=2)
    assert time.perf_counter() - t0 < 1.0
    msg = str(info.value)
    for name in ("AIV 0 (AI core 0, sub-block 0)", "AIV 1", "AIV 2", "AIV 3 (AI core 1, sub-block 1)"):
        assert name in msg
    assert "flag 5" in msg and "counter 0" in msg
    assert [b[1] for b in info.value.blocked] == [5, 5, 5, 5]


def test_exception_in_a_core_names_it():
    class Bad:
        def aic(self, ctx, p):
            if ctx.block_idx == 1:
                p["tile"][10_000].view(1)

        aiv = None

    with pytest.raises(OutOfBoundsError, match="^AIC 1: "):
        _run(Bad(), block_dim=2)

    class Buggy:
        aic = None

        def aiv(self, ctx, p):
            if ctx.block_idx == 3:
                raise ZeroDivisionError("boom")

    with pytest.raises(KernelError, match=r"AIV 3 \(AI core 1, sub-block 1\) raised ZeroDivisionError: boom"):
        _run(Buggy(), block_dim=2)


def test_flag_overflow_inside_a_launch():
    class Flood:
        def aic(self, ctx, p):
            for _ in range(16):
                ctx.cross_core_set_flag(1, 2, Pipe.FIX)

        def aiv(self, ctx, p):
            pass

    with pytest.raises(FlagOverflowError, match="AIC 0"):
        _run(Flood(), block_dim=1)


def test_intra_core_wait_without_set_is_reported():
    class Unpaired:
        def aic(self, ctx, p):
            ctx.set_flag(HardEvent.MTE2_MTE1, 0)
            ctx.wait_flag(HardEvent.MTE2_MTE1, 0)
            ctx.wait_flag(HardEvent.M_FIX, 1)

        aiv = None

    with pytest.raises(DeadlockError, match="WaitFlag<M_FIX>\\(1\\)"):
        _run(Unpaired(), block_dim=1)
    _run(Unpaired(), block_dim=1, options=LaunchParams(check_intra_core_flags=False))


def test_barrier_modes():
    class Barrier:
        def aic(self, ctx, p):
            ctx.cross_core_barrier(0)

        def aiv(self, ctx, p):
            ctx.cross_core_barrier(1)
            ctx.cross_core_barrier(0)

    _, result = _run(Barrier(), block_dim=3)
    assert result.unconsumed_flags == []


def test_observers_see_instructions_and_wait_sources():
    class Recorder(Observer):
        def __init__(self):
            self.events = []
            self.ended = None

        def on_event(self, e):
            self.events.append(e)

        def on_launch_end(self, info, error):
            self.ended = (len(info.cores), error)

    rec = Recorder()
    _run(Handoff(), block_dim=1, observers=[rec])
    stores = [e for e in rec.events if isinstance(e, InstructionEvent)]
    waits = [e for e in rec.events if isinstance(e, CrossCoreWaitEvent)]
    assert [e.op for e in stores] == ["demo_store"]
    assert len(waits) == 2 and all(len(w.sources) == 1 for w in waits)
    assert rec.ended == (3, None)
    seqs = [e.seq for e in rec.events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


def test_an_observer_is_handed_only_the_kinds_of_events_it_is_interested_in():
    class Recorder(Observer):
        def __init__(self, interests):
            self.interests = interests
            self.kinds = set()

        def on_event(self, e):
            self.kinds.add(type(e).__name__)

    everything, cross = Recorder(None), Recorder(frozenset({"cross_core"}))
    _run(Handoff(), block_dim=1, observers=[everything, cross])  # the first one has every event built
    assert {"InstructionEvent", "CoreStartEvent", "CrossCoreSetEvent", "CrossCoreWaitEvent"} <= everything.kinds
    assert cross.kinds == {"CrossCoreSetEvent", "CrossCoreWaitEvent"}


def test_bad_launch_arguments():
    with pytest.raises(ArgumentError, match="block_dim"):
        _run(Handoff(), block_dim=25)
    with pytest.raises(ArgumentError, match="block_dim"):
        _run(Handoff(), block_dim=0)
    with pytest.raises(ArgumentError, match="neither"):
        launch(object(), None, 1)
    with pytest.raises(ArgumentError, match="seed"):
        LaunchParams(seed="x")


def test_blas_threads_are_limited_during_the_launch_and_restored_after():
    from threadpoolctl import threadpool_info

    def blas_threads():
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    before = blas_threads()
    seen = []

    class Probe:
        def aic(self, ctx, p):
            seen.append(blas_threads())

        aiv = None

    launch(Probe(), None, 1)
    assert all(n == 1 for n in seen[0])
    assert blas_threads() == before
    seen.clear()
    launch(Probe(), None, 1, options=LaunchParams(blas_threads=None))
    assert seen[0] == before
    with pytest.raises(ArgumentError, match="blas_threads"):
        LaunchParams(blas_threads=0)


def test_a_launch_from_another_thread_limits_blas_too_and_a_float_kernel_gives_the_same_bits():
    # OpenBLAS 0.3.27 on keeps a thread count per thread beside the global one; a worker thread's own count won
    # over the launch's limit, and an fp16 matmul rounded 13 of 65536 outputs differently from the main thread's.
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_info

    from catlass_py import ops

    seen = []

    class Probe:
        def aic(self, ctx, p):
            seen.append([i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"])

        aiv = None

    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 512)).astype(np.float16)
    b = rng.standard_normal((512, 256)).astype(np.float16)
    here = ops.basic_matmul(a, b, core_num=4)
    with ThreadPoolExecutor(1) as pool:
        there = pool.submit(ops.basic_matmul, a, b, core_num=4).result()
        pool.submit(launch, Probe(), None, 1).result()
    assert np.array_equal(here.view(np.uint16), there.view(np.uint16))
    assert seen and all(n == 1 for n in seen[0])


def test_an_examples_golden_runs_under_the_launchs_blas_limit():
    from threadpoolctl import threadpool_info, threadpool_limits

    from catlass_py.arch import ATLAS_A2
    from catlass_py.runner import ExampleRun

    def blas_threads():
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    with threadpool_limits(2, user_api="blas"):  # a process setting the limit must differ from
        before = blas_threads()
        assert before and all(n == 2 for n in before)
        for options, want in ((None, [1] * len(before)), (LaunchParams(blas_threads=None), before)):
            ex = ExampleRun("probe", ATLAS_A2, 1, options=options)
            with ex.phase("golden"):
                assert blas_threads() == want
            with ex.phase("host inputs"):
                assert blas_threads() == before
            assert blas_threads() == before and set(ex.timings) == {"golden", "host_inputs"}
