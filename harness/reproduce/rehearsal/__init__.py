"""`make rehearse`: the paper's full workload against the rehearsal server (a scripted fake), end to end.

rehearsal_set.py builds the case set, pipeline.py runs it (with the kill-and-resume and fault checks) and
writes bench/pipeline.json, compare.py holds the canonical record comparison. Nothing produced here is a
model result: every model id is `rehearsal-...` and every record and manifest says `synthetic: true`.
"""
