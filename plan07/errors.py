"""The error hierarchy. Pure; every stage raises these, only the CLI (and the driver) catches.

    Plan07Error
     ├── InputError          bad request, evidence, flags, file: names field, problem, cap
     ├── RuleError           a problem in a .dl rule file, with file:line:col
     ├── ModelOutputError    the model's reply could not be used; keeps .raw
     ├── PlanStateError      an operation the plan's current state does not allow
     └── LLMUnavailable      no completion was received from the model endpoint

A failed validation is a Verdict value (plan07.gate.grammar), not an exception.
"""

from __future__ import annotations


class Plan07Error(Exception):
    """Root of every error plan07 raises on purpose."""

    exit_code = 2

    def one_line(self) -> str:
        """The message on one line, as the CLI prints it after 'error: '."""
        return " ".join(str(self).split())


class InputError(Plan07Error):
    """Bad input: the request, an evidence bundle, a JSON file, a flag.

    `field` is where (a JSON path like `recon.edges[3].dst`, or a flag name), `problem` what is
    wrong with the value, `cap` the named limit when a cap was exceeded.
    """

    def __init__(
        self,
        problem: str,
        *,
        field: str | None = None,
        cap: str | None = None,
        source: str | None = None,
    ) -> None:
        self.problem = problem
        self.field = field
        self.cap = cap
        self.source = source
        where = ""
        if source:
            where += f"{source}: "
        if field:
            where += f"{field}: "
        tail = f" (cap {cap})" if cap else ""
        super().__init__(f"{where}{problem}{tail}")


class RuleError(Plan07Error):
    """A problem in a Datalog rule file, located at file:line:col."""

    def __init__(self, message: str, *, file: str, line: int, col: int | None = None) -> None:
        self.file = file
        self.line = line
        self.col = col
        loc = f"{file}:{line}" + (f":{col}" if col is not None else "")
        super().__init__(f"{loc}: {message}")


class ModelOutputError(Plan07Error):
    """The model's completion could not be used. `.raw` keeps the text verbatim for the audit."""

    def __init__(self, message: str, *, raw: str) -> None:
        self.raw = raw
        super().__init__(message)


class PlanStateError(Plan07Error):
    """The plan's state does not allow this, e.g. completing a node that was not handed out.

    `reason` says which rule refused, for a harness to branch on (the message is for people):
    `not_ready` (handed out or completed before its dependencies), `not_active` (not the
    handed-out node), `complete`, `stuck` (failed, its replans spent), `edit_cap`,
    `test_call_cap`, `no_node`, `no_repo`, `stale` (another process settled the node while its
    check ran), `replan_refused` (an unusable scoped reply), else `plan_state` (checkpoint
    snapshots, rollback, resume); `node` is the obligation it is about, when there is one.
    """

    def __init__(self, message: str, *, reason: str = "plan_state",
                 node: str | None = None) -> None:
        self.reason = reason
        self.node = node
        super().__init__(message)


class LLMUnavailable(Plan07Error):
    """No completion was received: the endpoint was unreachable after the retries, or refused the
    request (HTTP 4xx). Not the §4 fallback, which is for a completion that could not be used."""


def fault_line(exc: OSError) -> str:
    """An operating-system fault plan07 met (a full disk, a read-only or vanished folder) as the
    one line the CLI prints after `error: ` (and MCP as a tool error): what failed, on which
    file. Every write of plan07's is atomic, so a fault leaves the state as it was."""
    what = exc.strerror or type(exc).__name__
    where = f" ({exc.filename})" if exc.filename else ""
    return (f"{what}{where}; nothing was committed (the plan's files are as they were): fix "
            "that, then run the command again")
