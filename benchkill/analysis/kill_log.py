"""The kills on the paths to a point of a function, for a walk of every path through its Ifs.

:class:`KillLog` keeps the variables killed on *some* path to the current binding (the
may-kill set, with where each was killed) and on *every* path (the must-kill set).  The
kill checker walks an If's true branch, then its false branch, from the same state: every
change goes to a journal, :meth:`KillLog.undo` takes back a branch's changes and returns
those that outlive it, and :meth:`KillLog.join` merges the two branches after the If
(may: either branch; must: both).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Entries of the journal: a kill added to the may-kill or to the must-kill set.
_MAY, _MUST = 0, 1

#: A branch's kills that outlive it: (may-kill root -> where, must-kill roots).
Added = tuple[dict[int, Any], set[int]]


class KillLog:
    """May-kill and must-kill sets of object roots, undone per If branch (module docstring)."""

    __slots__ = ("may", "must", "journal")

    def __init__(self) -> None:
        self.may: dict[int, Any] = {}  # root -> where it is killed on some path
        self.must: set[int] = set()  # roots killed on every path
        self.journal: list[tuple[int, int]] = []

    def mark(self) -> int:
        """The journal's position (where a branch starts)."""
        return len(self.journal)

    def kill(self, root: int, where: Any) -> None:
        """``root`` is killed at ``where`` (on the path being walked)."""
        self.may[root] = where
        self.journal.append((_MAY, root))
        if root not in self.must:
            self.must.add(root)
            self.journal.append((_MUST, root))

    def undo(self, mark: int, outlives: Callable[[int], bool]) -> Added:
        """Forget the kills journaled since ``mark``; return those of the roots that
        ``outlives`` (the variables defined outside the branch: the branch's own are out
        of scope after it)."""
        may: dict[int, Any] = {}
        must: set[int] = set()
        journal = self.journal
        while len(journal) > mark:
            kind, root = journal.pop()
            outer = outlives(root)
            if kind == _MAY:
                where = self.may.pop(root)
                if outer:
                    may[root] = where
            else:
                self.must.discard(root)
                if outer:
                    must.add(root)
        return may, must

    def join(self, then: Added, orelse: Added) -> None:
        """After an If: killed on some path if killed in either branch (the true branch's
        place first), on every path if killed in both."""
        (then_may, then_must), (else_may, else_must) = then, orelse
        for root, where in list(then_may.items()) + list(else_may.items()):
            if root not in self.may:
                self.may[root] = where
                self.journal.append((_MAY, root))
        for root in then_must & else_must:
            if root not in self.must:
                self.must.add(root)
                self.journal.append((_MUST, root))
