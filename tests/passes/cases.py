"""The Before/Expected scenarios of KillAfterLastUse, one table for every implementation.

Each :class:`Case` holds an input and the expected output of each mode: ``default``
(TVM's output, checked against TVM's pass itself), ``legacy`` (``exclude_null_value=False``,
the pre-fix behaviour) and ``beyond`` (``tvm_compatible=False``).  A mode left ``None``
expects the default output.  ``tests/passes/test_before_expected.py`` runs every case on
benchkill's pass and on the naive port.
"""

from __future__ import annotations

from dataclasses import dataclass

import tvm
from tvm.script import ir as I
from tvm.script import relax as R
from tvm.script import tirx as T


@dataclass(frozen=True)
class Case:
    name: str
    before: tvm.IRModule
    default: tvm.IRModule
    legacy: tvm.IRModule | None = None
    beyond: tvm.IRModule | None = None

    def expected(self, mode: str) -> tvm.IRModule:
        return getattr(self, mode) or self.default


CASES: list[Case] = []


def case(name: str, **modes):
    """Register the modules of a case: ``before`` first, then the outputs by mode."""
    CASES.append(Case(name, **modes))


# --- storage, tensors and their order ----------------------------------------------------


@I.ir_module
class StorageBefore:
    @R.function(pure=False)
    def main(x: R.Tensor([16, 32], "float32")):
        storage = R.memory.alloc_storage(R.shape([2048]), 0, "global", "uint8")
        y = R.memory.alloc_tensor(storage, 0, R.shape([16, 32]), "float32")
        _ = R.call_packed("add_one", x, y, ty_args=(R.Tuple,))
        z = R.call_packed("identity", y, ty_args=(R.Tensor([16, 32], "float32"),))
        return z


@I.ir_module
class StorageExpected:
    @R.function(pure=False)
    def main(x: R.Tensor([16, 32], "float32")):
        storage = R.memory.alloc_storage(R.shape([2048]), 0, "global", "uint8")
        y = R.memory.alloc_tensor(storage, 0, R.shape([16, 32]), "float32")
        _ = R.memory.kill_storage(storage)
        _ = R.call_packed("add_one", x, y, ty_args=(R.Tuple,))
        z = R.call_packed("identity", y, ty_args=(R.Tensor([16, 32], "float32"),))
        _ = R.memory.kill_tensor(y)
        return z


case("storage and tensor killed after last use", before=StorageBefore, default=StorageExpected)


@I.ir_module
class OrderBefore:
    @R.function(pure=False)
    def main(x: R.Tensor([4], "float32")):
        o1: R.Object = R.call_packed("obj", ty_args=(R.Object,))
        s1 = R.memory.alloc_storage(R.shape([16]), 0, "global", "uint8")
        t1 = R.call_packed("t", ty_args=(R.Tensor([4], "float32"),))
        s2 = R.memory.alloc_storage(R.shape([16]), 0, "global", "uint8")
        t2 = R.call_packed("t", ty_args=(R.Tensor([4], "float32"),))
        o2: R.Object = R.call_packed("obj", ty_args=(R.Object,))
        y = R.call_packed("use", t2, s2, o2, t1, s1, o1, ty_args=(R.Tensor([4], "float32"),))
        return y


@I.ir_module
class OrderExpected:
    @R.function(pure=False)
    def main(x: R.Tensor([4], "float32")):
        o1: R.Object = R.call_packed("obj", ty_args=(R.Object,))
        s1 = R.memory.alloc_storage(R.shape([16]), 0, "global", "uint8")
        t1 = R.call_packed("t", ty_args=(R.Tensor([4], "float32"),))
        s2 = R.memory.alloc_storage(R.shape([16]), 0, "global", "uint8")
        t2 = R.call_packed("t", ty_args=(R.Tensor([4], "float32"),))
        o2: R.Object = R.call_packed("obj", ty_args=(R.Object,))
        y = R.call_packed("use", t2, s2, o2, t1, s1, o1, ty_args=(R.Tensor([4], "float32"),))
        _ = R.memory.kill_tensor(t1)
        _ = R.memory.kill_tensor(t2)
        _ = R.memory.kill_storage(s1)
        _ = R.memory.kill_storage(s2)
        _ = R.vm.kill_object(o1)
        _ = R.vm.kill_object(o2)
        return y


case("kill order after one binding: tensors, storage, objects", before=OrderBefore,
     default=OrderExpected)  # fmt: skip


# --- what is never killed ------------------------------------------------------------------


