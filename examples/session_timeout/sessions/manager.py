"""Issue, look up and expire sessions."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sessions.config import SessionConfig

SESSION_TIMEOUT_MINUTES = 30  # hard-coded: every session expires after 30 minutes


@dataclass
class Session:
    session_id: str
    user: str
    last_seen: datetime


class SessionManager:
    """Keeps sessions in memory and expires idle ones."""

    def __init__(self, config: SessionConfig | None = None) -> None:
        self.config = config or SessionConfig()
        self._sessions: dict[str, Session] = {}

    def open(self, session_id: str, user: str, now: datetime) -> Session:
        session = Session(session_id, user, now)
        self._sessions[session_id] = session
        return session

    def load(self, session_id: str, now: datetime) -> Session | None:
        """The live session, or None when unknown or idle past the timeout."""
        session = self._sessions.get(session_id)
        if session is None:
            return None
        if now - session.last_seen > timedelta(minutes=SESSION_TIMEOUT_MINUTES):
            del self._sessions[session_id]
            return None
        session.last_seen = now
        return session
