"""CATLASS example 45: strided_batched_matmul_tla on simulated Atlas A2 AI cores.

    python examples/45_strided_batched_matmul_tla.py 5 256 512 1024
    catlass-py run 45_strided_batched_matmul_tla 5 256 512 1024 0 1100 600 600 300000 400000 500000
    catlass-py run 45_strided_batched_matmul_tla 5 256 512 1024 row col

C[b] = A[b] @ B[b] for ``problem_count`` batches, fp16 in and out, every operand a rank-3 TLA layout
``(batch, rows, cols)`` with its leading dimension and batch stride: ``StridedBatchedMatmulTla`` with
``BlockMmadTla<MmadPingpongTlaV2<AtlasA2, true>>`` (:mod:`catlass_py.assemblies.strided_batched_matmul_tla`
follows ``strided_batched_matmul_tla.cpp``; swizzle ``<3,0>`` when m > n, else ``<3,1>``). The arguments are the
C++ example's: ``problem_count m n k [device_id] [lda ldb ldc] [strideA strideB strideC] [layoutA layoutB]``
(``row``/``col``, last). A and B are filled over their whole spans like the C++ host code (glibc rand,
``-5.0f..5.0f``, A first); C is compared batch by batch, without the gaps between the batches.

The host follows the assembly's element types: ``--set element=bf16`` (or int8) fills A and B of that type, and C
is of the kernel's ``ElementC``. The layouts are the example's arguments (``row col``): ``--set layout_a=column``
gives them when the command line does not (the default leading dimensions and strides follow).
"""

from __future__ import annotations

import sys

import numpy as np

from catlass_py import data, golden
from catlass_py.arch import ATLAS_A2
from catlass_py.assemblies.strided_batched_matmul_tla import assemble, swizzle_for
from catlass_py.errors import ArgumentError
from catlass_py.gemm import GemmCoord
from catlass_py.kernel import DeviceGemm
from catlass_py.kernel.strided_batched_matmul_tla import batched_layout
from catlass_py.layout import ColumnMajor, RowMajor
from catlass_py.ops.strided_batched_matmul_tla import check_strides, default_strides, extent, strided_view
from catlass_py.runner import UINT32_MAX, ExampleResult, ExampleRun, compare_output, host_dtype, parse_int, to_device
from catlass_py.virtual import virtual_array

NAME = "45_strided_batched_matmul_tla"
USAGE = "problem_count m n k [device_id] [lda ldb ldc] [strideA strideB strideC] [layoutA layoutB]"
SUMMARY = ("batched C = A @ B, fp16, rank-3 TLA layouts with any leading dimension and batch stride "
           "(StridedBatchedMatmulTla + BlockMmadTla<MmadPingpongTlaV2>)")
INT64_MAX = (1 << 63) - 1
_LAYOUTS_WHY = "the layouts are the example's trailing arguments (layoutA layoutB: row|col)"

#: the values of its assembly's settings the example's host takes (``run NAME --help`` lists them; the
#: run refuses the others before anything runs)
SUPPORTED_SETTINGS = {
    "element": (("float16", "bfloat16", "int8"), "BlockMmadTla's element types"),
    "layout_a": ((RowMajor, ColumnMajor), _LAYOUTS_WHY),
    "layout_b": ((RowMajor, ColumnMajor), _LAYOUTS_WHY),
}


def parse_args(argv) -> dict:
    """The C++ ``BatchedMatmulTlaOptions::Parse``: an optional trailing ``layoutA layoutB`` pair (row/col, any case),
    then 4, 5, 8 or 11 integers; counts and extents > 0; the leading dimensions and strides checked like the
    C++ (:func:`catlass_py.ops.strided_batched_matmul_tla.check_strides`)."""
    argv = list(argv)
    usage = f" (usage: {NAME} {USAGE})"
    layouts = (RowMajor, RowMajor)
    if len(argv) >= 6 and all(isinstance(t, str) and t.lower() in ("row", "col") for t in argv[-2:]):
        layouts = tuple(RowMajor if t.lower() == "row" else ColumnMajor for t in argv[-2:])
        argv = argv[:-2]
    elif len(argv) - 2 in (4, 5, 8, 11) and not all(str(t).isdigit() for t in argv[-2:]):
        # only a trailing layout pair makes this count, and a word is there: name the bad one
        for label, text in zip(("layoutA", "layoutB"), argv[-2:]):
            if not (isinstance(text, str) and text.lower() in ("row", "col")):
                raise ArgumentError(f"{label}: expected row or col (any case), got {text!r}{usage}")
    if len(argv) not in (4, 5, 8, 11):
        raise ArgumentError(f"usage: {NAME} {USAGE}")
    labels = ["problem_count", "m", "n", "k", "device_id"]
    values = {label: parse_int(label, text, hint=usage) for label, text in zip(labels, argv[:5])}
    if any(values[x] == 0 for x in ("problem_count", "m", "n", "k")):
        raise ArgumentError("problem_count, m, n and k must be greater than 0." + usage)
    batch, m, n, k = (values[x] for x in ("problem_count", "m", "n", "k"))
    extra = {}
    for label, text in zip(["lda", "ldb", "ldc", "stride_a", "stride_b", "stride_c"], argv[5:]):
        extra[label] = parse_int(label, text, high=INT64_MAX, hint=usage)
    st = default_strides(batch, m, n, k, *layouts, lda=extra.get("lda"), ldb=extra.get("ldb"), ldc=extra.get("ldc"))
    st.update({key: v for key, v in extra.items() if key.startswith("stride")})
    check_strides(m, n, k, *layouts, **st)
    return {"batch": batch, "m": m, "n": n, "k": k, "layout_a": layouts[0], "layout_b": layouts[1], **st}


