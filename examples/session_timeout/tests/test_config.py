from sessions import SessionConfig


def test_defaults() -> None:
    config = SessionConfig()
    assert config.cookie_name == "session"
    assert config.secure is True
