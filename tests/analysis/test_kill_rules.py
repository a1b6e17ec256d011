"""The kill-rule table: one row per rule, checked in order, final rules stop the check."""

from __future__ import annotations

from benchkill.analysis import kill_rules as rules
from benchkill.analysis.kill_rules import RULES, TABLE, Site, broken
from benchkill.vocabulary import KILL_RULES

#: The rules as the verifier's documentation states them, in the order they are checked:
#: (name, the sites it is checked at, whether it ends the check at its site).
SPEC = [
    ("kill-malformed", {"kill"}, True),
    ("use-out-of-scope", {"kill", "use"}, False),
    ("kill-null-value", {"kill"}, True),
    ("kill-constant", {"kill"}, True),
    ("kill-no-register-type", {"kill"}, True),
    ("double-kill", {"kill"}, True),
    ("kill-param", {"kill"}, False),
    ("kill-output", {"use"}, True),
    ("use-after-kill", {"use"}, True),
    ("missed-kill", {"scope end"}, True),
]
SITE_NAMES = {rules.KILL: "kill", rules.USE: "use", rules.SCOPE_END: "scope end"}


def test_each_rule_has_one_row_its_sites_and_a_meaning():
    assert [
        (rule.name, {SITE_NAMES[site] for site in rule.sites}, rule.final) for rule in TABLE
    ] == SPEC
    assert list(RULES) == list(KILL_RULES) == [name for name, _, _ in SPEC]
    for rule in TABLE:
        assert rule.meaning and "\n" not in rule.meaning


def test_a_clean_kill_frees_its_register():
    assert broken(rules.KILL, Site(var="a")) == ([], True)


def test_a_kill_of_a_parameter_is_reported_and_still_frees():
    found, frees = broken(rules.KILL, Site(var="y", alias=" (an alias)", nature=rules.PARAM))
    assert found == [("kill-param", "y (an alias) is a parameter of the function")]
    assert frees


def test_the_first_final_rule_ends_the_check():
    site = Site(var="n", defined=False, nature=rules.NULL, killed_by="R.vm.kill_object(n) at 2")
    found, frees = broken(rules.KILL, site)
    # out of scope is not final; the null value is, so the double kill is not reported
    assert [rule for rule, _ in found] == ["use-out-of-scope", "kill-null-value"]
    assert not frees


def test_uses_after_a_kill():
    killed = "R.memory.kill_tensor(a) at 1"
    assert broken(rules.USE, Site(var="a", killed_by=killed, use=rules.RETURNED))[0] == [
        ("kill-output", f"a is returned by the function after {killed}")
    ]
    assert broken(rules.USE, Site(var="a", killed_by=killed, use=rules.BRANCH_RESULT))[0] == [
        ("use-after-kill", f"a is used as the branch result after {killed}")
    ]
    # a PrimType variable is not checked for scope (shape variables have no binding)
    assert broken(rules.USE, Site(var="n", defined=False, prim=True)) == ([], True)


def test_a_missed_kill_needs_a_use_and_no_kill_on_every_path():
    used = Site(var="s", what="storage", last_use="3")
    assert broken(rules.SCOPE_END, used)[0] == [
        ("missed-kill", "storage s is not killed after its last use at 3")
    ]
    assert broken(rules.SCOPE_END, used._replace(killed_everywhere=True))[0] == []
    assert broken(rules.SCOPE_END, used._replace(in_result=True))[0] == []
