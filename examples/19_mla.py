"""CATLASS example 19: multi-head latent attention decode (``MLAKernel``) on simulated Atlas A2 AI cores.

    python examples/19_mla.py 1 1 128 16 16 128
    catlass-py run 19_mla batch qSeqlenList kvSeqlenList numHeads numBlocks blockSize [--dtype half|bf16]
        [--device N] [--datapath P] [--json] [--detect-races] ...

O[t, h] = softmax([Q, Q_rope][t, h] [K, K_rope]_b^T / sqrt(576)) K_b for each query token t (1 to 4 per batch)
and head h, with one latent KV head of 512 + 64 dimensions read through the block table of a paged cache (V is
K's first 512 columns). ``qSeqlenList`` / ``kvSeqlenList`` are comma-separated (``"1,2" "256,512"``). The
assembly (:mod:`catlass_py.assemblies.mla`) follows ``mla_kernel.cpp`` (the generic kernel, ``numHeads != 128``; the C++ picks its TP1 / AMLA
kernels for 128 heads, which are not implemented here); the host data is ``gen_data.py``'s
(``catlass_py.data_attention``), the golden its ``ref_masked_attention`` (``catlass_py.golden_attention.mla``),
and the verdict CATLASS's ``golden::ComputeErrorMetrics(result, cpu_low, golden, 10.0, 2.0, 2.0)``
(``examples/common/golden/compare_data.hpp``: the MARE / MERE / RMSE of the result against the float32 golden
may be at most 10 / 2 / 2 times those of the fp16/bf16 CPU reference).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np

from catlass_py import golden_attention
from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.mla import assemble
from catlass_py.data_attention import example19_inputs
from catlass_py.errors import ArgumentError, SettingError
from catlass_py.kernel.mla_tiling import TILING_KVCORENUM, get_mla_tiling
from catlass_py.numerics.compare import error_metrics
from catlass_py.numerics.dtypes import get_dtype
from catlass_py.ops.mla import EMBED, EMBED_ROPE, launch_mla, validate_inputs, workspace_sizes
from catlass_py.runner import ExampleResult, ExampleRun

NAME = "19_mla"
USAGE = "batch qSeqlenList kvSeqlenList numHeads numBlocks blockSize [--dtype DTYPE] [--device DEVICE_ID]"
SUMMARY = "multi-head latent attention decode: paged latent KV (512 + 64), flash decoding, fp16/bf16 (MLAKernel)"

#: the values of its assembly's settings the example's host takes (``run NAME --help`` lists them; the
#: run refuses the others before anything runs)
SUPPORTED_SETTINGS = {
    "element": (("float16", "bfloat16"), "MLA's element types (--dtype half|bf16)"),
}


def _int_list(name: str, text: str) -> list[int]:
    try:
        return [int(x.strip(), 10) for x in str(text).split(",")]
    except ValueError:
        raise ArgumentError(f"{name}: expected comma-separated integers, got {text!r} (usage: {NAME} {USAGE})") from None


def parse_args(argv) -> dict:
    """``Options::Parse`` of ``mla.cpp``: ``batch "qSeqlenList" "kvSeqlenList" numHeads numBlocks blockSize``,
    then ``--dtype``, ``--device``, ``--datapath`` (ignored: the data is generated); plus ``gen_data.py``'s
    checks (query lengths 1..4, KV lengths 128..16384, the cache large enough, block size 128)."""
    words = list(argv)
    if len(words) < 6:
        raise ArgumentError(f"usage: {NAME} {USAGE}")
    out = {}
    for name, text in (("batch", words[0]), ("numHeads", words[3]), ("numBlocks", words[4]), ("blockSize", words[5])):
        try:
            out[name] = int(text, 10)
        except ValueError:
            raise ArgumentError(f"{name}: expected an integer, got {text!r} (usage: {NAME} {USAGE})") from None
    out["qSeqlenList"] = _int_list("qSeqlenList", words[1])
    out["kvSeqlenList"] = _int_list("kvSeqlenList", words[2])
    out["dtype"] = "half"
    rest = words[6:]
    while rest:
        flag = rest.pop(0)
        if flag not in ("--dtype", "--device", "--datapath") or not rest:
            raise ArgumentError(f"{flag}: unknown option or missing value (usage: {NAME} {USAGE})")
        value = rest.pop(0)
        if flag == "--dtype":
            if value not in ("half", "bf16"):
                raise ArgumentError(f"--dtype: dtype must be 'half' or 'bf16', got {value!r}")
            out["dtype"] = out["dtype_option"] = value  # dtype_option: given on the command line
    b = out["batch"]
    if b < 1:
        raise ArgumentError(f"batch: expected a positive integer, got {b}")
    if len(out["qSeqlenList"]) != b or len(out["kvSeqlenList"]) != b:
        raise ArgumentError("qSeqlenList: the number of elements in qSeqlenList and kvSeqlenList must match the batch size")
    for v in out["qSeqlenList"]:
        if not 1 <= v <= 4:
            raise ArgumentError(f"qSeqlenList: q_seqlen value {v} is not in the valid range of [1, 4]")
    for v in out["kvSeqlenList"]:
        if not 128 <= v <= 16384:
            raise ArgumentError(f"kvSeqlenList: kv_seqlen value {v} is not in the valid range of [128, 16384]")
    if out["blockSize"] != 128:
        raise ArgumentError(f"blockSize: blockSize != 128 is not supported, got {out['blockSize']}")
    if sum(out["kvSeqlenList"]) > out["numBlocks"] * out["blockSize"]:
        raise ArgumentError("numBlocks: the number of K and V tokens is too big to fit in the paged cache")
    max_blocks = -(-max(out["kvSeqlenList"]) // 128)
    if b * max_blocks > out["numBlocks"]:
        raise ArgumentError(f"numBlocks: the block table gen_data.py builds (batch x {max_blocks} blocks) needs "
                            f"{b * max_blocks} blocks, got {out['numBlocks']}")
    if not 1 <= out["numHeads"] < 128:
        raise ArgumentError(f"numHeads: the generic kernel takes 1..127 heads (128 selects the TP1 / AMLA kernels, "
                            f"not implemented), got {out['numHeads']}")
    return out


@dataclass(frozen=True)
class _Verdict:
    """``ComputeErrorMetrics``' verdict in the shape :meth:`ExampleRun.result` takes."""

    passed: bool
    error_count: int
    max_abs_error: float


