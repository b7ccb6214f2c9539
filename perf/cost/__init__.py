"""Cost and energy of an estimate (issue 26): what a system's hour costs, per token and per run.

- :mod:`.model`: the cost model (cloud rate, or capital amortised plus energy), pure.
- :mod:`.from_kb`: price quotes and facility assumptions read from the knowledge base.
- :mod:`.estimate`: a performance estimate's cost and energy figures, with their basis.
"""
