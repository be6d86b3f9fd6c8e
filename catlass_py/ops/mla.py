"""``mla``: CATLASS example 19 (multi-head latent attention decode, the generic ``MLAKernel``) as a numpy-in /
numpy-out function on the simulated Atlas A2 AI cores. The kernel is assembled by
:mod:`catlass_py.assemblies.mla`. Bad inputs raise :class:`~catlass_py.errors.ArgumentError` naming the argument
before anything runs; then the memory budget (the inputs' GM copies, O, the workspaces, the tiling array, the
cores' buffers) is checked before any of them is allocated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from catlass_py.arch.budget import Footprint
from catlass_py.arch.memory import GlobalBuffer
from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.mla import assemble
from catlass_py.errors import ArgumentError
from catlass_py.kernel.mla import TMP_SIZE, MLAKernel, MLAParams
from catlass_py.kernel.mla_tiling import TILING_KVCORENUM, get_mla_tiling
from catlass_py.ops.flash_attention_infer import device_copy, device_copy_bytes
from catlass_py.ops.operator import OpOptions, array_op, as_array, op_options
from catlass_py.virtual import virtual_array

if TYPE_CHECKING:
    from catlass_py.analysis.workload import WorkloadReport
    from catlass_py.arch.events import Observer
    from catlass_py.arch.launch import LaunchResult
    from catlass_py.arch.params import LaunchParams
    from catlass_py.ops.operator import ArrayLike, ArrayT, OperatorResult

EMBED = 512
EMBED_ROPE = 64
BLOCK_SIZE = 128
MAX_Q_SEQLEN = 4


@lru_cache(maxsize=8)
def build_kernel(arch: ArchSpec = ATLAS_A2, element: str = "float16"):
    """Example 19's generic kernel (``MLA<Dtype>``), assembled by :mod:`catlass_py.assemblies.mla`."""
    return assemble(arch, element=element)


@dataclass(frozen=True)
class MLAProblem:
    """A checked MLA problem."""

    element: str
    batch: int
    num_tokens: int
    num_heads: int
    num_blocks: int
    q_seqlen: np.ndarray
    kv_seqlen: np.ndarray
    block_table: np.ndarray


def _lengths(name: str, x, batch: int, low: int, high: int | None) -> np.ndarray:
    try:
        arr = np.asarray(x)
    except Exception:  # noqa: BLE001
        raise ArgumentError(f"{name}: expected a 1-D sequence of ints, got {type(x).__name__}") from None
    if arr.ndim != 1 or arr.dtype.kind not in "iu" or arr.shape[0] != batch:
        raise ArgumentError(f"{name}: expected {batch} integer lengths (one per batch), got shape {arr.shape} "
                            f"dtype {arr.dtype}")
    bad = (arr < low) | ((arr > high) if high is not None else False)
    if np.any(bad):
        i = int(np.argmax(bad))
        rng = f"in [{low}, {high}]" if high is not None else f">= {low}"
        raise ArgumentError(f"{name}: every length must be {rng}, got {int(arr[i])} at batch {i}")
    return arr.astype(np.int32)


