"""The may-kill and must-kill sets of the kill checker, undone per If branch and joined."""

from __future__ import annotations

from benchkill.analysis.kill_log import KillLog

OUTER, INNER = 1, 2  # roots defined outside / inside the branches


def walk_if(log: KillLog, then: list[int], orelse: list[int]) -> None:
    """An If whose true branch kills ``then`` and false branch ``orelse``."""
    mark = log.mark()
    added = []
    for kills in (then, orelse):
        for root in kills:
            log.kill(root, f"kill {root}")
        added.append(log.undo(mark, lambda root: root != INNER))
        assert (log.may, log.must) == ({}, set())  # each branch starts from the If's state
    log.join(*added)


def test_a_kill_in_one_branch_only_is_a_may_kill_not_a_must_kill():
    for then, orelse in (([OUTER], []), ([], [OUTER])):
        log = KillLog()
        walk_if(log, then, orelse)
        assert log.may == {OUTER: f"kill {OUTER}"}
        assert log.must == set()


def test_a_kill_in_both_branches_is_a_must_kill_placed_at_the_true_branchs():
    log = KillLog()
    walk_if(log, [OUTER], [OUTER])
    assert log.may == {OUTER: f"kill {OUTER}"}
    assert log.must == {OUTER}


def test_a_branchs_own_variables_do_not_outlive_it():
    log = KillLog()
    walk_if(log, [INNER, OUTER], [INNER])
    assert log.may == {OUTER: f"kill {OUTER}"} and log.must == set()


def test_a_join_is_undone_by_the_enclosing_branch():
    log = KillLog()
    mark = log.mark()
    walk_if(log, [OUTER], [OUTER])  # nested in a branch of an outer If
    assert log.undo(mark, lambda root: True) == ({OUTER: f"kill {OUTER}"}, {OUTER})
    assert (log.may, log.must, log.journal) == ({}, set(), [])
