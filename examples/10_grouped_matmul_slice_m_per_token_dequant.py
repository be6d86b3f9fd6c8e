"""CATLASS example 10: GMM_sliceM_perToken_Dequant on simulated Atlas A2 AI cores.

    python examples/10_grouped_matmul_slice_m_per_token_dequant.py 128 512 1024 2048
    catlass-py run 10_grouped_matmul_slice_m_per_token_dequant 128 512 1024 2048 --cores 24 --json

D[m, n] (bf16) = per group g: (A_g[mg, k] int8 @ B_g[k, n] int8 -> int32) * scale_g[n] * perTokenScale[mg]. The
assembly (:mod:`catlass_py.assemblies.grouped_matmul_slice_m_per_token_dequant`) follows
``grouped_matmul_slice_m_per_token_dequant.cpp`` step by step; the inputs are generated exactly like the C++ host
code (glibc rand), so the output can be compared with a device dump.

The host follows the assembly's ``out_dtype`` (bf16; fp16 also): D and both scales are of that type, the scales
drawn as it.
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2, GlobalBuffer
from catlass_py.assemblies.grouped_matmul_slice_m_per_token_dequant import assemble
from catlass_py.gemm import GemmCoord
from catlass_py.kernel import DeviceGemm
from catlass_py.ops.grouped_matmul_slice_m_per_token_dequant import validate_inputs
from catlass_py.runner import ExampleResult, ExampleRun, parse_positional, to_device

NAME = "10_grouped_matmul_slice_m_per_token_dequant"
USAGE = "problem_count m n k [device_id]"
SUMMARY = "int8 grouped matmul split along M + per-channel x per-token dequant -> bf16 (multi-stage workspace)"


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments ``problem_count m n k [device_id]``.

    ``observers`` join the launch; ``options`` (a :class:`~catlass_py.arch.LaunchParams`) sets its switches
    (``detect_races``, ``preempt_on_set``); ``seed`` overrides ``options.seed``."""
    problem_count, m, n, k, *_device = parse_positional(NAME, USAGE, list(argv))
    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    core_num = ex.core_num  # aclrtGetDeviceInfo: every AI core of the chip

    kernel = ex.assemble(assemble, arch)
    element_d = ex.setting("out_dtype")  # bf16 (the example) or what --set out_dtype chose: D and both scales
    # The memory budget, before anything is allocated: host inputs, D, the workspace, the golden.
    ex.reserve(kernel, inputs={"a": ((m, k), "int8"), "b": ((problem_count, k, n), "int8"),
                               "scale": ((problem_count, n), element_d), "per_token_scale": ((m,), element_d),
                               "group_list": ((problem_count,), "int64")},
               gm={"d": ((m, n), element_d)},
               golden=golden.peak_bytes("grouped_matmul_slice_m_per_token_dequant", groups=problem_count, m=m, n=n,
                                        k=k),
               arguments=lambda gm: kernel.Arguments(GemmCoord(m, n, k), problem_count, core_num, gm["group_list"],
                                                     gm["a"], gm["b"], gm["scale"], gm["per_token_scale"], gm["d"]))

    # Host data, generated like the C++ (glibc rand(); groupList after srand(0)).
    inputs = ex.inputs(data.example10_inputs, problem_count, m, n, k, element_d)
    validate_inputs(inputs.a, inputs.b, inputs.group_list, inputs.scale, inputs.per_token_scale, core_num, arch)

    # Device buffers: inputs read-only, D allocated (uninitialised on the device; zero here so unwritten rows
    # read 0), workspace from GetWorkspaceSize.
    gm = {name: to_device(name, x) for name, x in inputs.as_dict().items()}
    host_d = ex.zeros((m, n), inputs.scale.dtype)
    gm_d = to_device("d", host_d, read_only=False)

    args = kernel.Arguments(GemmCoord(m, n, k), problem_count, core_num, gm["group_list"], gm["a"], gm["b"],
                            gm["scale"], gm["per_token_scale"], gm_d)
    gemm_op = DeviceGemm(kernel)
    gemm_op.can_implement(args)
    workspace = GlobalBuffer.empty(gemm_op.get_workspace_size(args), "workspace")
    gemm_op.initialize(args, workspace)

    obs = ex.observers(kernel.total_blocks((m, n, k), inputs.group_list))
    with ex.timing():
        launch_result = gemm_op.run(core_num, seed=seed, observers=obs, options=options)

    # Golden and CATLASS's compare: only the rows the groups cover.
    valid = int(inputs.group_list[-1]) * n
    expect = result = None
    if ex.numerics:  # a timing-only run computes and compares nothing
        with ex.phase("golden"):
            expect = golden.grouped_matmul_slice_m_per_token_dequant(
                inputs.a, inputs.b, inputs.group_list, inputs.scale, inputs.per_token_scale)
            result = golden.compare_data(host_d, expect, k, valid=valid)
    rows = int(inputs.group_list[-1])
    sizes = np.diff(np.concatenate([[0], inputs.group_list]))
    return ex.result(
        host_d, result, golden=expect, shape={"problem_count": problem_count, "m": m, "n": n, "k": k}, launch_result=launch_result,
        details={
            "rows_written": rows,
            "empty_groups": int((sizes == 0).sum()),
            "largest_group": int(sizes.max()) if sizes.size else 0,
            "total_blocks": kernel.total_blocks((m, n, k), inputs.group_list),
            "workspace_bytes": workspace.nbytes,
            **({"bit_exact": bool(np.array_equal(host_d[:rows], expect[:rows].astype(host_d.dtype)))}
               if ex.numerics else {}),
        },
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
