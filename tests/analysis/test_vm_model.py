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
