"""§5 phase 8 (state.py part): persistence, lock, log caps and sidecars, corrupt-file refusal."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from plan07 import caps
from plan07.errors import InputError
from plan07.model import AuditRow, Evidence, PlanArtifact, Requirement, Revision
from plan07.store import state

S37_KEYS = ["plan_id", "requirement", "nodes", "checkpoints", "branch_scores",
            "revision_history", "audit"]


def node(i: int) -> dict[str, object]:
    return {"id": f"O{i}", "target_entity": f"pkg.m.f{i}", "obligation": "modify",
            "caused_by": "req", "dependencies": [], "evidence": "06", "status": "ready",
            "validation": "compile", "state": "pending"}


def artifact(n: int = 3, **extra: object) -> PlanArtifact:
    return PlanArtifact.model_validate({
        "plan_id": "plan-20260101-0000-abc123",
        "requirement": Requirement(goal="g", acceptance_criteria=["c"]).model_dump(),
        "nodes": [node(i) for i in range(1, n + 1)],
        "checkpoints": [{"id": "CP0", "step": 0, "after": []}],
        "branch_scores": {}, "revision_history": [], "audit": [], **extra,
    })


def test_round_trip_in_the_37_shape(tmp_path: Path) -> None:
    a = artifact()
    state.save(tmp_path, a)
    data = json.loads((tmp_path / "plan.json").read_text())
    assert list(data)[:7] == S37_KEYS
    assert data["nodes"][0]["state"] == "pending"
    assert state.load(tmp_path) == a


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("{\n\"plan_id\": ", "corrupt plan: not valid JSON"),
        ("[]", "is not of type 'object'"),
        (None, r"nodes\[0\]\.state: 'done' is not one of"),
        (None, r"nodes\[0\]: Additional properties are not allowed"),
    ],
    ids=["torn", "not-an-object", "bad-state", "unknown-key"],
)
def test_a_corrupt_or_hand_broken_plan_is_refused(
    tmp_path: Path, text: str | None, match: str
) -> None:
    state.save(tmp_path, artifact())
    path = tmp_path / "plan.json"
    if text is None:
        data = json.loads(path.read_text())
        if "state" in match:
            data["nodes"][0]["state"] = "done"
        else:
            data["nodes"][0]["colour"] = "red"
        text = json.dumps(data)
    path.write_text(text)
    with pytest.raises(InputError, match=match) as err:
        state.load(tmp_path)
    assert str(path) in err.value.one_line()
    assert "\n" not in err.value.one_line()


def test_no_plan_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="run `plan07 plan"):
        state.load(tmp_path)


def test_logs_past_their_caps_spill_to_sidecars_and_nothing_is_lost(tmp_path: Path) -> None:
    a = artifact()
    for i in range(100):
        a.audit.append(AuditRow(obligation="O1", trace=f"t{i}", event="edit"))
        if i < 40:
            a.revision_history.append(Revision(rev=i, time="t", change=f"c{i}", caused_by="O1"))
        if i % 30 == 29:  # several saves: the sidecar grows, never duplicates
            state.save(tmp_path, a)
    state.save(tmp_path, a)
    back = state.load(tmp_path)
    assert len(back.audit) == caps.MAX_AUDIT_ROWS
    assert len(back.revision_history) == caps.MAX_REVISIONS
    assert back.audit_overflow is not None
    assert back.audit_overflow.model_dump() == {"file": "audit.overflow.jsonl", "rows": 36}
    assert [r.trace for r in state.full_audit(tmp_path, back)] == [f"t{i}" for i in range(100)]
    assert [r.rev for r in state.full_revisions(tmp_path, back)] == list(range(40))
    assert (tmp_path / "revisions.overflow.jsonl").read_text().count("\n") == 8


def test_a_plan_too_big_with_its_evidence_out_moves_history_out_before_refusing(
        tmp_path: Path) -> None:
    """Full-length audit and revision rows (64 and 32 of 500 chars) alone pass 32 KB: the older
    rows go to the overflow sidecars (16 and 8 inline), the plan is written, nothing is lost."""
    a = artifact()
    a.audit.extend(AuditRow(obligation="O1", trace=f"t{i} " + "a" * 490, event="edit")
                   for i in range(64))
    a.revision_history.extend(Revision(rev=i, time="t", change=f"c{i} " + "r" * 490,
                                       caused_by="O1") for i in range(32))
    state.save(tmp_path, a)
    assert len((tmp_path / "plan.json").read_bytes()) <= caps.ARTIFACT_MAX_BYTES
    back = state.load(tmp_path)
    assert (len(back.audit), len(back.revision_history)) == (16, 8)
    assert [r.trace[:3] for r in state.full_audit(tmp_path, back)] == [
        f"t{i} "[:3] for i in range(64)]
    assert [r.rev for r in state.full_revisions(tmp_path, back)] == list(range(32))
    assert (a.audit, a.revision_history) == (back.audit, back.revision_history)


def test_sidecar_residue_of_a_crashed_write_is_dropped(tmp_path: Path) -> None:
    a = artifact()
    a.audit.extend(AuditRow(obligation="O1", trace=f"t{i}") for i in range(65))
    state.save(tmp_path, a)
    with (tmp_path / "audit.overflow.jsonl").open("a") as f:  # a write that died before rename
        f.write(AuditRow(obligation="O1", trace="ghost").model_dump_json() + "\n")
    back = state.load(tmp_path)
    assert "ghost" not in [r.trace for r in state.full_audit(tmp_path, back)]
    back.audit.append(AuditRow(obligation="O1", trace="t65"))
    state.save(tmp_path, back)
    assert [r.trace for r in state.full_audit(tmp_path, state.load(tmp_path))] == [
        f"t{i}" for i in range(66)
    ]


def test_evidence_moves_to_a_sidecar_when_32kb_would_be_exceeded(tmp_path: Path) -> None:
    big = Evidence.model_validate({"context": [
        {"entity": f"pkg.m.f{i}", "summary": "s" * 400} for i in range(100)]})
    a = artifact(evidence=big.model_dump())
    size = state.save(tmp_path, a)
    assert size <= caps.ARTIFACT_MAX_BYTES
    back = state.load(tmp_path)
    assert back.evidence is None
    assert re.fullmatch(r"evidence\.[0-9a-f]{16}\.json", back.evidence_file or "")
    assert state.evidence_of(tmp_path, back) == big
    # content-addressed: a feedback's new evidence goes to a new file; the old one stays whole
    # until nothing names it (a crash before plan.json's rename leaves the old plan consistent)
    old = back.evidence_file
    back.evidence = big.model_copy(update={"context": big.context[:-1]})
    back.evidence_file = None
    state.save(tmp_path, back)
    again = state.load(tmp_path)
    assert again.evidence_file not in (None, old)
    assert (tmp_path / str(old)).is_file()


def test_a_plan_that_cannot_fit_32kb_is_refused_and_nothing_written(tmp_path: Path) -> None:
    a = artifact(n=64)
    for n in a.nodes:
        n.caused_by = "c" * 500
        n.validation = "v" * 500
    with pytest.raises(InputError, match="ARTIFACT_MAX_BYTES 32768"):
        state.save(tmp_path, a)
    assert not (tmp_path / "plan.json").exists()


def test_state_dir_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLAN07_STATE", raising=False)
    assert state.state_dir() == Path("build/07-task-decomposition-planning")
    monkeypatch.setenv("PLAN07_STATE", "/x")
    assert state.state_dir() == Path("/x")
    assert state.state_dir("/y") == Path("/y")


WRITER = """
import sys
from pathlib import Path
from plan07.store import state
from plan07.model import AuditRow
d = Path(sys.argv[1])
a = state.load(d)
i = 0
print("go", flush=True)
while True:
    i += 1
    a.audit.append(AuditRow(obligation="O1", trace=f"row {i} " + "x" * 200))
    a.nodes[0].caused_by = f"write {i}"
    state.save(d, a)
