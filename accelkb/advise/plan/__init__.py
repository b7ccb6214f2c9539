"""A report's plan: the command that reproduces each estimated layout (:mod:`.commands`) and the
compatible recommendations applied together as one layout (:mod:`.combined`)."""
