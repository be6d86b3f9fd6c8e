"""catlass_py.analysis"""
