"""(g) The store, §3.7: plan.json and its sidecars, checkpoint records, git snapshots, bounded
reads and atomic writes, the shipped JSON Schemas, plan07's private caches. I/O: files, git.
"""
