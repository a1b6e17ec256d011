"""One activation of a Relax function in the abstract execution of :mod:`.liveness`: its
registers and the values of its symbolic dimensions, given by the input shapes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchkill.errors import BenchkillError


class Frame:
    """One function activation: its registers and the values of its shape variables."""

    def __init__(self, name: str, path: str | None = None) -> None:
        self.name = name
        self.path = path or name  # where the activation is: caller frames and bindings
        self.regs: dict[Any, Any] = {}
        self.symbols: dict[int, tuple[Any, int]] = {}  # handle -> (tir var, value)
        self._analyzer: Any = None

    def bind(self, var: Any, value: int) -> None:
        key = var.__chandle__()
        if key in self.symbols:
            return
        self.symbols[key] = (var, value)
        if self._analyzer is not None:
            self._analyzer.bind(var, value)

    def value_of(self, expr: Any) -> int | None:
        """The integer value of a PrimExpr, or None if it depends on unknown symbols."""
        import tvm

        if isinstance(expr, tvm.tirx.IntImm):
            return int(expr.value)
        if self._analyzer is None:
            import tvm.sym

            self._analyzer = tvm.sym.Analyzer()
            for var, value in self.symbols.values():
                self._analyzer.bind(var, value)
        folded = self._analyzer.simplify(expr)
        return int(folded.value) if isinstance(folded, tvm.tirx.IntImm) else None

    def size_of(self, expr: Any) -> int:
        """The integer value of a size expression; BenchkillError if it is symbolic."""
        value = self.value_of(expr)
        if value is None:
            raise BenchkillError(
                f"size {expr} in function {self.name!r} depends on symbolic dimensions "
                "without a value; pass input_shapes"
            )
        return value


def shape_values(ty: Any) -> list[Any] | None:
    """The dimension expressions of a tensor or shape type (None if unknown)."""
    from tvm import relax

    if isinstance(ty, relax.TensorType):
        shape = ty.shape
        return list(shape.values) if isinstance(shape, relax.ShapeExpr) else None
    if isinstance(ty, relax.ShapeType):
        return list(ty.values) if ty.values is not None else None
    return None


def bind_shape(frame: Frame, ty: Any, concrete: Sequence[int] | None) -> None:
    """Give the symbolic dimensions of ``ty`` the values of a concrete shape."""
    import tvm

    dims = shape_values(ty)
    if dims is None or concrete is None or len(dims) != len(concrete):
        return
    for dim, value in zip(dims, concrete, strict=True):
        if value is not None and isinstance(dim, tvm.tirx.Var):
            frame.bind(dim, int(value))


def concrete_shape(frame: Frame, ty: Any) -> list[int | None] | None:
    """The dimensions of ``ty`` as far as ``frame`` knows their values (None: unknown)."""
    dims = shape_values(ty)
    return None if dims is None else [frame.value_of(d) for d in dims]


def entry_shapes(
    fn: Any, input_shapes: Mapping[str, Sequence[int]] | Sequence[Any] | None
) -> list[Any]:
    """The concrete shape given for each parameter of the entry function (or None)."""
    params = list(fn.params)
    if input_shapes is None:
        return [None] * len(params)
    if isinstance(input_shapes, Mapping):
        names = {p.name for p in params}
        unknown = sorted(set(input_shapes) - names)
        if unknown:
            raise BenchkillError(f"input_shapes names unknown parameter(s): {', '.join(unknown)}")
        return [input_shapes.get(p.name) for p in params]
    shapes = list(input_shapes)
    if len(shapes) != len(params):
        raise BenchkillError(
            f"input_shapes has {len(shapes)} entries; the function has {len(params)} parameters"
        )
    return shapes
