"""Every cap of spec 07, named once. Pure constants; the models and stages import them from here.

A cap is enforced by refusing the input with the cap named (InputError.cap), never by silent
truncation. The section each number comes from is beside it.
"""

from __future__ import annotations

# §3.1 task canonicalization
GOAL_MAX_CHARS = 500
PREDICATE_MAX_CHARS = 200
MAX_ACCEPTANCE_CRITERIA = 16
MAX_CONSTRAINTS = 16

# §3.2 dependency graph over obligations (and §4: the decomposition cap, preserved here)
MAX_OBLIGATIONS = 64
MAX_DEPENDENCIES = 16
EVIDENCE_MAX_CHARS = 200

# §3.3 plan-DAG scheduler
MAX_NODES = 64
MAX_BRANCH_SCORES = 64
MAX_CHECKPOINTS = 32

# §3.4 execution driver bounds
MAX_EDIT_FILES = 5
MAX_TEST_CALLS = 10

# Ours (the spec names no bound on re-invocation, §3.5 / §4): scoped replans charged to one plan
# node. Past it a failure makes no model call; `complete` refuses and the user revises the plan
# (`plan07 feedback`) or returns to a checkpoint (`plan07 rollback`). A re-decomposed fragment
# inherits the count of the failure that produced it, so a replan of a replan stays bounded.
MAX_REPLANS_PER_NODE = 3
# Ours (runtime-structured retry, plan07.plan.retry, docs/plan.md "Retry"): failures one node may
# have handled -- a local retry or a scoped replan each -- before it is stuck (the next failure
# makes no model call and is not handed out again). A harness with its own retry bound passes it
# (`Planner.create(max_retries=)`), so no model call is ever made for an attempt that will not
# follow. K: a failure whose signature repeats after this many local retries with the same
# one-line digest implicates the obligation itself and buys the one scoped re-decomposition.
MAX_RETRIES_PER_NODE = 3
MAX_RETRIES_CAP = 8  # the largest retry bound a harness may pass
LOCAL_RETRIES_BEFORE_REPLAN = 1

# §3.7 persistence + audit
ARTIFACT_MAX_BYTES = 32 * 1024
MAX_AUDIT_ROWS = 64
MAX_REVISIONS = 32

# §4 the one LLM call
LLM_TEMPERATURE = 0
LLM_MAX_COMPLETION_TOKENS = 2048

# Ours, where the spec is silent (design.md "Where the spec is silent"): bounds on strings the
# spec leaves open, so no field can carry an unbounded blob.
ID_MAX_CHARS = 32
ENTITY_MAX_CHARS = 300
FIELD_MAX_CHARS = 500
# A handed-out step's saved edits: one `git stash apply --index <ref>` per member set aside
# (plan.json's set_aside refs: at most 200 chars each), joined by ` && `.
SAVED_EDIT_MAX_CHARS = MAX_OBLIGATIONS * 240
# §3.1 step 2: at most this many candidates derived from the request's verbs (when it names none).
MAX_DERIVED_CRITERIA = 4

# §4 prompt bounds (ours: the spec asks for one-line evidence summaries, never bodies, but names
# no size). Evidence lines are added in the spec's order (06, 05, 04, 03) until a bound is met;
# the prompt then says how many lines were left out, so nothing is dropped silently.
PROMPT_MAX_CHARS = 24_000
PROMPT_MAX_EVIDENCE_LINES = 200
# ... and per kind, so one long list (a wide impact DAG) cannot starve the others out.
PROMPT_MAX_IMPACT_LINES = 60
PROMPT_MAX_LOCALIZATION_LINES = 20
PROMPT_MAX_CONTEXT_LINES = 20
PROMPT_MAX_TESTS_LINES = 5  # localized entities whose tests and test home the prompt shows
PROMPT_MAX_TEST_MODULES = 20  # test modules shown so a new test can follow the repo's layout
PROMPT_FIELD_MAX_CHARS = 200  # a signature or context summary, cut to one line of this length
# A scoped re-invoke (§3.5, §4 "Re-invocation on replan") is one short call: the failure as one
# line of at most this many chars, and at most this many evidence lines (those that touch the
# subgraph's targets: impact first, then localization, context, recon).
PROMPT_FAILURE_MAX_CHARS = 160
SCOPED_MAX_EVIDENCE_LINES = 24

# The openai:MODEL client (ours): transport failures only (no completion received) are retried.
LLM_MAX_ATTEMPTS = 3
LLM_TIMEOUT_S = 120.0
LLM_BACKOFF_S = 1.0
LLM_MAX_BACKOFF_S = 8.0
REPLAY_MAX_BYTES = 1024 * 1024

# The builtin decomposer (ours): which localization candidates are followed, which are alternatives.
# score >= ratio * top score: a primary target (0.75 let a second file in on a near-tie too often)
BUILTIN_PRIMARY_SCORE_RATIO = 0.85
BUILTIN_MAX_ALTERNATIVES = 3
BUILTIN_MAX_FAN_IN = 8  # a builtin node waits on at most this many; more run as a chain
VIOLATIONS_PER_NODE = 4  # a kind's violations of one obligation plan.json keeps (more: counted)
MAX_FINDINGS = 32  # plan lint findings kept in plan.json (`plan07 lint` recomputes them all)
BUILTIN_MAX_DERIVED_TESTS = 4  # criteria the builtin writes a red-then-green test for, at most
BUILTIN_MAX_PRIMARY = 2  # targets followed at most (more only when the request names them)

