"""catlass_py.gemm"""
