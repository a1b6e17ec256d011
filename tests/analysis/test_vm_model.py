"""One symbolic model of the VM: the liveness estimate and the trace's walker share the
walk, the registers and the release rules; each says only what a value is and where
allocations and branches come from."""

from __future__ import annotations

import pytest

from benchkill.analysis.machine import AbstractVM
from benchkill.analysis.vm_model import SymbolicVM
from benchkill.execution.walker import Walker

#: The walk and the VM's release rules: defined in the model, by neither execution.
SHARED = ("expr", "binding", "use", "call_function", "kill", "replace_slot", "index")


@pytest.mark.parametrize("execution", [AbstractVM, Walker])
def test_both_executions_are_the_one_model(execution):
    assert issubclass(execution, SymbolicVM)
    assert not set(SHARED) & set(vars(execution)), execution
    for hook in ("buffers", "branch", "call_expr", "returning"):
        assert hook in vars(execution), (execution, hook)


def test_the_return_slot_is_the_bytecode_vms_only():
    bytecode, compiled = SymbolicVM(None, return_slot=True), SymbolicVM(None, return_slot=False)
    assert bytecode.replace_slot("a") is None and bytecode.replace_slot("b") == "a"
    assert compiled.replace_slot("a") is None and compiled.replace_slot("b") is None


class Recorder(SymbolicVM):
    """The model's walk with no buffers, the true branch taken, and every hook recorded."""

    def __init__(self, mod):
        super().__init__(mod, return_slot=False)
        self.lives, self.log = [], []

    def buffers(self, value):
        return ()

    def branch(self, expr, frame, var):
        return self.expr(expr.true_branch, frame)

    def call_expr(self, call, frame, var):
        return self.EMPTY

    def enter(self, frame, binding):
        site = super().enter(frame, binding)
        self.log.append(("enter", site.var))
        return site

    def read(self, frame, var, site):
        self.log.append(("read", var.name, site.var))
        super().read(frame, var, site)

    def after_binding(self, frame, var):
        self.log.append(("done", var.name))


def test_the_walk_calls_the_hooks_in_evaluation_order():
    """A binding is entered, reads its operands (an If its condition, a kill nothing),
    then its branch's bindings run, then it is done."""
    from benchkill.analysis.frame import Frame

    from .test_verifier import module

    mod = module("""
        a = f(x, T4)
        if c:
            b = f(a, x, T4)
            r = b
        else:
            r = x
        R.memory.kill_tensor(a)
        return r
    """)
    vm = Recorder(mod)
    vm.expr(mod["main"].body, Frame("main"))
    assert vm.log == [
        ("enter", "a"), ("read", "x", "a"), ("done", "a"),
        ("enter", "r"), ("read", "c", "r"),
        ("enter", "b"), ("read", "a", "b"), ("read", "x", "b"), ("done", "b"),
        ("done", "r"),
        ("enter", "kill_tensor(a)"), ("done", "_"),
    ]  # fmt: skip
