"""(a) The request, §3.1: canonicalization (no model), the request's text read as sections and
sentences, derived candidate criteria. Pure.
"""
