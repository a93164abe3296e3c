"""Role facts: the `mentions(O, W)` facts plan07 gives an obligation it wrote itself (the builtin
decomposer's), carried beside the obligations instead of in their prose (docs/rules.md "Role
facts"). Pure.

An obligation with role facts is read from them; any other (a model's, an obligation a user
wrote) from its prose, as the rules' keywords find it. The facts are bound to the obligation's
text by a digest, so a re-walk reads the stored facts only while the obligation is the one they
were given for: one rewritten under the same id (a model's scoped reply may keep an id) is read
from its prose again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence

from plan07.model import Obligation, RoleFacts, RoleWord

# what the prose reading of an obligation reads, and what it is about
_BOUND = ("id", "obligation", "target_entity", "caused_by", "evidence", "validation")


def digest(o: Obligation) -> str:
    """The obligation's text as role facts bind to it: 12 hex digits of sha256 over the fields
    the prose reading reads (status and dependencies may change; the facts still hold)."""
    text = json.dumps([getattr(o, f) for f in _BOUND], ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def bind(obligations: Sequence[Obligation],
         words: Mapping[str, Iterable[RoleWord]]) -> dict[str, RoleFacts]:
    """Role facts for each of `obligations` that `words` names (id -> its words)."""
    return {o.id: RoleFacts(of=digest(o), words=sorted(set(words[o.id])))
            for o in obligations if o.id in words}


def words_of(o: Obligation, roles: Mapping[str, RoleFacts] | None) -> list[RoleWord] | None:
    """`o`'s role words when `roles` holds facts given for `o` as it reads now, else None (read
    its prose)."""
    given = roles.get(o.id) if roles else None
    return given.words if given is not None and given.of == digest(o) else None


def kept(roles: Mapping[str, RoleFacts] | None,
         obligations: Sequence[Obligation]) -> dict[str, RoleFacts] | None:
    """The entries of `roles` that still hold for `obligations` (the plan's, after a change);
    None when none does."""
    if not roles:
        return None
    out = {o.id: roles[o.id] for o in obligations if words_of(o, roles) is not None}
    return out or None
