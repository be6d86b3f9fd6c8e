"""All switches of a simulated launch in one frozen object (in the spirit of Pallas ``InterpretParams``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LaunchParams:
    """Options of :func:`catlass_py.arch.launch`. Every field has a safe default."""

    seed: int | None = None
    """Interleaving seed. ``None``: the next core to run is the next runnable one after the current core
    in the fixed order AIC0, AIV0.0, AIV0.1, AIC1, ... . An int: it is drawn at random (reproducibly)
    among the runnable cores. Either way the same seed gives the same interleaving, trace and output."""

    preempt_on_set: bool = False
    """Also switch cores right after every cross-core flag set (not only when a core blocks or ends).
    Explores far more interleavings under a seed; used by adversarial scheduling."""

    poison: int = 0xFF
    """Byte value local buffers hold at launch. 0xFF reads as NaN in every float format and -1 in every
    signed int format, so data nobody wrote is conspicuous."""

    check_intra_core_flags: bool = True
    """Raise :class:`DeadlockError` when ``wait_flag`` finds no matching ``set_flag`` (the pipe would wait
    forever on hardware). Intra-core flags move no data, so this is the only functional check they get."""

    blas_threads: int | None = 1
    """BLAS threads while the cores run. Each simulated Mmad is a small matrix product (at most 128 x 256 x
    128 in the examples), for which one thread is fastest: idle BLAS worker threads spin and compete with
    the simulation (measured: ~25% faster on example 10, far more on a loaded machine). The count also fixes
    how BLAS sums a float product: float kernels give the same bits under the same count, from any thread.
    ``None`` leaves the process setting alone (a float product may then round differently). An example's
    golden (:class:`catlass_py.runner.ExampleRun`) runs under the same limit: its products are as small as the
    groups they cover. Needs ``threadpoolctl`` (a dependency); restored when the launch (or the golden) ends."""

    detect_races: bool = False
    """Check every pair of accesses to the same memory (GM, on-chip buffers, registers), from two cores or two
    pipes of one core, for a happens-before order (:mod:`catlass_py.arch.pipe_order`) and raise
    :class:`RaceError` at the first unordered pair that touches the same bytes with at least one write
    (:class:`catlass_py.arch.hazards.RaceDetector`)."""

    record_sync_sites: bool = False
    """List every synchronisation call site the launch ran in ``LaunchResult.sync_sites``
    (:mod:`catlass_py.arch.mutation`)."""

    mutation: Any = None
    """A :class:`~catlass_py.arch.mutation.Mutation` applied to the synchronisation calls of its sites (mutation
    testing of the checks; delayed waits need instruction events, e.g. ``detect_races=True``)."""

    numerics: bool = True
    """Do the numbers. ``False`` runs a timing-only launch: every core runs its control flow, synchronisation and
    instruction stream exactly as in a full run (the same events, access declarations, bounds and capacity
    checks, so the same cost-model prediction), but the tile operations skip their data work (the arrays they
    would compute or copy), local buffers are never allocated and GM operands may be shape-only
    (:meth:`~catlass_py.arch.memory.GlobalBuffer.virtual`). Scalar reads that steer control flow
    (``GetValue`` of a group list) still read real GM. Outputs are left untouched. For shapes too large to
    simulate numerically (``catlass-py run --predict-only``)."""

    allow_unpaired_flags: bool = False
    """Accept flag sets no wait consumed by the end of the launch (listed in ``LaunchResult``) instead of
    raising :class:`UnpairedFlagError`."""

    memory_limit: int | str | None = None
    """Bytes an operator or example run may allocate on the host (inputs it creates, GM buffers, workspace,
    core buffers, golden), checked before it allocates anything (:mod:`catlass_py.arch.budget`): a byte count, or
    text as ``CATLASS_PY_MEMORY_LIMIT`` takes it (``'8G'``, ``'50%'`` of the memory available at the check,
    ``'off'``). ``None``: ``CATLASS_PY_MEMORY_LIMIT`` or a fraction of the available memory."""

    def __post_init__(self):
        from catlass_py.errors import ArgumentError
        from catlass_py.integers import as_int, is_int

        # numpy integers are accepted and kept as Python ints (a frozen dataclass: set through object)
        for name in ("seed", "blas_threads", "poison", "memory_limit"):
            if not isinstance(getattr(self, name), str):
                object.__setattr__(self, name, as_int(getattr(self, name)))
        if self.seed is not None and not is_int(self.seed):
            raise ArgumentError(f"seed: expected None or an int, got {self.seed!r}")
        if self.blas_threads is not None and (not is_int(self.blas_threads) or self.blas_threads < 1):
            raise ArgumentError(f"blas_threads: expected None or an int >= 1, got {self.blas_threads!r}")
        if not is_int(self.poison) or not 0 <= self.poison <= 255:
            raise ArgumentError(f"poison: expected a byte value 0..255, got {self.poison!r}")
        if isinstance(self.memory_limit, str):
            from catlass_py.arch.budget import check_limit_text

            check_limit_text(self.memory_limit, "memory_limit")
        elif self.memory_limit is not None and (not is_int(self.memory_limit) or self.memory_limit < 1):
            raise ArgumentError(f"memory_limit: expected None, a byte count >= 1 or text such as '8G', '50%' or "
                                f"'off', got {self.memory_limit!r}")
        if not isinstance(self.numerics, bool):
            raise ArgumentError(f"numerics: expected True or False, got {self.numerics!r}")
