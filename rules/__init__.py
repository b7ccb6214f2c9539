"""accelkb.rules"""
