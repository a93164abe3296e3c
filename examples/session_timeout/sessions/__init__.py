"""A tiny session library: the running example of spec 07 (§3.1)."""

from sessions.config import SessionConfig
from sessions.manager import Session, SessionManager

__all__ = ["Session", "SessionConfig", "SessionManager"]
