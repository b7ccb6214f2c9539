"""accelkb.ontology"""
