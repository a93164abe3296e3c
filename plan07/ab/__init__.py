"""The §7 A/B and ablation harness: tasks, executors, strategies, metrics, decision, report.

It drives plan07 through its public library API (`plan07.Planner`) exactly as a coding harness
would, beside two baselines (monolithic prompt, static prompt-embedded decomposition). See
docs/ab.md for every definition (retry tokens, temporal consistency, the tokenizer estimate).
"""
