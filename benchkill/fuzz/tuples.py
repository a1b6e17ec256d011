"""The tuple statements of the lowered-module strategy, mixed into
:class:`benchkill.fuzz.lowered._Program`: tuple literals, ``TupleGetItem`` of literals and
of opaque pairs, and ``(t[0], t[1])`` of a pair, each bound as CanonicalizeBindings will
see it (:meth:`Tuples.literal`): an item of a literal is its field, a re-tupled parameter
pair is the parameter, any other re-tupled pair an opaque pair whose items are not its
fields.  Which variable a kill may name depends on these aliases, so they live together.
"""

from __future__ import annotations

import numpy as np
import tvm.ir._ffi_api as _ir_ffi
from hypothesis import strategies as st
from tvm import relax

from benchkill.fuzz.values import (
    CONST,
    LITERAL,
    LOOSE,
    NULL,
    OBJECT,
    PAIR,
    SHAPE,
    STORAGE,
    TENSOR,
    Value,
)


class Tuples:
    """Tuple statements; the program's ``draw``, ``pick``, ``bind`` and atoms ``a`` come
    from :class:`benchkill.fuzz.lowered._Program`."""

    def stmt_tuple(self) -> None:
        fields = []
        for _ in range(self.draw(st.integers(1, 3))):
            if self.draw(st.integers(0, 5)) == 0:  # an inline constant field
                fields.append(Value(relax.const(np.float32(0.5), "float32"), CONST))
                continue
            # no PrimType field: TVMScript cannot parse R.Tuple(T.bool) back inside a module
            picked = self.pick((TENSOR, OBJECT, STORAGE, CONST, NULL, SHAPE, PAIR, LOOSE, LITERAL))
            if picked is not None:
                fields.append(picked)
        if fields:
            self.literal(fields)

    def stmt_retuple(self) -> None:
        """``(t[0], t[1])`` of a pair that is not a literal (see :meth:`literal`)."""
        picked = self.pick((PAIR,))
        if picked is None:
            return
        first, second = (self.item_of(picked, index) for index in (0, 1))
        self.literal([first, second])

    def literal(self, fields: list[Value]) -> Value:
        """A tuple of ``fields``.  Like CanonicalizeBindings, ``(t[0], t[1])`` of a pair ``t``
        that is not a literal is ``t`` itself when ``t`` is a parameter, and an opaque pair
        (whose items are not its fields) otherwise."""
        value = _ir_ffi.Tuple([f.var for f in fields], None)
        items = [f.root.item for f in fields]
        if len(items) == 2 and all(items) and items[0][0] is items[1][0]:
            if (items[0][1], items[1][1]) == (0, 1):
                source = items[0][0]
                root = source if source.param else None
                return self.bind(PAIR, self.a.pair, value, "copy", root=root)
        return self.bind(LITERAL, value.ty, value, "tup", fields=fields)

    def item_of(self, pair: Value, index: int) -> Value:
        a = self.a
        kind, ty = ((TENSOR, a.tensor_ty), (OBJECT, a.any_ty))[index]
        item = self.bind(kind, ty, _ir_ffi.TupleGetItem(pair.var, index, None), "item")
        item.item = (pair.root, index)
        return item

    def stmt_item(self) -> None:
        picked = self.pick((PAIR, LITERAL))
        if picked is None:
            return
        arity = len(picked.fields) if picked.kind == LITERAL else 2
        index = self.draw(st.integers(0, arity - 1))
        if picked.kind == LITERAL:  # CanonicalizeBindings replaces it by the field
            field = picked.fields[index]
            value = _ir_ffi.TupleGetItem(picked.var, index, None)
            self.bind(field.kind, field.var.ty, value, "item", root=field.root, fields=field.fields)
        else:
            self.item_of(picked, index)