def _reserve(ex: ExampleRun, kernel, a: dict, element: str) -> None:
    """The memory budget before anything is generated: gen_data's float64 draws and the inputs, their GM copies,
    O, the workspaces the tiling sizes, the golden step."""
    tokens, heads, blocks = sum(a["qSeqlenList"]), a["numHeads"], a["numBlocks"]
    cache = (blocks, a["blockSize"], 1)
    q_len, kv_len = np.asarray(a["qSeqlenList"], np.int32), np.asarray(a["kvSeqlenList"], np.int32)
    tiling = get_mla_tiling(a["batch"], heads, EMBED, EMBED_ROPE, blocks, a["blockSize"], 1, q_len, kv_len,
                            ex.core_num)
    dtype = np.dtype(get_dtype(element).numpy)
    inputs = {"q": ((tokens, heads, EMBED), element), "q_rope": ((tokens, heads, EMBED_ROPE), element),
              "k": ((*cache, EMBED), element), "k_rope": ((*cache, EMBED_ROPE), element),
              # np.random.uniform's float64 draws (as float32 pairs: the registry has no float64)
              "generation": ((2 * (tokens * heads + blocks * a["blockSize"]), EMBED + EMBED_ROPE), "float32")}
    gm = {name: shape_dtype for name, shape_dtype in inputs.items() if name != "generation"}
    gm["o"] = ((tokens, heads, EMBED), element)
    ws = workspace_sizes(tokens, heads, ex.core_num, int(tiling[TILING_KVCORENUM]), dtype)
    ex.reserve(kernel, inputs=inputs, gm=gm, workspace=sum(ws.values()),
               golden=golden_attention.peak_bytes("mla", tokens=tokens, heads=heads, head_dim=EMBED,
                                                  max_q=max(a["qSeqlenList"]), max_kv=max(a["kvSeqlenList"]),
                                                  cache_tokens=blocks * a["blockSize"], elem_bytes=dtype.itemsize))


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments (see :func:`parse_args`); ``options`` (a
    :class:`~catlass_py.arch.LaunchParams`) sets the launch's switches (``numerics=False``: timing only),
    ``config`` holds keywords for :func:`~catlass_py.assemblies.mla.assemble`."""
    a = parse_args(argv)
    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    element = "bfloat16" if a["dtype"] == "bf16" else "float16"
    ex.require_supported(SUPPORTED_SETTINGS, assemble)
    if "element" in ex.config:  # --set element: the host data follows the kernel's element, as --dtype does
        if "dtype_option" in a and ex.setting("element") != element:
            raise SettingError(f"{NAME}: --set element={ex.setting('element')} contradicts --dtype {a['dtype']}")
        element = ex.setting("element")
        a["dtype"] = "bf16" if element == "bfloat16" else "half"
    kernel = ex.assemble(assemble, arch, element=element)
    _reserve(ex, kernel, a, element)
    x = ex.inputs(example19_inputs, a["batch"], tuple(a["qSeqlenList"]), tuple(a["kvSeqlenList"]), a["numHeads"],
                  a["numBlocks"], a["blockSize"], a["dtype"])
    problem = validate_inputs(x.q, x.q_rope, x.k, x.k_rope, x.block_table, x.q_seqlen, x.kv_seqlen)
    blocks = sum(-(-int(kv) // 128) for kv in x.kv_seqlen)
    obs = ex.observers(blocks)
    with ex.timing():
        o, launch_result, tiling = launch_mla(kernel, problem, x.q, x.q_rope, x.k, x.k_rope, core_num=ex.core_num,
                                              seed=seed, observers=obs, options=options)
    shape = {"batch": a["batch"], "numHeads": a["numHeads"], "numBlocks": a["numBlocks"], "blockSize": a["blockSize"]}
    details = {"dtype": a["dtype"], "q_seqlen": a["qSeqlenList"], "kv_seqlen": a["kvSeqlenList"],
               "kv_split_cores": int(tiling[TILING_KVCORENUM])}
    if not ex.numerics:  # a timing-only run computes and compares nothing
        return ex.result(o, None, launch_result=launch_result, shape=shape, details=details)
    with ex.phase("golden"):
        return _compare(ex, a, x, o, launch_result, shape, details)


def _compare(ex, a, x, o, launch_result, shape, details) -> ExampleResult:
    """The example's golden (``golden.bin`` / ``cpu_low``) and ``ComputeErrorMetrics`` verdict."""
    high, low = golden_attention.mla(x.q, x.q_rope, x.k, x.k_rope, x.block_table, x.q_seqlen, x.kv_seqlen)
    metrics = error_metrics(o, high, low, mare_threshold=10.0, mere_threshold=2.0, rmse_threshold=2.0)
    exact, _ = golden_attention.mla(x.q, x.q_rope, x.k, x.k_rope, x.block_table, x.q_seqlen, x.kv_seqlen, fp64=True)
    diff = np.abs(o.astype(np.float64) - exact)
    verdict = _Verdict(bool(metrics.passed), 0 if metrics.passed else 1, float(np.abs(o.astype(np.float64) - high).max()))
    result = ex.result(
        o, verdict, launch_result=launch_result, shape=shape,
        details={**details, "mare_ratio": metrics.mare_ratio, "mere_ratio": metrics.mere_ratio,
                 "rmse_ratio": metrics.rmse_ratio, "max_abs_error_vs_fp64": float(diff.max())},
    )
    if not metrics.passed:
        result.details["error_metrics"] = str(metrics)
    return result


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
