"""The kill-rule table: one row per rule, checked in order, final rules stop the check."""

from __future__ import annotations

from benchkill.analysis import kill_rules as rules
from benchkill.analysis.kill_rules import RULES, TABLE, Site, broken


def test_each_rule_has_one_row_a_site_and_a_meaning():
    names = [rule.name for rule in TABLE]
    assert len(names) == len(set(names)) == len(RULES)
    assert list(RULES) == names
    for rule in TABLE:
        assert rule.sites and set(rule.sites) <= {rules.KILL, rules.USE, rules.SCOPE_END}
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
