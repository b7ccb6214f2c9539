"""What a report says about the network: the rack-wide collision-free schedule against dynamic
routing (:mod:`.schedules`), the layout's per-token traffic both ways (:mod:`.traffic`), and the
three advantages claimed for software-scheduled networks, each quantified on its own
(:mod:`.advantages`)."""