def validate_inputs(q, q_rope, k, k_rope, block_table, actual_seq_lengths, actual_seq_lengths_kv) -> MLAProblem:
    """Check every input of :func:`mla` (no copy, nothing modified)."""
    q = as_array("q", q, ("float16", "bfloat16"), 3)
    element = str(q.dtype)
    q_rope = as_array("q_rope", q_rope, element, 3)
    k = as_array("k", k, element, 4)
    k_rope = as_array("k_rope", k_rope, element, 4)
    tokens, heads, d = q.shape
    if d != EMBED:
        raise ArgumentError(f"q: expected head dimension {EMBED} (the MLA latent size the kernel is built for), got {d}")
    if q_rope.shape != (tokens, heads, EMBED_ROPE):
        raise ArgumentError(f"q_rope: expected shape {(tokens, heads, EMBED_ROPE)}, got {q_rope.shape}")
    if k.shape[1:] != (BLOCK_SIZE, 1, EMBED):
        raise ArgumentError(f"k: expected a paged cache [num_blocks, {BLOCK_SIZE}, 1, {EMBED}] (one KV head), got {k.shape}")
    if k_rope.shape != (k.shape[0], BLOCK_SIZE, 1, EMBED_ROPE):
        raise ArgumentError(f"k_rope: expected shape {(k.shape[0], BLOCK_SIZE, 1, EMBED_ROPE)}, got {k_rope.shape}")
    if heads == 128:
        raise ArgumentError("q: 128 query heads select CATLASS's TP1 / AMLA specialisations (mla_kernel_tp1_spec.cpp, "
                            "amla_kernel_tp1_spec.cpp), which are not implemented; use another head count")
    if heads > 128:
        raise ArgumentError(f"q: at most 128 query heads (the row tile of the blocks), got {heads}")
    table = as_array("block_table", block_table, "int32", 2)
    batch = table.shape[0]
    if batch == 0:
        raise ArgumentError("block_table: expected at least one batch row")
    q_len = _lengths("actual_seq_lengths", actual_seq_lengths, batch, 1, MAX_Q_SEQLEN)
    kv_len = _lengths("actual_seq_lengths_kv", actual_seq_lengths_kv, batch, 1, None)
    if int(q_len.sum()) != tokens:
        raise ArgumentError(f"actual_seq_lengths: the lengths sum to {int(q_len.sum())} but q has {tokens} tokens")
    max_blocks = -(-int(kv_len.max()) // BLOCK_SIZE)
    if table.shape[1] != max_blocks:
        raise ArgumentError(f"block_table: expected ceil(max(actual_seq_lengths_kv) / 128) = {max_blocks} columns, "
                            f"got {table.shape[1]}")
    used = np.arange(max_blocks)[None, :] < -(-kv_len[:, None] // BLOCK_SIZE)
    bad = used & ((table < 0) | (table >= k.shape[0]))
    if bad.any():
        b, j = (int(x) for x in np.argwhere(bad)[0])
        raise ArgumentError(f"block_table: entry [{b}, {j}] = {int(table[b, j])} points outside the cache's "
                            f"{k.shape[0]} blocks")
    if int(kv_len.sum()) > k.shape[0] * BLOCK_SIZE:
        raise ArgumentError(f"actual_seq_lengths_kv: {int(kv_len.sum())} KV tokens do not fit the cache's "
                            f"{k.shape[0]} blocks of {BLOCK_SIZE}")
    return MLAProblem(element, batch, tokens, heads, k.shape[0], q_len, kv_len, table)


def workspace_sizes(num_tokens: int, num_heads: int, core_num: int, max_split: int, element) -> dict[str, int]:
    """Bytes of the kernel's GM workspaces for ``num_tokens`` query tokens of ``num_heads`` heads on
    ``core_num`` cores, the KV split over at most ``max_split`` cores (the tiling's ``TILING_KVCORENUM``): the
    C++ host's ``aclrtMalloc`` sizes."""
    el = np.dtype(element).itemsize
    rows = EMBED * num_heads * num_tokens
    return {"s": core_num * TMP_SIZE * 4 * 2, "p": core_num * TMP_SIZE * el * 2, "o_tmp": core_num * TMP_SIZE * 4 * 2,
            "o_update": core_num * TMP_SIZE * 4, "o_core_tmp": rows * max_split * 4,
            "l": num_tokens * num_heads * max_split * 4}


def prepare_launch(run: OpOptions, kernel, problem: MLAProblem, q, q_rope, k, k_rope):
    """The tiling for ``run.core_num`` cores, the device-side params (GM tensors over the host arrays,
    workspaces) and the host array O the kernel writes (shape-only on a timing-only launch):
    ``(params, o, tiling)``, after checking the memory budget (``run.reserve``: the inputs' GM copies, the
    tiling array, O, the workspaces, the core buffers of ``kernel``) and before allocating any of it."""
    core_num = run.core_num
    tiling = get_mla_tiling(problem.batch, problem.num_heads, EMBED, EMBED_ROPE, problem.num_blocks, BLOCK_SIZE, 1,
                            problem.q_seqlen, problem.kv_seqlen, core_num)
    max_split = int(tiling[TILING_KVCORENUM])
    el = q.dtype
    inputs = {"q": q, "q_rope": q_rope, "k": k, "k_rope": k_rope, "block_table": problem.block_table,
              "tiling": tiling}
    footprint = Footprint()
    for name, x in inputs.items():
        footprint = footprint.add("gm", f"copy of {name}", device_copy_bytes(x))
    sizes = workspace_sizes(problem.num_tokens, problem.num_heads, core_num, max_split, el)
    if run.numerics:  # a timing-only launch: O shape-only, the workspaces never touched (allocated on first use)
        footprint = footprint.array("gm", "o", q.shape, el)
        for name, nbytes in sizes.items():
            footprint = footprint.add("workspace", name, nbytes)
    run.reserve(footprint, "mla", kernel)
    o = np.zeros(q.shape, dtype=el) if run.numerics else virtual_array(q.shape, el)
    g = {name: device_copy(x, name) for name, x in inputs.items()}
    params = MLAParams(
        g["q"], g["q_rope"], g["k"], g["k_rope"], g["block_table"], GlobalBuffer.from_array(o, "o").tensor(el),
        GlobalBuffer.empty(sizes["s"], "s").tensor("float32"),
        GlobalBuffer.empty(sizes["p"], "p").tensor(el),
        GlobalBuffer.empty(sizes["o_tmp"], "o_tmp").tensor("float32"),
        GlobalBuffer.empty(sizes["o_update"], "o_update").tensor("float32"),
        GlobalBuffer.empty(sizes["o_core_tmp"], "o_core_tmp").tensor("float32"),
        GlobalBuffer.empty(sizes["l"], "l").tensor("float32"),
        g["tiling"])
    return params, o, tiling


def launch_mla(kernel, problem: MLAProblem, q, q_rope, k, k_rope, *, core_num: int, seed=None, observers=(), options=None):
    """Run ``kernel`` on a checked ``problem`` (:func:`validate_inputs`); return ``(o, LaunchResult, tiling)``."""
    run = op_options(core_num=core_num, arch=kernel.arch, seed=seed, observers=observers, options=options,
                     return_launch=True)
    params, o, tiling = prepare_launch(run, kernel, problem, q, q_rope, k, k_rope)
    o, result = run.run_kernel(kernel, params, o)
    return o, result, tiling


@overload
def mla(q: ArrayT, q_rope: ArrayLike, k: ArrayLike, k_rope: ArrayLike, block_table: ArrayLike, *,
        actual_seq_lengths: ArrayLike | Sequence[int], actual_seq_lengths_kv: ArrayLike | Sequence[int],
        core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ..., return_report: Literal[False] = ...,
        observers: Sequence[Observer] = ..., options: LaunchParams | None = ..., kernel: Any = ...,
        return_launch: Literal[False] = ...) -> ArrayT: ...


@overload
def mla(q: ArrayT, q_rope: ArrayLike, k: ArrayLike, k_rope: ArrayLike, block_table: ArrayLike, *,
        actual_seq_lengths: ArrayLike | Sequence[int], actual_seq_lengths_kv: ArrayLike | Sequence[int],
        core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ..., return_report: Literal[True],
        observers: Sequence[Observer] = ..., options: LaunchParams | None = ..., kernel: Any = ...,
        return_launch: Literal[False] = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def mla(q: ArrayT, q_rope: ArrayLike, k: ArrayLike, k_rope: ArrayLike, block_table: ArrayLike, *,
        actual_seq_lengths: ArrayLike | Sequence[int], actual_seq_lengths_kv: ArrayLike | Sequence[int],
        core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ..., return_report: Literal[False] = ...,
        observers: Sequence[Observer] = ..., options: LaunchParams | None = ..., kernel: Any = ...,
        return_launch: Literal[True]) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def mla(q: ArrayT, q_rope: ArrayLike, k: ArrayLike, k_rope: ArrayLike, block_table: ArrayLike, *,
        actual_seq_lengths: ArrayLike | Sequence[int], actual_seq_lengths_kv: ArrayLike | Sequence[int],
        core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ..., return_report: Literal[True],
        observers: Sequence[Observer] = ..., options: LaunchParams | None = ..., kernel: Any = ...,
        return_launch: Literal[True]) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def mla(q: ArrayT, q_rope: ArrayLike, k: ArrayLike, k_rope: ArrayLike, block_table: ArrayLike, *,
        actual_seq_lengths: ArrayLike | Sequence[int], actual_seq_lengths_kv: ArrayLike | Sequence[int],
        core_num: int = ..., seed: int | None = ..., arch: ArchSpec | str = ..., return_report: bool = ...,
        observers: Sequence[Observer] = ..., options: LaunchParams | None = ..., kernel: Any = ...,
        return_launch: bool = ...) -> OperatorResult[ArrayT]: ...


@array_op(keywords=("actual_seq_lengths", "actual_seq_lengths_kv"))
def mla(q, q_rope, k, k_rope, block_table, *, actual_seq_lengths, actual_seq_lengths_kv, core_num: int = 24,
        seed: int | None = None, arch: ArchSpec | str = ATLAS_A2, return_report: bool = False, observers=(),
        options=None, kernel=None, return_launch: bool = False):
    """CATLASS example 19 (``MLAKernel``) on simulated AI cores: multi-head latent attention decode,
    ``O = softmax([Q, Q_rope] [K, K_rope]^T / sqrt(576)) K`` per batch and query head, K / K_rope read from a
    paged cache through ``block_table``.

    ``q`` fp16/bf16 ``[num_tokens, num_heads, 512]`` (batches back to back, ``actual_seq_lengths`` tokens each,
    1 to 4), ``q_rope`` ``[num_tokens, num_heads, 64]``, ``k`` ``[num_blocks, 128, 1, 512]`` (also V),
    ``k_rope`` ``[num_blocks, 128, 1, 64]``, ``block_table`` int32 ``[batch, ceil(max_kv / 128)]``,
    ``actual_seq_lengths_kv`` the KV lengths. ``num_heads`` up to 127 (128 heads select CATLASS's TP1/AMLA
    kernels, not implemented). Long decode sequences are split over cores and combined by flash decoding, as
    the tiling decides. Returns O ``[num_tokens, num_heads, 512]`` in q's dtype; the launch keywords and the
    extra return values (``return_report``, ``return_launch``) are those of :mod:`catlass_py.ops.operator`.
    Inputs are never modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    problem = validate_inputs(q, q_rope, k, k_rope, block_table, actual_seq_lengths, actual_seq_lengths_kv)
    if kernel is None:
        kernel = build_kernel(run.arch, problem.element)
    elif not isinstance(kernel, MLAKernel) or str(kernel.element) != problem.element:
        raise ArgumentError(f"kernel: expected an MLAKernel assembled for {problem.element} (the inputs), got {kernel!r}")
    params, o, _ = prepare_launch(run, kernel, problem, q, q_rope, k, k_rope)
    return run.run_kernel(kernel, params, o)


__all__ = ["MLAProblem", "build_kernel", "launch_mla", "mla", "prepare_launch", "validate_inputs", "workspace_sizes"]
