"""Session settings."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SessionConfig:
    """How sessions are issued."""

    cookie_name: str = "session"
    secure: bool = True
