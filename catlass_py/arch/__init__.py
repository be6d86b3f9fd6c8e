"""catlass_py.arch"""
