"""catlass_py.layout"""
