"""catlass_py.epilogue"""
