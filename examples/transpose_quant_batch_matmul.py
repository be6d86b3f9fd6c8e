"""pypto-gym transpose_quant_batch_matmul (MXFP8 batch matmul with transposes) on simulated Ascend 950 cores.

    python examples/transpose_quant_batch_matmul.py test1
    python examples/transpose_quant_batch_matmul.py 8 128 512 128 e5m2 bf16 021
    catlass-py run transpose_quant_batch_matmul 128 128 512 4 e4m3 fp16 012 --cores 32 --json

out[m, b, n] = cast( sum_k (x1[m, b, k] * 2**(x1Scale - 127)) * (x2[b](k, n) * 2**(x2Scale - 127)) ), one E8M0
scale per 32 elements of K. The seed's test configurations are ``test1`` (M=8, K=128, N=512, B=128, e5m2 inputs,
bf16 output, permX2 [0,2,1]) and ``test3`` (M=8192, same K/N/B, e4m3, fp16, permX2 [0,1,2]). Inputs are drawn
like the pypto-gym test; the result is compared with the float32 golden with rtol = atol = 1e-3.
"""

from __future__ import annotations

import sys

import ml_dtypes
import numpy as np

from catlass_py import golden
from catlass_py.analysis import output_digest
from catlass_py.arch import ASCEND_950, launch
from catlass_py.assemblies.settings import settings_of
from catlass_py.assemblies.transpose_quant_batch_matmul import assemble
from catlass_py.errors import ArgumentError, SettingError
from catlass_py.kernel.transpose_quant_batch_matmul import (
    PERM_DN,
    PERM_ND,
    TransposeQuantBatchMatmulParams,
)
from catlass_py.numerics import isclose_summary
from catlass_py.ops.transpose_quant_batch_matmul import make_inputs, validate_inputs
from catlass_py.runner import ExampleResult, ExampleRun, parse_int, short_dtype, to_device
from catlass_py.virtual import virtual_array

NAME = "transpose_quant_batch_matmul"
USAGE = "m k n batch [e4m3|e5m2] [fp16|bf16] [012|021] (or: test1 | test3)"
SUMMARY = "pypto-gym MXFP8 batch matmul x1[M,B,K] @ x2[B,K,N] with E8M0 scales -> fp16/bf16 [M,B,N] (Ascend 950)"

#: the values of its assembly's settings the example's host takes (``run NAME --help`` lists them; the
#: run refuses the others before anything runs)
SUPPORTED_SETTINGS = {
    "in_dtype": (("float8_e4m3fn", "float8_e5m2"), "the MX matmul's fp8 inputs (e4m3|e5m2)"),
    "out_dtype": (("float16", "bfloat16"), "the kernel's outputs (fp16|bf16)"),
}

PRESETS = {  # seed 004: ShapeConfig ori_shape [M, K, N], batch_size, in/out dtype, permX2
    "test1": ("8", "128", "512", "128", "e5m2", "bf16", "021"),
    "test3": ("8192", "128", "512", "128", "e4m3", "fp16", "012"),
}
RTOL = ATOL = 1e-3  # the pypto-gym test's assert_allclose


