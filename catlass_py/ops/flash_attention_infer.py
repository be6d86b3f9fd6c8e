"""``flash_attention_infer``: CATLASS example 23 (``FAInferKernel``) as a numpy-in / numpy-out function.

The kernel is assembled by :mod:`catlass_py.assemblies.flash_attention_infer` and runs on the simulated Atlas A2
AI cores. Inputs are checked before anything runs; a bad one is an :class:`~catlass_py.errors.ArgumentError`
naming the argument. Then the memory budget: the GM copies of the inputs, O, the four workspaces of the tiling
and the cores' buffers are checked (:meth:`~catlass_py.ops.operator.OpOptions.reserve`) before any of them is
allocated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from catlass_py.arch.budget import Footprint
from catlass_py.arch.memory import GlobalBuffer
from catlass_py.arch.spec import ATLAS_A2, ArchSpec
from catlass_py.assemblies.flash_attention_infer import assemble
from catlass_py.errors import ArgumentError
from catlass_py.kernel.fa_infer import FAInferKernel, FAInferParams, get_fa_tiling_param
from catlass_py.ops.operator import OpOptions, array_op, as_array, check_flag, op_options
from catlass_py.virtual import is_virtual, virtual_array

if TYPE_CHECKING:
    from catlass_py.analysis.workload import WorkloadReport
    from catlass_py.arch.events import Observer
    from catlass_py.arch.launch import LaunchResult
    from catlass_py.arch.params import LaunchParams
    from catlass_py.ops.operator import ArrayLike, ArrayT, OperatorResult

PAGED_BLOCK_SIZE = 128
MASK_SIDE = 1024
MAX_HEAD_DIM = 128


@lru_cache(maxsize=16)
def build_kernel(arch: ArchSpec = ATLAS_A2, element: str = "float16", *, paged_cache: bool = True,
                 enable_unit_flag: bool = False):
    """Example 23's kernel (``FAInferKernel`` with the QK/PV blocks and their tail variants on 128 x 128 x 128
    tiles, online softmax and rescale epilogues), assembled by :mod:`catlass_py.assemblies.flash_attention_infer`."""
    return assemble(arch, element=element, paged_cache=paged_cache, enable_unit_flag=enable_unit_flag)


@dataclass(frozen=True)
class FAProblem:
    """A checked flash-attention problem: the sizes the kernel's tiling needs."""

    element: str
    batch: int
    num_tokens: int
    num_heads: int
    kv_heads: int
    head_dim: int
    paged: bool
    num_blocks: int
    q_seqlen: np.ndarray
    kv_seqlen: np.ndarray
    block_table: np.ndarray | None
    mask: np.ndarray | None


def _lengths(name: str, x, batch: int | None) -> np.ndarray:
    if not isinstance(x, np.ndarray):
        try:
            x = np.asarray(x)
        except Exception:  # noqa: BLE001 - anything that is not a sequence of ints
            raise ArgumentError(f"{name}: expected a 1-D sequence of ints, got {type(x).__name__}") from None
    if x.ndim != 1 or x.dtype.kind not in "iu":
        raise ArgumentError(f"{name}: expected a 1-D array of ints, got dtype {x.dtype} and shape {x.shape}")
    if batch is not None and x.shape[0] != batch:
        raise ArgumentError(f"{name}: expected {batch} lengths (one per batch), got {x.shape[0]}")
    if x.size == 0:
        raise ArgumentError(f"{name}: expected at least one batch")
    if (x < 1).any():
        i = int(np.argmin(x))
        raise ArgumentError(f"{name}: every length must be >= 1 (the kernel divides by it), got {int(x[i])} at index {i}")
    return x.astype(np.int64)