# Evidence (ours): built-in recon / impact / soft-rank bounds
EVIDENCE_MAX_DEPTH = 6  # impact walks at most this many steps from a seed
LOCALIZATION_TOP_K = 10  # lex localization keeps this many entities when no seed is given
SOFT_RANK_MAX_ENTITIES = 256  # soft_rank entries in a built bundle (anchors, impacted, best lex)

# Input bounds (ours, docs/safety.md "Hostile input"): every file read is a regular file of at most
# this many bytes, and every JSON document nests at most this deep (plan.json nests ~8, an evidence
# bundle ~6); a check's timeout is at most a day; an error line is cut to this many characters.
INPUT_MAX_BYTES = 256 * 1024 * 1024
JSON_MAX_DEPTH = 64
CHECK_TIMEOUT_MAX_S = 86_400.0
# A check's timeout when none is given (docs/safety.md "Timeouts"): sized from the CP0 baseline's
# duration, the baseline's run of the plan's tests taking `s` seconds gives
# max(CHECK_TIMEOUT_FLOOR_S, CHECK_TIMEOUT_FACTOR * s + CHECK_TIMEOUT_FLOOR_S); a check that hits it
# is inconclusive, never the node's failure.
CHECK_TIMEOUT_FLOOR_S = 120.0
CHECK_TIMEOUT_FACTOR = 3.0
BASELINE_TIMEOUT_S = 1800.0  # the CP0 baseline run itself
# the reproduction, when plan07 runs it (plan --reproduce): its snippets stop at the
# budget (keeping what they recorded); the process is ended the grace after
REPRO_BUDGET_S = 30.0
REPRO_GRACE_S = 10.0
CHECK_TIMEOUT_MIN_S = 1.0  # no check runs in less: a shorter timeout is a usage error
ERROR_MAX_CHARS = 1000
# ... and by kind: a file past its cap is refused from its size, before it is read (stdin: read
# to one byte past the cap), so an oversized input costs no parse (docs/safety.md).
REQUEST_MAX_BYTES = 1024 * 1024  # GitHub caps an issue body at 65,536 characters
OBLIGATIONS_MAX_BYTES = 4 * 1024 * 1024  # 64 obligations of at most a few KB each, with room
FEEDBACK_MAX_BYTES = 1024 * 1024
RULES_MAX_BYTES = 1024 * 1024  # rules/ordering.dl is about 20 KB
CONFIG_MAX_BYTES = 1024 * 1024  # a repository's pyproject.toml
EVIDENCE_MAX_BYTES = 128 * 1024 * 1024  # sympy's whole bundle is about 21 MB
PLAN_FILE_MAX_BYTES = 1024 * 1024  # plan.json: plan07 writes at most ARTIFACT_MAX_BYTES
_INPUT_CAPS = {  # what a file is (the `what` of plan07.store.boundedio's reads) -> its cap
    "request": "REQUEST_MAX_BYTES", "task": "REQUEST_MAX_BYTES",
    "requirement": "REQUEST_MAX_BYTES", "obligations": "OBLIGATIONS_MAX_BYTES",
    "decomposition": "OBLIGATIONS_MAX_BYTES", "order": "OBLIGATIONS_MAX_BYTES",
    "observed changes": "OBLIGATIONS_MAX_BYTES", "feedback": "FEEDBACK_MAX_BYTES",
    "rule file": "RULES_MAX_BYTES", "pyproject.toml": "CONFIG_MAX_BYTES",
    "evidence": "EVIDENCE_MAX_BYTES", "evidence sidecar": "EVIDENCE_MAX_BYTES",
    "checkpoint record": "EVIDENCE_MAX_BYTES", "plan": "PLAN_FILE_MAX_BYTES",
    "replay": "REPLAY_MAX_BYTES",
}


def input_cap(what: str) -> tuple[str, int]:
    """The cap on a file of kind `what` (its name and bytes); INPUT_MAX_BYTES for the rest."""
    name = _INPUT_CAPS.get(what, "INPUT_MAX_BYTES")
    value: int = globals()[name]
    return name, value
# Walking a repository outside git (recon, the build check's file list, a fingerprint): at most
# this many files and folders seen, and recon reads at most this many Python files and bytes
# (`plan --repo /` is refused in under a second, not read for minutes). A file over
# FINGERPRINT_FILE_MAX_BYTES is never hashed into a snapshot (docs/safety.md).
WALK_MAX_ENTRIES = 100_000
SNAPSHOT_MAX_FILES = 500_000  # files git lists for a snapshot or a fingerprint (no walk: faster)
RECON_MAX_FILES = 30_000
RECON_MAX_BYTES = 256 * 1024 * 1024
FINGERPRINT_FILE_MAX_BYTES = 64 * 1024 * 1024
# Numeric flags (ours): `--depth` of recon and explain
DEPTH_MAX = 64
# A check's output kept by plan07 as it streams in (plan07.gate.runner.Capture): the first half
# and the last half; the rest is counted and left out (a test's failure message in the run's
# record is cut likewise, plan07.gate.outcomes).
CHECK_OUTPUT_MAX_BYTES = 8 * 1024 * 1024