"""


def test_sigkill_during_writes_leaves_a_loadable_plan(tmp_path: Path) -> None:
    state.save(tmp_path, artifact(n=40))
    for delay in (0.05, 0.2, 0.4):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "go"
        time.sleep(delay)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        back = state.load(tmp_path)  # never torn
        rows = state.full_audit(tmp_path, back)
        if rows:  # the last row written and the node change of the same save, together
            assert rows[-1].trace.split()[1] == back.nodes[0].caused_by.split()[1]
        else:  # killed before its first save: the plan as it was
            assert back.nodes[0].caused_by == artifact(n=40).nodes[0].caused_by


APPENDER = """
import sys
from pathlib import Path
from plan07.store import state
from plan07.model import AuditRow
d, who = Path(sys.argv[1]), sys.argv[2]
for i in range(25):
    with state.transaction(d) as tx:
        tx.art.audit.append(AuditRow(obligation="O1", trace=f"{who}{i}"))
"""


def test_two_processes_under_the_lock_lose_no_update(tmp_path: Path) -> None:
    state.save(tmp_path, artifact())
    procs = [subprocess.Popen([sys.executable, "-c", APPENDER, str(tmp_path), who])
             for who in ("a", "b")]
    assert [p.wait() for p in procs] == [0, 0]
    rows = [r.trace for r in state.full_audit(tmp_path, state.load(tmp_path))]
    assert sorted(rows) == sorted([f"{w}{i}" for w in "ab" for i in range(25)])


def test_bytes_save_wrote_skip_the_schema_pass_but_a_hand_edit_does_not(tmp_path: Path) -> None:
    state.save(tmp_path, artifact())
    assert (tmp_path / "plan.json.sha256").is_file()
    assert state.load(tmp_path) == artifact()
    path = tmp_path / "plan.json"
    # a hand edit that pydantic would coerce but the JSON Schema refuses: caught via the schema
    path.write_text(path.read_text().replace('"step":0', '"step":"0"'))
    with pytest.raises(InputError, match=r"checkpoints\[0\]\.step: '0' is not of type 'integer'"):
        state.load(tmp_path)


@pytest.mark.parametrize(("aside", "match"), [
    ({"O9": "refs/plan07-saved/p/1"}, r"'O9' names no node of the plan"),
    ({"O1": "x; rm -rf /"}, r"'x; rm -rf /' is no ref plan07 saves an edit in"),
], ids=["unknown-node", "not-a-saved-ref"])
def test_a_set_aside_edit_must_name_a_node_and_a_ref_plan07_saved(
        tmp_path: Path, aside: dict[str, str], match: str) -> None:
    """A view prints the saved ref as a command to run: a hand-edited plan.json cannot put
    anything else there."""
    state.save(tmp_path, artifact())
    path = tmp_path / "plan.json"
    data = json.loads(path.read_text())
    data["set_aside"] = aside
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match=match) as err:
        state.load(tmp_path)
    assert "\n" not in err.value.one_line()
