"""accelkb.solver"""
