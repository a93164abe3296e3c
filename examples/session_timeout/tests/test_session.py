from datetime import datetime, timedelta

from sessions import SessionConfig, SessionManager

T0 = datetime(2026, 1, 1, 12, 0)


def test_open_and_load() -> None:
    manager = SessionManager()
    manager.open("s1", "ada", T0)
    session = manager.load("s1", T0 + timedelta(minutes=5))
    assert session is not None
    assert session.user == "ada"


def test_unknown_session() -> None:
    assert SessionManager().load("nope", T0) is None


def test_old_default_timeout() -> None:
    manager = SessionManager(SessionConfig())
    manager.open("s1", "ada", T0)
    assert manager.load("s1", T0 + timedelta(minutes=29)) is not None
    assert manager.load("s1", T0 + timedelta(minutes=29 + 31)) is None
