"""(b) Ordering, §3.2: facts from obligations and evidence, the rules of rules/ordering.dl run
on an engine (plan07.engine), derived edges, violations and their proofs.
"""
