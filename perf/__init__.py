"""accelkb.perf"""
