"""String references read off a module (plan07.gate.stringrefs): the keys of settings mappings
and registries, and keywords written inside template strings."""

from __future__ import annotations

from plan07.gate.stringrefs import KeyUse, distinctive, key_uses, keywords_in_strings

SETTINGS = '''
DEFAULTS = {
    "mail.host_name": "localhost",
    "name": "plain words are not followed",
}
MODE: dict = {"render_mode": "html"}


def configure(env):
    env["mail.retry_count"] = 3
    del env["mail.old_key"]
    env.setdefault("mail.from_addr", "x@example.com")
'''
READER = '''
class Mailer:
    def host(self, policies):
        return policies["mail.host_name"], policies.get("mail.port_number"), policies.pop(
            "mail.tls_mode", None)
'''


def test_a_mapping_defines_its_literal_keys_under_the_name_it_is_assigned_to() -> None:
    uses = key_uses(SETTINGS)
    assert uses is not None
    assert sorted((u.key, u.owner, u.defines) for u in uses) == [
        ("mail.from_addr", "configure", True), ("mail.host_name", "DEFAULTS", True),
        ("mail.old_key", "configure", True), ("mail.retry_count", "configure", True),
        ("render_mode", "MODE", True)]


def test_a_subscript_get_or_pop_reads_a_key_inside_its_definition() -> None:
    assert sorted(key_uses(READER) or [], key=lambda u: u.key) == [
        KeyUse("mail.host_name", "Mailer.host", False),
        KeyUse("mail.port_number", "Mailer.host", False),
        KeyUse("mail.tls_mode", "Mailer.host", False)]


def test_a_source_that_does_not_parse_has_no_keys() -> None:
    assert key_uses("def f(:\n") is None


def test_only_names_with_a_separator_are_distinctive() -> None:
    assert [w for w in ("extra_schemes", "urlize.rel", "max-age", "name", "id", "_", "a_")
            if distinctive(w)] == ["extra_schemes", "urlize.rel", "max-age"]


def test_a_keyword_written_in_a_template_string_is_found_and_a_docstring_is_not() -> None:
    source = '''
def test_urlize(env):
    """Calls urlize(extra_schemes=...) in a template."""
    t = env.from_string('{{ x|urlize(extra_schemes=["tel:"]) }}')
    assert t.render() == "extra_schemes == 1"
'''
    assert keywords_in_strings(source, {"extra_schemes", "trim_limit"}) == [
        ("test_urlize", "extra_schemes")]
    assert keywords_in_strings(source, set()) == []
    assert keywords_in_strings("x = (", {"extra_schemes"}) == []
