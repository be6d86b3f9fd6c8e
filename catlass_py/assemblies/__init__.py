"""The assemblies of the CATLASS examples: one module per example, named as the example without its number
(``examples/00_basic_matmul.py`` -> :mod:`catlass_py.assemblies.basic_matmul`, ...,
``examples/transpose_quant_batch_matmul.py`` -> :mod:`catlass_py.assemblies.transpose_quant_batch_matmul`).

Each module has ``assemble(arch, **template_parameters)``, which builds the example's kernel step by step like
the C++ (dispatch policy, tile shapes, operand types, tile copies, BlockMmad, BlockEpilogue, block scheduler,
kernel), plus the runtime choices the C++ makes between its instantiations (``swizzle_for``, ``tiling_for``,
``padding_needed``). The example scripts and :mod:`catlass_py.ops` both build their kernels here.
"""
