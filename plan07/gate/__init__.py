"""(e) The gate, §3.5: everything that runs a check in the repository's own world (its
interpreter, test command and CP0 baseline), and the check grammar. I/O: subprocesses.
"""