def make_inputs(len_a: int, len_b: int, element: str = "float16") -> tuple[np.ndarray, np.ndarray]:
    """The flat host buffers of A and B of ``element`` (fp16 by default), filled over their whole spans as the C++
    does: ``FillRandomData<HostElementA>(host, -5.0f, 5.0f)`` from glibc's default stream, A first."""
    rng = data.GlibcRand()
    a = data.fill_random(rng, len_a, np.float32(-5.0), np.float32(5.0), element)
    b = data.fill_random(rng, len_b, np.float32(-5.0), np.float32(5.0), element)
    return a, b


def run(argv, *, cores=None, seed=None, observers=(), progress=None, options=None, config=None) -> ExampleResult:
    """Run the example with CATLASS's arguments; ``observers`` join the launch, ``options`` (a
    :class:`~catlass_py.arch.LaunchParams`) sets its switches (``numerics=False``: timing only), ``config`` holds
    keywords for :func:`~catlass_py.assemblies.strided_batched_matmul_tla.assemble` (tile shapes, swizzle, ...)
    over the example's runtime choices (the layouts and elements come from the arguments)."""
    p = parse_args(argv)
    batch, m, n, k = p["batch"], p["m"], p["n"], p["k"]
    if max(batch, m, n, k) > UINT32_MAX:
        raise ArgumentError(f"usage: {NAME} {USAGE}")
    arch = ATLAS_A2
    ex = ExampleRun(NAME, arch, cores, observers=observers, progress=progress, options=options, config=config)
    ex.require_supported(SUPPORTED_SETTINGS, assemble)
    # The C++ takes the layouts as arguments and its default leading dimensions and strides follow them: --set
    # layout_a / layout_b are those arguments when the command line does not give them.
    wanted = {key: ex.setting(key, assemble) if key in ex.config else p[key] for key in ("layout_a", "layout_b")}
    if wanted != {key: p[key] for key in wanted}:
        why = _LAYOUTS_WHY
        configured = [key for key in wanted if key in ex.config]
        for key in configured:
            ex.require(key, (RowMajor, ColumnMajor), why)
        if list(argv)[-2:] and all(isinstance(t, str) and t.lower() in ("row", "col") for t in list(argv)[-2:]):
            for key in configured:  # given twice, differently
                ex.require(key, (p[key],), f"{why}, which give {p[key].__name__}")
        p = parse_args([*argv, *("row" if wanted[key] is RowMajor else "col" for key in wanted)])
    tag_a, tag_b = p["layout_a"].__name__, p["layout_b"].__name__
    kernel = ex.assemble(assemble, arch, layout_a=tag_a, layout_b=tag_b, swizzle=swizzle_for(m, n))
    swizzle = (kernel.block_scheduler.swizzle_offset, kernel.block_scheduler.swizzle_direction)

    # MakeTlaLayoutA / MakeTlaLayoutB and C's (batch, m, n):(strideC, ldc, 1)
    layout_a = batched_layout(batch, m, k, p["stride_a"], p["lda"], tag_a)
    layout_b = batched_layout(batch, k, n, p["stride_b"], p["ldb"], tag_b)
    layout_c = batched_layout(batch, m, n, p["stride_c"], p["ldc"], "RowMajor")
    len_a, len_b, len_c = extent(layout_a), extent(layout_b), extent(layout_c)
    element, element_c = kernel.block_mmad.element_a.name, kernel.block_mmad.element_c.name  # or --set element
    ex.reserve(kernel, inputs={"a": ((len_a,), element), "b": ((len_b,), element)},
               gm={"c": ((len_c,), element_c)},
               golden=golden.peak_bytes("batched_matmul", m=m, n=n, k=k, batch=batch, int8=element == "int8")
               + 4 * batch * m * n)
    host_a, host_b = ex.inputs(make_inputs, len_a, len_b, element)

    gm_a = to_device("a", host_a)
    gm_b = to_device("b", host_b)
    host_c = ex.zeros(len_c, host_dtype(element_c))
    gm_c = to_device("c", host_c, read_only=False)

    args = kernel.Arguments(batch, GemmCoord(m, n, k), gm_a, layout_a, gm_b, layout_b, gm_c, layout_c)
    gemm_op = DeviceGemm(kernel)
    gemm_op.can_implement(args)
    gemm_op.initialize(args)  # no workspace

    total = kernel.total_blocks(batch, (m, n, k))
    with ex.timing():
        launch_result = gemm_op.run(ex.core_num, seed=seed, observers=ex.observers(total), options=options)

    # fillContigunousBatchedData, then the golden of the strided operands
    expect = result = None
    if ex.numerics:  # a timing-only run computes and compares nothing
        packed_c = np.ascontiguousarray(strided_view(host_c, layout_c))
        with ex.phase("golden"):
            expect = golden.batched_matmul(strided_view(host_a, layout_a), strided_view(host_b, layout_b))
            result = compare_output(packed_c, expect, k)
    else:
        packed_c = virtual_array((batch, m, n), host_dtype(element_c))
    return ex.result(
        packed_c, result, golden=expect, shape={"batch": batch, "m": m, "n": n, "k": k}, launch_result=launch_result,
        details={"total_blocks": total, "swizzle": f"<{swizzle[0]},{swizzle[1]}>", "layouts": f"{tag_a}/{tag_b}",
                 "lda/ldb/ldc": f"{p['lda']}/{p['ldb']}/{p['ldc']}",
                 "strides": f"{p['stride_a']}/{p['stride_b']}/{p['stride_c']}"},
    )


if __name__ == "__main__":
    from catlass_py.cli import run_example_main

    sys.exit(run_example_main(NAME, sys.argv[1:]))
