"""The kill rules: one table of (rule, where it is checked, predicate, message).

A kill (``R.memory.kill_tensor``, ``R.memory.kill_storage``, ``R.vm.kill_object``) sets a VM
register to null, like Python's ``del``.  :data:`TABLE` lists every rule a kill or a use can
break; :func:`benchkill.analysis.verifier.verify_kills` walks a function, describes each kill,
use and scope end as a :class:`Site` and reports a :class:`Violation` for each rule of
:func:`broken` that holds there.

Aliases.  KillAfterLastUse starts with CanonicalizeBindings, which replaces a variable by
the one it merely renames, so a kill that is harmless in the input can become a
use-after-free in the output.  The rules therefore treat as one object (its *root*) the
variables that CanonicalizeBindings merges: ``y = x``, ``y = R.match_cast(x, T)`` with T
equal to x's type, ``y = t[i]`` where ``t`` is bound to a tuple literal (``y`` is then its
i-th field), and a tuple rebuilt item by item from a parameter tuple.  A match_cast that
refines the type (``R.match_cast(obj, R.Tensor(...))``) gets a register of its own and is not
an alias.  Not modelled: a match_cast that becomes trivial once CanonicalizeBindings has
inferred a symbolic dimension (``R.match_cast(x, R.Tensor((n,)))`` of a float32[4] ``x``).

Notes on the rules (their one-line meanings are :data:`RULES`):

* ``kill-null-value``, ``kill-constant``, ``kill-no-register-type``: the VM keeps no register
  for a variable bound to ``R.null_value()``, to a constant (a tensor constant, ``R.str``,
  ``R.dtype``, a prim value), or of FuncType, ShapeType or PrimType.  Code generation fails on
  such a kill (``exec_mode="compiled"`` always; bytecode for constants, and it ignores a kill
  of a null value).
* ``double-kill``, ``use-after-kill``: "killed" means killed on *some* path to the kill or use
  (an ``If`` branch counts); a use is a binding's value, an ``If`` condition or a branch result.
* ``missed-kill`` (only with ``expect_complete=True``): a tensor or storage not killed on
  every path after its last use; see :func:`~benchkill.analysis.verifier.verify_kills`.
* ``use-out-of-scope``: a use or kill of a variable not defined there (e.g. bound in an ``If``
  branch and used after the ``If``): ill-formed IR, on which the VM reads a register that was
  never written.  PrimType variables are not checked (symbolic shape variables are defined by
  match_cast patterns, not by bindings).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from benchkill.relax import ops
from benchkill.vocabulary import KILL_RULES

# What a variable's root (the variable CanonicalizeBindings keeps) is bound to.
PARAM, CONST = "param", "const"
NULL, STORAGE = ops.NULL, ops.STORAGE

# Where a rule is checked.
KILL, USE, SCOPE_END = "kill", "use", "scope-end"

# How a variable is used (Site.use).
USED = "used"
BRANCH_RESULT = "used as the branch result"
RETURNED = "returned by the function"


class Site(NamedTuple):
    """What the checker knows about one variable at a kill, a use or the end of its scope.

    The fields are the predicates' inputs and the messages' ``str.format`` fields.
    """

    var: str  # the variable's name (a malformed kill: the text of its arguments)
    malformed: bool = False  # a kill whose argument is not exactly one variable
    defined: bool = True  # a parameter or bound in a visible scope
    prim: bool = False  # of PrimType
    register: bool = True  # its type has a VM register (not FuncType/ShapeType/PrimType)
    type_name: str = ""  # its type's class name
    alias: str = ""  # " (an alias)" when the variable renames its root
    nature: str | None = None  # its root: PARAM, CONST, NULL, STORAGE or None (anything else)
    killed_by: str = ""  # a kill of its root on some path before here ("" if none)
    use: str = USED  # USED, BRANCH_RESULT or RETURNED
    what: str = "tensor"  # (scope end) "tensor" or "storage"
    last_use: str = ""  # (scope end) position of its last use ("" if never used)
    in_result: bool = False  # (scope end) part of its scope's result
    killed_everywhere: bool = False  # (scope end) killed on every path to the scope's end


@dataclass(frozen=True)
class Rule:
    """One kill rule.  ``final``: when it holds, no later rule of the site is checked and a
    kill there frees no register."""

    name: str
    sites: tuple[str, ...]
    holds: Callable[[Site], bool]
    message: str
    final: bool = True

    @property
    def meaning(self) -> str:
        """The rule's one-line meaning (:data:`benchkill.vocabulary.KILL_RULES`)."""
        return KILL_RULES[self.name]


