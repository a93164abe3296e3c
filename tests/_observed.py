"""The small repository and plan the observed-edit tests share: a cart and its pricing in a git
repository the test writes, and a terse decomposition replayed (a target per change, no word of
compatible or breaking)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from plan07 import Planner

REQUEST = """Apply a tax rate at checkout.

## Acceptance criteria

- `tests/test_cart.py::test_checkout` passes
"""
PRICING = "def total(items, discount=0):\n    return sum(items) - discount\n"
CART = ("from pkg.pricing import total\n\n\nclass Cart:\n    def __init__(self, items):\n"
        "        self.items = items\n\n    def checkout(self):\n        return total(self.items)\n")


def make_repo(root: Path, files: dict[str, str] | None = None) -> Path:
    """A git repository of `files` (default: the cart and its pricing), committed."""
    repo = root / "repo"
    files = files or {
        "pkg/__init__.py": "", "pkg/pricing.py": PRICING, "pkg/cart.py": CART,
        "tests/test_cart.py": "from pkg.cart import Cart\n\n\ndef test_checkout():\n"
                              "    assert Cart([1, 2]).checkout() == 3\n",
        "tests/test_pricing.py": "from pkg.pricing import total\n\n\ndef test_total():\n"
                                 "    assert total([1, 2], 1) == 2\n",
        ".gitignore": "__pycache__/\n",
    }
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"],
                 ["-c", "user.name=U", "-c", "user.email=u@example.com", "commit", "-q", "-m",
                  "init"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)
    return repo


def ob(i: str, target: str, why: str = "requirement") -> dict[str, object]:
    return {"id": i, "target_entity": target, "obligation": "modify", "caused_by": why,
            "dependencies": [], "evidence": "03 recon", "status": "ready",
            "validation": "compile"}


def plan(tmp_path: Path, obligations: list[dict[str, object]],
         files: dict[str, str] | None = None) -> tuple[Planner, Path]:
    """A plan of `obligations` (replayed: the order alone, no lint) over a repository of `files`
    (default: the cart and its pricing)."""
    replay = tmp_path / "completion.json"
    replay.write_text(json.dumps({"obligations": obligations}))
    repo = make_repo(tmp_path, files)
    return Planner.create(REQUEST, repo=repo, llm=f"replay:{replay}",
                          state_dir=tmp_path / "state", lint=False), repo
