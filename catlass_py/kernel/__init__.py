"""catlass_py.kernel"""