@I.ir_module
class NullValueBefore:
    @R.function(pure=False)
    def main(x: R.Tensor([16, 32], "float32")):
        storage = R.memory.alloc_storage(R.shape([2048]), 0, "global", "uint8")
        y = R.memory.alloc_tensor(storage, 0, R.shape([16, 32]), "float32")
        shape_heap: R.Any = R.null_value()
        _dummy = R.call_packed("use_shape_heap", [shape_heap], ty_args=(R.Tuple,))
        z = R.add(x, y)
        return z


@I.ir_module
class NullValueExpected:
    @R.function(pure=False)
    def main(x: R.Tensor([16, 32], "float32")):
        storage = R.memory.alloc_storage(R.shape([2048]), 0, "global", "uint8")
        y = R.memory.alloc_tensor(storage, 0, R.shape([16, 32]), "float32")
        _ = R.memory.kill_storage(storage)
        shape_heap: R.Any = R.null_value()
        _dummy = R.call_packed("use_shape_heap", [shape_heap], ty_args=(R.Tuple,))
        z = R.add(x, y)
        _ = R.memory.kill_tensor(y)
        return z


@I.ir_module
class NullValueLegacy:
    @R.function(pure=False)
    def main(x: R.Tensor([16, 32], "float32")):
        storage = R.memory.alloc_storage(R.shape([2048]), 0, "global", "uint8")
        y = R.memory.alloc_tensor(storage, 0, R.shape([16, 32]), "float32")
        _ = R.memory.kill_storage(storage)
        shape_heap: R.Any = R.null_value()
        _dummy = R.call_packed("use_shape_heap", [shape_heap], ty_args=(R.Tuple,))
        _ = R.vm.kill_object(shape_heap)
        z = R.add(x, y)
        _ = R.memory.kill_tensor(y)
        return z


# The upstream scenario of TVM PR #20267: R.null_value() is never killed (legacy: it is).
case("R.null_value() is never killed", before=NullValueBefore, default=NullValueExpected,
     legacy=NullValueLegacy)  # fmt: skip


@I.ir_module
class UnregisteredBefore:
    @R.function(pure=False)
    def main(x: R.Tensor([4], "float32"), n: R.Prim("int64")):
        s = R.shape([4])
        p = R.prim_value(T.int64(3))
        f = R.ExternFunc("ext")
        a = R.call_packed("f", x, s, p, n, f, ty_args=(R.Tensor([4], "float32"),))
        b = R.call_packed("g", a, ty_args=(R.Tensor([4], "float32"),))
        return b


@I.ir_module
class UnregisteredExpected:
    @R.function(pure=False)
    def main(x: R.Tensor([4], "float32"), n: R.Prim("int64")):
        s = R.shape([4])
        p = R.prim_value(T.int64(3))
        f = R.ExternFunc("ext")
        a = R.call_packed("f", x, s, p, n, f, ty_args=(R.Tensor([4], "float32"),))
        b = R.call_packed("g", a, ty_args=(R.Tensor([4], "float32"),))
        _ = R.memory.kill_tensor(a)
        return b


case("shapes, prim values, functions, parameters and outputs are not killed",
     before=UnregisteredBefore, default=UnregisteredExpected)  # fmt: skip


# --- kills already there, aliases ----------------------------------------------------------


@I.ir_module
class KilledBefore:
    @R.function(pure=False)
    def main(x: R.Tensor([4], "float32")):
        a = R.call_packed("f", x, ty_args=(R.Tensor([4], "float32"),))
        b = R.call_packed("g", a, ty_args=(R.Tensor([4], "float32"),))
        _ = R.memory.kill_tensor(a)
        c = R.call_packed("g", b, ty_args=(R.Tensor([4], "float32"),))
        return c


@I.ir_module
class KilledExpected:
    @R.function(pure=False)
    def main(x: R.Tensor([4], "float32")):
        a = R.call_packed("f", x, ty_args=(R.Tensor([4], "float32"),))
        b = R.call_packed("g", a, ty_args=(R.Tensor([4], "float32"),))
        _ = R.memory.kill_tensor(a)
        c = R.call_packed("g", b, ty_args=(R.Tensor([4], "float32"),))
        _ = R.memory.kill_tensor(b)
        return c


case("an already killed variable is not killed again", before=KilledBefore,
     default=KilledExpected)  # fmt: skip


@I.ir_module
class ObjectsBefore:
    @R.function(pure=False)
    def main(x: R.Tensor([4], "float32")):
        a = R.call_packed("make", x, ty_args=(R.Tensor([4], "float32"),))
        t = R.call_packed(
            "pair", x, ty_args=(R.Tuple(R.Tensor([4], "float32"), R.Tensor([4], "float32")),)
        )
        s = R.str("label")
        _u = R.call_packed("use", a, t, s, ty_args=(R.Tuple,))
        _k = R.memory.kill_tensor(a)
        return x