#: Every rule, in the order they are checked at a site.
TABLE: tuple[Rule, ...] = (
    Rule(
        "kill-malformed",
        (KILL,),
        lambda s: s.malformed,
        "kill of ({var}): expected exactly one variable",
    ),
    Rule(
        "use-out-of-scope",
        (KILL, USE),
        lambda s: not s.defined and not s.prim,
        "{var} is not defined here (ill-formed IR: the VM would read a register that was "
        "never written)",
        final=False,
    ),
    Rule(
        "kill-null-value",
        (KILL,),
        lambda s: s.nature == NULL,
        "{var}{alias} is bound to R.null_value() and has no VM register",
    ),
    Rule(
        "kill-constant",
        (KILL,),
        lambda s: s.nature == CONST,
        "{var}{alias} is bound to a constant and has no VM register",
    ),
    Rule(
        "kill-no-register-type",
        (KILL,),
        lambda s: not s.register,
        "{var} has type {type_name} and no VM register",
    ),
    Rule(
        "double-kill",
        (KILL,),
        lambda s: bool(s.killed_by),
        "{var}{alias} is already killed by {killed_by}",
    ),
    Rule(
        "kill-param",
        (KILL,),
        lambda s: s.nature == PARAM,
        "{var}{alias} is a parameter of the function",
        final=False,
    ),
    Rule(
        "kill-output",
        (USE,),
        lambda s: bool(s.killed_by) and s.use == RETURNED,
        "{var} is returned by the function after {killed_by}",
    ),
    Rule(
        "use-after-kill",
        (USE,),
        lambda s: bool(s.killed_by) and s.use != RETURNED,
        "{var} is {use} after {killed_by}",
    ),
    Rule(
        "missed-kill",
        (SCOPE_END,),
        lambda s: bool(s.last_use) and not s.in_result and not s.killed_everywhere,
        "{what} {var} is not killed after its last use at {last_use}",
    ),
)

#: Rule name -> one-line meaning, in the order of :data:`TABLE`.
RULES: dict[str, str] = {rule.name: rule.meaning for rule in TABLE}

_AT: dict[str, tuple[Rule, ...]] = {
    where: tuple(rule for rule in TABLE if where in rule.sites) for where in (KILL, USE, SCOPE_END)
}


def broken(where: str, site: Site) -> tuple[list[tuple[str, str]], bool]:
    """The rules of ``where`` that ``site`` breaks, as (rule, message), in table order, up
    to the first final one; and whether no final rule held (a kill there frees a register)."""
    found = []
    for rule in _AT[where]:
        if rule.holds(site):
            found.append((rule.name, rule.message.format(**site._asdict())))
            if rule.final:
                return found, False
    return found, True


@dataclass(frozen=True)
class Violation:
    """One broken rule: where (function, binding position and text), what, and why.

    ``binding`` is the position in the function: ``"3"`` is the fourth binding of the body,
    ``"3.then.0"`` the first binding of the true branch of the ``If`` bound at ``"3"``,
    ``"return"`` / ``"3.else.result"`` the result expression of the body / of a branch.
    """

    function: str
    variable: str
    binding: str
    description: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.function} @{self.binding} {self.rule}: {self.message} [{self.description}]"