def parse_args(argv) -> tuple[int, int, int, int, str, str, tuple]:
    """``m k n batch [in] [out] [perm_x2]`` or a preset name; returns (m, k, n, batch, in, out, perm_x2)."""
    argv = list(argv)
    if len(argv) == 1 and argv[0] in PRESETS:
        argv = list(PRESETS[argv[0]])
    if not 4 <= len(argv) <= 7:
        raise ArgumentError(f"usage: {NAME} {USAGE}")
    dims = [parse_int(label, text, hint=f" (usage: {NAME} {USAGE})")
            for label, text in zip(("m", "k", "n", "batch"), argv[:4])]
    ins = {"e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}
    outs = {"fp16": "float16", "bf16": "bfloat16"}
    perms = {"012": PERM_ND, "021": PERM_DN}
    opts = argv[4:] + [None] * (3 - len(argv[4:]))
    in_dtype = ins.get(opts[0] or "e4m3")
    out_dtype = outs.get(opts[1] or "bf16")
    perm = perms.get(opts[2] or "012")
    for label, val, table, text in (("in_dtype", in_dtype, ins, opts[0]), ("out_dtype", out_dtype, outs, opts[1]),
                                    ("perm_x2", perm, perms, opts[2])):
        if val is None:
            raise ArgumentError(f"{label}: expected one of {sorted(table)}, got {text!r}")
    m, k, n, batch = dims
    return m, k, n, batch, in_dtype, out_dtype, perm


def shape_only_inputs(m: int, k: int, n: int, batch: int, in_dtype: str, perm_x2) -> tuple:
    """Shape-only operands of :func:`make_inputs`' shapes and dtypes (a timing-only run): x1 [M, B, K], x2
    [B, K, N] or [B, N, K] (fp8), the E8M0 scales as uint8 [M, B, K/64, 2] and [B, K/64, N, 2] or [B, N, K/64, 2]."""
    fp8 = getattr(ml_dtypes, in_dtype)
    x2_shape = (batch, k, n) if perm_x2 == PERM_ND else (batch, n, k)
    s2_shape = (batch, k // 64, n, 2) if perm_x2 == PERM_ND else (batch, n, k // 64, 2)
    return (virtual_array((m, batch, k), fp8), virtual_array(x2_shape, fp8),
            virtual_array((m, batch, k // 64, 2), np.uint8), virtual_array(s2_shape, np.uint8))


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run with ``m k n batch [e4m3|e5m2] [fp16|bf16] [012|021]`` (or ``test1`` / ``test3``).

    ``observers`` join the launch; ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches;
    ``seed`` overrides ``options.seed``."""
    m, k, n, batch, in_dtype, out_dtype, perm_x2 = parse_args(argv)
    arch = ASCEND_950
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    core_num = ex.core_num
    if k % 64:
        raise ArgumentError(f"k: must be a multiple of 64, got {k}")
    # --set in_dtype / out_dtype / perm_x2 choose what the optional arguments choose; the host data follows them
    ex.require_supported(SUPPORTED_SETTINGS, assemble)
    args = list(argv)
    given = 3 if len(args) == 1 else len(args) - 4  # the optional arguments the command line gave (a preset: all)
    infos = {info.name: info for info in settings_of(assemble)}
    for key, value in (("in_dtype", in_dtype), ("out_dtype", out_dtype), ("perm_x2", perm_x2))[:given]:
        if key in ex.config and ex.setting(key, assemble) != value:
            show = infos[key].show
            raise SettingError(f"{NAME}: --set {key}={show(ex.setting(key, assemble))} contradicts the argument "
                               f"that gives {show(value)}")
    in_dtype, out_dtype, perm_x2 = (ex.config.get(key, value) for key, value in
                                    (("in_dtype", in_dtype), ("out_dtype", out_dtype), ("perm_x2", perm_x2)))
    kernel = ex.assemble(assemble, arch, in_dtype=in_dtype, out_dtype=out_dtype, perm_x2=perm_x2)
    ex.reserve(kernel, inputs={"x1": ((m, batch, k), in_dtype), "x2": ((batch, k, n), in_dtype),
                               "x1_scale": ((m, batch, k // 32), "uint8"), "x2_scale": ((batch, k // 32, n), "uint8"),
                               "generation": ((max(m * batch * k, batch * k * n),), "float32")},
               gm={"out": ((m, batch, n), out_dtype)},
               golden=golden.peak_bytes("transpose_quant_batch_matmul", batch=batch, m=m, n=n, k=k))
    if ex.numerics:
        x1, x2, x1_scale, x2_scale = ex.inputs(make_inputs, m, k, n, batch, in_dtype=in_dtype, out_dtype=out_dtype,
                                                 perm_x2=perm_x2)
    else:  # timing-only: shape-only operands of make_inputs' shapes and dtypes
        x1, x2, x1_scale, x2_scale = shape_only_inputs(m, k, n, batch, in_dtype, perm_x2)
    validate_inputs(x1, x2, x1_scale, x2_scale, (1, 0, 2), perm_x2, (1, 0, 2), out_dtype)

    # Device buffers: inputs read-only (scales as E8M0 bytes), the output zeroed.
    gm = {name: to_device(name, x, dtype=dt)
          for name, x, dt in (("x1", x1, in_dtype), ("x2", x2, in_dtype), ("x1_scale", x1_scale, "float8_e8m0fnu"),
                              ("x2_scale", x2_scale, "float8_e8m0fnu"))}
    host_out = ex.zeros((m, batch, n), np.float16 if out_dtype == "float16" else ml_dtypes.bfloat16)
    gm_out = to_device("out", host_out, read_only=False, dtype=out_dtype)

    params = TransposeQuantBatchMatmulParams(m, batch, k, n, gm["x1"], gm["x2"], gm["x1_scale"], gm["x2_scale"], gm_out)
    obs = ex.observers(kernel.block_count(m, batch, n))
    with ex.timing():
        launch_result = launch(kernel, params, core_num, arch=arch, seed=seed, observers=obs, options=options)

    shape = {"m": m, "k": k, "n": n, "batch": batch}
    if not ex.numerics:
        return ex.result(host_out, None, shape=shape, launch_result=launch_result,
                         details={"in_dtype": in_dtype, "out_dtype": out_dtype, "perm_x2": list(perm_x2),
                                  "total_blocks": kernel.block_count(m, batch, n),
                                  "tile_shape": list(kernel.tile_shape)})
    with ex.phase("golden"):
        expect = golden.transpose_quant_batch_matmul(x1, x2, x1_scale, x2_scale, perm_x2=perm_x2,
                                                     out_dtype=out_dtype)
        errors, max_abs, bit_exact = isclose_summary(host_out, expect, RTOL, ATOL)  # in float32, a chunk at a time
    return ExampleResult(
        example=NAME, passed=errors == 0, error_count=errors,
        max_abs_error=max_abs, seconds=ex.seconds,
        blocks_per_core=ex.report.blocks_per_core(),
        shape=shape, cores=core_num,
        details={
            "in_dtype": in_dtype,
            "out_dtype": out_dtype,
            "perm_x2": list(perm_x2),
            "total_blocks": kernel.block_count(m, batch, n),
            "tile_shape": list(kernel.tile_shape),
            "bit_exact": bit_exact,
            "tolerance": f"rtol={RTOL}, atol={ATOL}",
        },
        output_digest=output_digest(host_out), inputs_cached=ex.inputs_cached,
        memory_estimate=ex.footprint.total,
        launch_result=launch_result, reference=f"{short_dtype(expect.dtype)} golden (pypto-gym's torch reference)",
        output_dtype=short_dtype(host_out.dtype), timings=dict(ex.timings),
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