@I.ir_module
class ObjectsExpected:
    @R.function(pure=False)
    def main(x: R.Tensor([4], "float32")):
        a = R.call_packed("make", x, ty_args=(R.Tensor([4], "float32"),))
        t = R.call_packed(
            "pair", x, ty_args=(R.Tuple(R.Tensor([4], "float32"), R.Tensor([4], "float32")),)
        )
        s = R.str("label")
        _u = R.call_packed("use", a, t, s, ty_args=(R.Tuple,))
        _ = R.vm.kill_object(t)
        _ = R.vm.kill_object(s)
        _k = R.memory.kill_tensor(a)
        return x


case("tuples and strings get kill_object; an existing kill is kept, not repeated",
     before=ObjectsBefore, default=ObjectsExpected)  # fmt: skip


@I.ir_module
class RebindBefore:
    @R.function(pure=False)
    def main():
        storage = R.memory.alloc_storage(R.shape([16]), 0, "global", "uint8")
        y = R.memory.alloc_tensor(storage, 0, R.shape([4]), "float32")
        z = y
        out = R.call_packed("use", z, ty_args=(R.Tensor([4], "float32"),))
        return out


@I.ir_module
class RebindExpected:
    @R.function(pure=False)
    def main():
        storage = R.memory.alloc_storage(R.shape([16]), 0, "global", "uint8")
        y = R.memory.alloc_tensor(storage, 0, R.shape([4]), "float32")
        _ = R.memory.kill_storage(storage)
        out = R.call_packed("use", y, ty_args=(R.Tensor([4], "float32"),))
        _ = R.memory.kill_tensor(y)
        return out


case("a trivial rebinding is replaced by its source", before=RebindBefore,
     default=RebindExpected)  # fmt: skip


@I.ir_module
class MatchCastBefore:
    @R.function(pure=False)
    def main():
        storage = R.memory.alloc_storage(R.shape([16]), 0, "global", "uint8")
        y = R.memory.alloc_tensor(storage, 0, R.shape([4]), "float32")
        z = R.match_cast(y, R.Tensor([4], "float32"))
        out = R.call_packed("use", z, ty_args=(R.Tensor([4], "float32"),))
        return out


case("a match_cast to the same type is replaced by its source", before=MatchCastBefore,
     default=RebindExpected)  # fmt: skip


@I.ir_module
class AliasChainBefore:
    @R.function(pure=False)
    def main(w: R.Tensor([16, 32], "float32")):
        x = R.add(w, R.const(1, "float32"))
        y = x
        m = R.match_cast(y, R.Tensor([16, 32]))
        z = R.add(m, R.const(1, "float32"))
        return z


@I.ir_module
class AliasChainExpected:
    @R.function(pure=False)
    def main(w: R.Tensor([16, 32], "float32")):
        x = R.add(w, R.const(1, "float32"))
        m = R.match_cast(x, R.Tensor([16, 32]))
        _ = R.memory.kill_tensor(x)
        z = R.add(m, R.const(1, "float32"))
        _ = R.memory.kill_tensor(m)
        return z


case("a rebinding then a match_cast to a looser type", before=AliasChainBefore,
     default=AliasChainExpected)  # fmt: skip


# --- If ------------------------------------------------------------------------------------


@I.ir_module
class IfBefore:
    @R.function(pure=False)
    def main(x: R.Tensor([4], "float32"), cond: R.Prim("bool")):
        a = R.call_packed("f", x, ty_args=(R.Tensor([4], "float32"),))
        b = R.call_packed("f", a, ty_args=(R.Tensor([4], "float32"),))
        if cond:
            c = R.call_packed("f", b, ty_args=(R.Tensor([4], "float32"),))
            d = R.call_packed("f", c, ty_args=(R.Tensor([4], "float32"),))
            r = d
        else:
            r = b
        e = R.call_packed("f", r, ty_args=(R.Tensor([4], "float32"),))
        g = R.call_packed("f", e, ty_args=(R.Tensor([4], "float32"),))
        return g