def validate_inputs(q, k, v, *, actual_seq_lengths=None, actual_seq_lengths_kv=None, block_table=None, mask=None,
                    num_heads=None, num_kv_heads=None, scale=None) -> FAProblem:
    """Check every input of :func:`flash_attention_infer` (no copy, nothing modified); return the problem."""
    q = as_array("q", q, ("float16", "bfloat16"), 3)
    element = str(q.dtype)
    if not isinstance(k, np.ndarray) or k.ndim not in (3, 4):
        shape = getattr(k, "shape", None)
        raise ArgumentError(f"k: expected a 4-D paged cache [num_blocks, 128, kv_heads, head_dim] or a 3-D "
                            f"[num_kv_tokens, kv_heads, head_dim] array, got {type(k).__name__} of shape {shape}")
    k = as_array("k", k, element, k.ndim)
    v = as_array("v", v, element, k.ndim)
    if v.shape != k.shape:
        raise ArgumentError(f"v: expected the shape of k {k.shape}, got {v.shape}")
    num_tokens, heads, d = q.shape
    kv_heads, dk = k.shape[-2], k.shape[-1]
    if dk != d:
        raise ArgumentError(f"k: head_dim {dk} differs from q's head_dim {d}")
    if d > MAX_HEAD_DIM or d % 16 or d == 0:
        raise ArgumentError(f"q: head_dim must be a multiple of 16 in 16..{MAX_HEAD_DIM} (the blocks keep one "
                            f"128-wide head-dimension tile in L0), got {d}")
    if num_heads is not None and num_heads != heads:
        raise ArgumentError(f"num_heads: {num_heads} does not match q's {heads} heads")
    if num_kv_heads is not None and num_kv_heads != kv_heads:
        raise ArgumentError(f"num_kv_heads: {num_kv_heads} does not match k's {kv_heads} KV heads")
    if kv_heads < 1 or heads % kv_heads:
        raise ArgumentError(f"num_kv_heads: the {heads} query heads must be a multiple of the {kv_heads} KV heads (GQA)")
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, (int, float, np.floating))
                              or not np.isfinite(scale)):
        raise ArgumentError(f"scale: expected a finite float, got {scale!r}")
    q_len = (_lengths("actual_seq_lengths", actual_seq_lengths, None) if actual_seq_lengths is not None
             else np.asarray([num_tokens], np.int64))
    batch = q_len.shape[0]
    if int(q_len.sum()) != num_tokens:
        raise ArgumentError(f"actual_seq_lengths: the lengths sum to {int(q_len.sum())} but q has {num_tokens} tokens")
    paged = k.ndim == 4
    if paged:
        if k.shape[1] != PAGED_BLOCK_SIZE:
            raise ArgumentError(f"k: the paged cache's block size must be {PAGED_BLOCK_SIZE} (FAInferTiling), got {k.shape[1]}")
        if block_table is None:
            raise ArgumentError("block_table: required with a paged (4-D) KV cache")
        table = as_array("block_table", block_table, "int32", 2)
        if table.shape[0] != batch:
            raise ArgumentError(f"block_table: expected one row per batch ({batch}), got {table.shape[0]} rows")
        if actual_seq_lengths_kv is None:
            raise ArgumentError("actual_seq_lengths_kv: required with a paged KV cache")
        kv_len = _lengths("actual_seq_lengths_kv", actual_seq_lengths_kv, batch)
        cap = table.shape[1] * PAGED_BLOCK_SIZE
        if (kv_len > cap).any():
            i = int(np.argmax(kv_len > cap))
            raise ArgumentError(f"actual_seq_lengths_kv: batch {i} has {int(kv_len[i])} KV tokens but its block table "
                                f"row holds {table.shape[1]} blocks of {PAGED_BLOCK_SIZE} ({cap} tokens)")
        max_blocks = -(-int(kv_len.max()) // PAGED_BLOCK_SIZE)
        if table.shape[1] != max_blocks:
            raise ArgumentError(f"block_table: expected ceil(max(actual_seq_lengths_kv) / 128) = {max_blocks} columns "
                                f"(the kernel strides rows by maxNumBlocksPerBatch), got {table.shape[1]}")
        used = np.arange(max_blocks)[None, :] < -(-kv_len[:, None] // PAGED_BLOCK_SIZE)
        bad = used & ((table < 0) | (table >= k.shape[0]))
        if bad.any():
            b, j = (int(x) for x in np.argwhere(bad)[0])
            raise ArgumentError(f"block_table: entry [{b}, {j}] = {int(table[b, j])} points outside the cache's "
                                f"{k.shape[0]} blocks")
        num_blocks = k.shape[0]
    else:
        if block_table is not None:
            raise ArgumentError("block_table: only a paged (4-D) KV cache takes a block table")
        table = None
        kv_len = (q_len.copy() if actual_seq_lengths_kv is None
                  else _lengths("actual_seq_lengths_kv", actual_seq_lengths_kv, batch))
        if int(kv_len.sum()) != k.shape[0]:
            raise ArgumentError(f"actual_seq_lengths_kv: the lengths sum to {int(kv_len.sum())} but the contiguous KV "
                                f"cache holds {k.shape[0]} tokens")
        num_blocks = batch * -(-int(kv_len.max()) // PAGED_BLOCK_SIZE)
    mask_arr = None
    if mask is not None:
        if isinstance(mask, str):
            if mask != "causal":
                raise ArgumentError(f"mask: expected None, 'causal' or a ({MASK_SIDE}, {MASK_SIDE}) array, got {mask!r}")
            mask_arr = np.triu(np.ones((MASK_SIDE, MASK_SIDE)), 1).astype(q.dtype)
        else:
            mask_arr = as_array("mask", mask, element, 2)
            if mask_arr.shape != (MASK_SIDE, MASK_SIDE):
                raise ArgumentError(f"mask: the kernel reads the mask with a row stride of {MASK_SIDE}; expected shape "
                                    f"({MASK_SIDE}, {MASK_SIDE}), got {mask_arr.shape}")
        if not paged:
            raise ArgumentError("mask: needs the paged KV cache; CATLASS's FAI blocks ignore the masked stack's start "
                                "offset (maskTailS) with a contiguous cache (getKVOffset), which gives wrong results "
                                "whenever a masked stack starts inside a 128-token KV block")
        longer = q_len > kv_len
        if longer.any():
            i = int(np.argmax(longer))
            raise ArgumentError(f"actual_seq_lengths: with a mask every query length must be <= its KV length; batch "
                                f"{i} has {int(q_len[i])} > {int(kv_len[i])}")
    return FAProblem(element, batch, num_tokens, heads, kv_heads, d, paged, num_blocks, q_len, kv_len, table, mask_arr)


def device_copy_bytes(host: np.ndarray) -> int:
    """Bytes :func:`device_copy` allocates for ``host``: its byte size rounded up to 32, and 32 more (0 for a
    shape-only ``host``)."""
    if is_virtual(host):
        return 0
    return -(-int(host.size) * host.dtype.itemsize // 32) * 32 + 32


def device_copy(host: np.ndarray, name: str):
    """A read-only GM buffer for a host input, sized as ``aclrtMalloc`` allocates: the byte size rounded up to
    32 and 32 more (the kernel reads one block-table entry past the last row's end; that value is never used).
    The padding reads as 0xFF. A shape-only ``host`` (a timing-only run) gives a shape-only buffer of that size."""
    nbytes = int(host.size) * host.dtype.itemsize
    size = -(-nbytes // 32) * 32 + 32
    if is_virtual(host):
        return GlobalBuffer.virtual(size, name, read_only=True).tensor(host.dtype)
    raw = np.ascontiguousarray(host).reshape(-1).view(np.uint8)
    padded = np.full(size, 0xFF, np.uint8)
    padded[:raw.size] = raw
    buf = GlobalBuffer.from_array(padded, name, read_only=True)
    return buf.tensor(host.dtype)


def prepare_launch(run: OpOptions, kernel, problem: FAProblem, q, k, v, scale=None) -> tuple[FAInferParams, np.ndarray]:
    """The device-side params of ``problem`` (GM tensors over the host arrays, workspaces, the tiling for
    ``run.core_num`` cores) and the host array O the kernel writes (shape-only on a timing-only launch), after
    checking the memory budget (``run.reserve``: the inputs' GM copies, O, the workspaces, the core buffers of
    ``kernel``) and before allocating any of it."""
    tiling = get_fa_tiling_param(problem.batch, problem.num_heads, problem.kv_heads, problem.head_dim,
                                 problem.num_blocks, PAGED_BLOCK_SIZE, 1 if problem.mask is not None else 0,
                                 problem.q_seqlen, problem.kv_seqlen, run.core_num)
    if scale is not None:
        tiling = replace(tiling, scale_value=float(np.float32(scale)))
    inputs = {"q": q, "k": k, "v": v, "actual_qseqlen": problem.q_seqlen, "actual_kvseqlen": problem.kv_seqlen,
              "mask": problem.mask, "block_table": problem.block_table}
    footprint = Footprint()
    for name, x in inputs.items():
        if x is not None:
            footprint = footprint.add("gm", f"copy of {name}", device_copy_bytes(x))
    if run.numerics:  # a timing-only launch: O shape-only, the workspaces never touched (allocated on first use)
        footprint = footprint.array("gm", "o", q.shape, q.dtype)
        for name, nbytes in FAInferKernel.workspace_sizes(tiling).items():
            footprint = footprint.add("workspace", name, nbytes)
    run.reserve(footprint, "flash_attention_infer", kernel)
    o = np.zeros(q.shape, dtype=q.dtype) if run.numerics else virtual_array(q.shape, q.dtype)
    g = {name: None if x is None else device_copy(x, name) for name, x in inputs.items()}
    el = q.dtype
    params = FAInferParams(
        g["q"], g["k"], g["v"], g["mask"], g["block_table"], g["actual_qseqlen"], g["actual_kvseqlen"],
        GlobalBuffer.from_array(o, "o").tensor(el),
        GlobalBuffer.empty(tiling.mm1_out_size, "s").tensor("float32"),
        GlobalBuffer.empty(tiling.sm_online_out_size, "p").tensor(el),
        GlobalBuffer.empty(tiling.mm2_out_size, "o_temp").tensor("float32"),
        GlobalBuffer.empty(tiling.update_size, "o_update").tensor("float32"),
        tiling)
    return params, o


def launch_flash_attention(kernel, problem: FAProblem, q, k, v, *, core_num: int, scale=None, seed=None,
                           observers=(), options=None):
    """Run ``kernel`` on a checked ``problem`` (:func:`validate_inputs`); return ``(o, LaunchResult)``."""
    run = op_options(core_num=core_num, arch=kernel.arch, seed=seed, observers=observers, options=options,
                     return_launch=True)
    params, o = prepare_launch(run, kernel, problem, q, k, v, scale)
    return run.run_kernel(kernel, params, o)


@overload
def flash_attention_infer(q: ArrayT, k: ArrayLike, v: ArrayLike, *,
                          actual_seq_lengths: ArrayLike | Sequence[int] | None = ...,
                          actual_seq_lengths_kv: ArrayLike | Sequence[int] | None = ...,
                          block_table: ArrayLike | None = ..., mask: ArrayLike | str | None = ...,
                          num_heads: int | None = ..., num_kv_heads: int | None = ..., scale: float | None = ...,
                          enable_unit_flag: bool = ..., core_num: int = ..., seed: int | None = ...,
                          arch: ArchSpec | str = ..., return_report: Literal[False] = ...,
                          observers: Sequence[Observer] = ..., options: LaunchParams | None = ..., kernel: Any = ...,
                          return_launch: Literal[False] = ...) -> ArrayT: ...


@overload
def flash_attention_infer(q: ArrayT, k: ArrayLike, v: ArrayLike, *,
                          actual_seq_lengths: ArrayLike | Sequence[int] | None = ...,
                          actual_seq_lengths_kv: ArrayLike | Sequence[int] | None = ...,
                          block_table: ArrayLike | None = ..., mask: ArrayLike | str | None = ...,
                          num_heads: int | None = ..., num_kv_heads: int | None = ..., scale: float | None = ...,
                          enable_unit_flag: bool = ..., core_num: int = ..., seed: int | None = ...,
                          arch: ArchSpec | str = ..., return_report: Literal[True],
                          observers: Sequence[Observer] = ..., options: LaunchParams | None = ..., kernel: Any = ...,
                          return_launch: Literal[False] = ...) -> tuple[ArrayT, WorkloadReport]: ...


@overload
def flash_attention_infer(q: ArrayT, k: ArrayLike, v: ArrayLike, *,
                          actual_seq_lengths: ArrayLike | Sequence[int] | None = ...,
                          actual_seq_lengths_kv: ArrayLike | Sequence[int] | None = ...,
                          block_table: ArrayLike | None = ..., mask: ArrayLike | str | None = ...,
                          num_heads: int | None = ..., num_kv_heads: int | None = ..., scale: float | None = ...,
                          enable_unit_flag: bool = ..., core_num: int = ..., seed: int | None = ...,
                          arch: ArchSpec | str = ..., return_report: Literal[False] = ...,
                          observers: Sequence[Observer] = ..., options: LaunchParams | None = ..., kernel: Any = ...,
                          return_launch: Literal[True]) -> tuple[ArrayT, LaunchResult | None]: ...


@overload
def flash_attention_infer(q: ArrayT, k: ArrayLike, v: ArrayLike, *,
                          actual_seq_lengths: ArrayLike | Sequence[int] | None = ...,
                          actual_seq_lengths_kv: ArrayLike | Sequence[int] | None = ...,
                          block_table: ArrayLike | None = ..., mask: ArrayLike | str | None = ...,
                          num_heads: int | None = ..., num_kv_heads: int | None = ..., scale: float | None = ...,
                          enable_unit_flag: bool = ..., core_num: int = ..., seed: int | None = ...,
                          arch: ArchSpec | str = ..., return_report: Literal[True],
                          observers: Sequence[Observer] = ..., options: LaunchParams | None = ..., kernel: Any = ...,
                          return_launch: Literal[True]) -> tuple[ArrayT, WorkloadReport, LaunchResult | None]: ...


@overload
def flash_attention_infer(q: ArrayT, k: ArrayLike, v: ArrayLike, *,
                          actual_seq_lengths: ArrayLike | Sequence[int] | None = ...,
                          actual_seq_lengths_kv: ArrayLike | Sequence[int] | None = ...,
                          block_table: ArrayLike | None = ..., mask: ArrayLike | str | None = ...,
                          num_heads: int | None = ..., num_kv_heads: int | None = ..., scale: float | None = ...,
                          enable_unit_flag: bool = ..., core_num: int = ..., seed: int | None = ...,
                          arch: ArchSpec | str = ..., return_report: bool = ...,
                          observers: Sequence[Observer] = ..., options: LaunchParams | None = ..., kernel: Any = ...,
                          return_launch: bool = ...) -> OperatorResult[ArrayT]: ...


@array_op(keywords=("actual_seq_lengths", "actual_seq_lengths_kv", "block_table", "mask"))
def flash_attention_infer(q, k, v, *, actual_seq_lengths=None, actual_seq_lengths_kv=None, block_table=None,
                          mask=None, num_heads=None, num_kv_heads=None, scale=None, enable_unit_flag: bool = False,
                          core_num: int = 24, seed: int | None = None, arch: ArchSpec | str = ATLAS_A2,
                          return_report: bool = False, observers=(), options=None, kernel=None,
                          return_launch: bool = False):
    """CATLASS example 23 (``FAInferKernel``) on simulated AI cores: ``O = softmax(Q K^T * scale + mask) V`` per
    batch and query head, with GQA (query head ``h`` uses KV head ``h // (num_heads / num_kv_heads)``).

    ``q`` fp16/bf16 ``[num_tokens, num_heads, head_dim]`` (batches back to back, ``actual_seq_lengths`` tokens
    each; default one batch); ``k``, ``v`` either a paged cache ``[num_blocks, 128, num_kv_heads, head_dim]``
    with ``block_table`` int32 ``[batch, ceil(max_kv / 128)]`` and ``actual_seq_lengths_kv``, or contiguous
    ``[num_kv_tokens, num_kv_heads, head_dim]`` (``actual_seq_lengths_kv`` default: the query lengths).
    ``head_dim`` a multiple of 16 up to 128. ``mask``: None, ``'causal'`` (CATLASS's ``triu(1024)`` mask,
    aligned to the end of each KV sequence) or the ``(1024, 1024)`` 0/1 mask array the kernel reads (applied to
    the diagonal KV block of each 128-token query block; KV after the diagonal is skipped). ``scale``: the
    softmax scale (default ``1 / sqrt(head_dim)`` in float32, as the tiling computes it). ``enable_unit_flag``
    assembles the blocks with the unit flag (the example does not).

    Returns O, same dtype and shape as ``q``; the launch keywords and the extra return values
    (``return_report``: the :class:`~catlass_py.analysis.WorkloadReport`, whose ``blocks`` list each AI core's
    tasks: batch, query block, heads; ``return_launch``) are those of :mod:`catlass_py.ops.operator`. Inputs
    are never modified.
    """
    run = op_options(core_num=core_num, arch=arch, seed=seed, observers=observers, options=options,
                     return_report=return_report, return_launch=return_launch)
    problem = validate_inputs(q, k, v, actual_seq_lengths=actual_seq_lengths, actual_seq_lengths_kv=actual_seq_lengths_kv,
                              block_table=block_table, mask=mask, num_heads=num_heads, num_kv_heads=num_kv_heads,
                              scale=scale)
    enable_unit_flag = check_flag("enable_unit_flag", enable_unit_flag)
    if kernel is None:
        kernel = build_kernel(run.arch, problem.element, paged_cache=problem.paged,
                              enable_unit_flag=enable_unit_flag)
    elif getattr(kernel, "paged_cache", None) != problem.paged or str(getattr(kernel, "element", "")) != problem.element:
        raise ArgumentError(f"kernel: expected an FAInferKernel assembled for {problem.element} with "
                            f"paged_cache={problem.paged} (the inputs), got {kernel!r}")
    params, o = prepare_launch(run, kernel, problem, q, k, v, scale)
    return run.run_kernel(kernel, params, o)


__all__ = ["FAProblem", "build_kernel", "device_copy", "device_copy_bytes", "flash_attention_infer",
           "launch_flash_attention", "prepare_launch", "validate_inputs"]
