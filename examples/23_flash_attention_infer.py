"""CATLASS example 23: flash attention inference (``FAInferKernel``) on simulated Atlas A2 AI cores.

    python examples/23_flash_attention_infer.py 1 177 512 1 1 128 0 1 --dtype bf16
    catlass-py run 23_flash_attention_infer batch qSeqlen kvSeqlen numHeads kvHeads embeddingSize isVariedLen maskType
        [--dtype half|bf16] [--device N] [--datapath P] [--json] [--detect-races] ...

O[t, h] = softmax(Q[t, h] K_b^T / sqrt(d) + mask) V_b for every token t of batch b and query head h (GQA: KV head
h // (numHeads / kvHeads)), K/V read from a paged cache of 128-token blocks through the block table. The assembly
(:mod:`catlass_py.assemblies.flash_attention_infer`) follows ``fai_kernel.cpp`` step by step; the host data is
``gen_data.py``'s (``catlass_py.data_attention``), the golden its ``ref_masked_attention``
(``catlass_py.golden_attention``), and the compare CATLASS's
``golden::CompareData(result, golden, kvSeqlen)`` (``examples/common/golden/compare_data.hpp``: an element fails
when ``|o - golden| > rtol * max(1, |golden|)``, rtol 1/256 for kvSeqlen < 2048, else 1/128).
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import golden_attention
from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.flash_attention_infer import assemble
from catlass_py.data_attention import MASK_SIDE, PAGED_BLOCK_SIZE, example23_inputs, gen_seqlen
from catlass_py.errors import ArgumentError, SettingError
from catlass_py.kernel.fa_infer import FAInferKernel, get_fa_tiling_param, q_n_block_tile, q_s_block_tile
from catlass_py.numerics.compare import compare_data
from catlass_py.ops.flash_attention_infer import flash_attention_infer, validate_inputs
from catlass_py.runner import ExampleResult, ExampleRun

NAME = "23_flash_attention_infer"
USAGE = "batch qSeqlen kvSeqlen numHeads kvHeads embeddingSize isVariedLen maskType [--dtype DTYPE] [--device DEVICE_ID]"
SUMMARY = "flash attention inference: paged KV cache, GQA, causal mask, fp16/bf16 (FAInferKernel, online softmax)"

#: the values of its assembly's settings the example's host takes (``run NAME --help`` lists them; the
#: run refuses the others before anything runs)
SUPPORTED_SETTINGS = {
    "element": (("float16", "bfloat16"), "the FA kernel's element types (--dtype half|bf16)"),
    "paged_cache": ((True,), "the example's host data is gen_data.py's paged KV cache"),
}


def parse_args(argv) -> dict:
    """``Options::Parse`` of ``fai.cpp``: eight positional integers, then ``--dtype``, ``--device``,
    ``--datapath`` (the data path is ignored: the data is generated)."""
    words = list(argv)
    names = ["batch", "qSeqlen", "kvSeqlen", "numHeads", "kvHeads", "embeddingSize", "isVariedLen", "maskType"]
    if len(words) < len(names):
        raise ArgumentError(f"usage: {NAME} {USAGE}")
    out = {}
    for name, text in zip(names, words):
        try:
            out[name] = int(text, 10)
        except ValueError:
            raise ArgumentError(f"{name}: expected an integer, got {text!r} (usage: {NAME} {USAGE})") from None
    out["dtype"] = "half"
    rest = words[len(names):]
    while rest:
        flag = rest.pop(0)
        if flag not in ("--dtype", "--device", "--datapath") or not rest:
            raise ArgumentError(f"{flag}: unknown option or missing value (usage: {NAME} {USAGE})")
        value = rest.pop(0)
        if flag == "--dtype":
            if value not in ("half", "bf16"):
                raise ArgumentError(f"--dtype: dtype must be 'half' or 'bf16', got {value!r}")
            out["dtype"] = out["dtype_option"] = value  # dtype_option: given on the command line
    for name in names[:6]:
        if out[name] < 1:
            raise ArgumentError(f"{name}: expected a positive integer, got {out[name]}")
    if out["isVariedLen"] not in (0, 1):
        raise ArgumentError(f"isVariedLen: expected 0 or 1, got {out['isVariedLen']}")
    if out["maskType"] not in (0, 1):
        raise ArgumentError(f"maskType: expected 0 (no mask) or 1 (the causal mask the example loads); maskType 2 "
                            f"reads a mask buffer the C++ host never fills, got {out['maskType']}")
    if out["numHeads"] % out["kvHeads"]:
        raise ArgumentError(f"kvHeads: numHeads ({out['numHeads']}) must be a multiple of kvHeads ({out['kvHeads']})")
    if out["maskType"] == 1 and out["qSeqlen"] > out["kvSeqlen"]:
        raise ArgumentError(f"qSeqlen: cannot exceed kvSeqlen ({out['qSeqlen']} > {out['kvSeqlen']}; gen_data.py "
                            f"check_attr)")
    return out


def _reserve(ex: ExampleRun, kernel, a: dict, element: str) -> None:
    """The memory budget before anything is generated: gen_data's float64 draws and the inputs, their GM copies,
    O, the workspaces the tiling sizes, the golden step (the paged cache of ``batch * ceil(max_kv / 128)``
    blocks, as gen_data.py builds it)."""
    q_list, kv_list = gen_seqlen(a["qSeqlen"], a["kvSeqlen"], a["isVariedLen"], a["batch"])
    tokens, heads, kv_heads, d = sum(q_list), a["numHeads"], a["kvHeads"], a["embeddingSize"]
    blocks = a["batch"] * -(-max(kv_list) // PAGED_BLOCK_SIZE)
    cache = (blocks, PAGED_BLOCK_SIZE, kv_heads, d)
    masked = a["maskType"] == 1
    tiling = get_fa_tiling_param(a["batch"], heads, kv_heads, d, blocks, PAGED_BLOCK_SIZE, int(masked), q_list,
                                 kv_list, ex.core_num)
    inputs = {"q": ((tokens, heads, d), element), "k": (cache, element), "v": (cache, element),
              # np.random.uniform's float64 draws of one cache (as float32 pairs: the registry has no float64)
              "generation": ((2 * blocks * PAGED_BLOCK_SIZE * kv_heads * d,), "float32")}
    if masked:
        inputs["mask"] = ((MASK_SIDE, MASK_SIDE), element)
    gm = {name: shape_dtype for name, shape_dtype in inputs.items() if name != "generation"}
    gm["o"] = ((tokens, heads, d), element)
    ex.reserve(kernel, inputs=inputs, gm=gm, workspace=sum(FAInferKernel.workspace_sizes(tiling).values()),
               golden=golden_attention.peak_bytes("flash_attention_infer", tokens=tokens, heads=heads, head_dim=d,
                                                  max_q=max(q_list), max_kv=max(kv_list), kv_heads=kv_heads,
                                                  elem_bytes=2))


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments (see :func:`parse_args`); ``options`` (a
    :class:`~catlass_py.arch.LaunchParams`) sets the launch's switches (``numerics=False``: timing only),
    ``config`` holds keywords for :func:`~catlass_py.assemblies.flash_attention_infer.assemble`."""
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
    x = ex.inputs(example23_inputs, a["batch"], a["qSeqlen"], a["kvSeqlen"], a["numHeads"], a["kvHeads"],
                  a["embeddingSize"], a["isVariedLen"], a["maskType"], a["dtype"], 1)
    masked = a["maskType"] == 1
    problem = validate_inputs(x.q, x.k, x.v, actual_seq_lengths=x.q_seqlen, actual_seq_lengths_kv=x.kv_seqlen,
                              block_table=x.block_table, mask=x.mask if masked else None)
    tasks = _task_count(problem)
    obs = ex.observers(tasks)
    with ex.timing():
        o, launch_result = flash_attention_infer(
            x.q, x.k, x.v, actual_seq_lengths=x.q_seqlen, actual_seq_lengths_kv=x.kv_seqlen, block_table=x.block_table,
            mask=x.mask if masked else None, core_num=ex.core_num, seed=seed, observers=obs, options=options,
            kernel=kernel, return_launch=True)
    shape = {"batch": a["batch"], "qSeqlen": a["qSeqlen"], "kvSeqlen": a["kvSeqlen"], "numHeads": a["numHeads"],
             "kvHeads": a["kvHeads"], "embeddingSize": a["embeddingSize"]}
    details = {"dtype": a["dtype"], "mask": "causal" if masked else "none",
               "q_seqlen": [int(v) for v in x.q_seqlen], "kv_seqlen": [int(v) for v in x.kv_seqlen], "tasks": tasks}
    if not ex.numerics:  # a timing-only run computes and compares nothing
        return ex.result(o, None, launch_result=launch_result, shape=shape, details=details)
    with ex.phase("golden"):
        expect = golden_attention.flash_attention_infer(x.q, x.k, x.v, x.q_seqlen, x.kv_seqlen, x.block_table,
                                                        causal=masked)
        result = compare_data(o, expect.astype(np.float32), a["kvSeqlen"])
        exact = golden_attention.attention_fp64(x.q, x.k, x.v, x.q_seqlen, x.kv_seqlen, x.block_table, causal=masked)
        golden_err = np.abs(expect.astype(np.float64) - exact)
        kernel_err = np.abs(o.astype(np.float64) - exact)
    return ex.result(
        o, result, launch_result=launch_result, shape=shape,
        details={**details, "rtol": result.rtol, "max_abs_error_vs_fp64": float(kernel_err.max()),
                 "golden_max_abs_error_vs_fp64": float(golden_err.max())},
    )


def _task_count(problem) -> int:
    group = problem.num_heads // problem.kv_heads
    total = 0
    for qs, kvs in zip(problem.q_seqlen, problem.kv_seqlen):
        tile = q_n_block_tile(int(qs), group)
        total += -(-group // tile) * problem.kv_heads * -(-int(qs) // q_s_block_tile(int(kvs)))
    return total


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