@I.ir_module
class IfExpected:
    """TVM's pass kills inside the branches but emits nothing at or after the If."""

    @R.function(pure=False)
    def main(x: R.Tensor([4], "float32"), cond: R.Prim("bool")):
        a = R.call_packed("f", x, ty_args=(R.Tensor([4], "float32"),))
        b = R.call_packed("f", a, ty_args=(R.Tensor([4], "float32"),))
        _ = R.memory.kill_tensor(a)
        if cond:
            c = R.call_packed("f", b, ty_args=(R.Tensor([4], "float32"),))
            d = R.call_packed("f", c, ty_args=(R.Tensor([4], "float32"),))
            _ = R.memory.kill_tensor(c)
            r = d
        else:
            r = b
        e = R.call_packed("f", r, ty_args=(R.Tensor([4], "float32"),))
        g = R.call_packed("f", e, ty_args=(R.Tensor([4], "float32"),))
        return g


@I.ir_module
class IfBeyond:
    @R.function(pure=False)
    def main(x: R.Tensor([4], "float32"), cond: R.Prim("bool")):
        a = R.call_packed("f", x, ty_args=(R.Tensor([4], "float32"),))
        b = R.call_packed("f", a, ty_args=(R.Tensor([4], "float32"),))
        _ = R.memory.kill_tensor(a)
        if cond:
            c = R.call_packed("f", b, ty_args=(R.Tensor([4], "float32"),))
            d = R.call_packed("f", c, ty_args=(R.Tensor([4], "float32"),))
            _ = R.memory.kill_tensor(c)
            r = d
        else:
            r = b
        _ = R.memory.kill_tensor(b)
        e = R.call_packed("f", r, ty_args=(R.Tensor([4], "float32"),))
        _ = R.memory.kill_tensor(r)
        g = R.call_packed("f", e, ty_args=(R.Tensor([4], "float32"),))
        _ = R.memory.kill_tensor(e)
        return g


case("kills in If branches; none after the If (beyond: kept)", before=IfBefore,
     default=IfExpected, beyond=IfBeyond)  # fmt: skip


@I.ir_module
class BranchLocalBefore:
    @R.function(pure=False)
    def main(x: R.Tensor([4], "float32"), c: R.Prim("bool")):
        a = R.call_packed("f", x, ty_args=(R.Tensor([4], "float32"),))
        if c:
            b = R.call_packed("f", a, ty_args=(R.Tensor([4], "float32"),))
            r = R.call_packed("f", b, ty_args=(R.Tensor([4], "float32"),))
        else:
            r = R.call_packed("f", a, ty_args=(R.Tensor([4], "float32"),))
        d = R.call_packed("f", r, ty_args=(R.Tensor([4], "float32"),))
        e = R.call_packed("f", d, ty_args=(R.Tensor([4], "float32"),))
        return e


@I.ir_module
class BranchLocalExpected:
    @R.function(pure=False)
    def main(x: R.Tensor([4], "float32"), c: R.Prim("bool")):
        a = R.call_packed("f", x, ty_args=(R.Tensor([4], "float32"),))
        if c:
            b = R.call_packed("f", a, ty_args=(R.Tensor([4], "float32"),))
            r_then = R.call_packed("f", b, ty_args=(R.Tensor([4], "float32"),))
            _ = R.memory.kill_tensor(b)
            # a dies here too, but it belongs to the enclosing scope
            r = r_then
        else:
            r = R.call_packed("f", a, ty_args=(R.Tensor([4], "float32"),))
        # TVM's pass emits no kill after the If, in the enclosing scope (for a, r, d)
        d = R.call_packed("f", r, ty_args=(R.Tensor([4], "float32"),))
        e = R.call_packed("f", d, ty_args=(R.Tensor([4], "float32"),))
        return e


@I.ir_module
class BranchLocalBeyond:
    @R.function(pure=False)
    def main(x: R.Tensor([4], "float32"), c: R.Prim("bool")):
        a = R.call_packed("f", x, ty_args=(R.Tensor([4], "float32"),))
        if c:
            b = R.call_packed("f", a, ty_args=(R.Tensor([4], "float32"),))
            r_then = R.call_packed("f", b, ty_args=(R.Tensor([4], "float32"),))
            _ = R.memory.kill_tensor(b)
            r = r_then
        else:
            r = R.call_packed("f", a, ty_args=(R.Tensor([4], "float32"),))
        _ = R.memory.kill_tensor(a)
        d = R.call_packed("f", r, ty_args=(R.Tensor([4], "float32"),))
        _ = R.memory.kill_tensor(r)
        e = R.call_packed("f", d, ty_args=(R.Tensor([4], "float32"),))
        _ = R.memory.kill_tensor(d)
        return e


case("a variable of the enclosing scope is not killed inside a branch", before=BranchLocalBefore,
     default=BranchLocalExpected, beyond=BranchLocalBeyond)  # fmt: skip
