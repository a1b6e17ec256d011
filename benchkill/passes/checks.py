"""The sweep's checks of the rebuild rules of TVM's pass that benchkill hands to the fallback
(rules 2, 3, 5b, 9 and 10 of :mod:`.canonicalize`, which lists every rule with its TVM
source); each raises :class:`.canonicalize.Unsupported`."""

from __future__ import annotations

import tvm
import tvm_ffi
from tvm import relax

from benchkill.passes.canonicalize import Unsupported, same_type, tir_vars_in_type
from benchkill.relax import ffi as ir

_erase = ir.held("relax.analysis.EraseToWellDefined")
#: Results a scope may have without the Normalizer binding them to a new variable.
_NOT_LEAVES = (ir.Call, ir.TupleGetItem, ir.If, ir.SeqExpr, ir.Function)


def is_void_type(ty) -> bool:
    """The void type ``R.Tuple()``."""
    return type(ty) is relax.TupleType and not ir.array_size(ty.fields)


def is_void_var(expr) -> bool:
    """A Var (not a DataflowVar) of type ``R.Tuple()``, which the Normalizer replaces."""
    return type(expr) is ir.Var and is_void_type(expr.ty)


class FunctionChecks:
    """Rules 2, 3, 5b and 10 of the module docstring on one function, checked by the sweep
    (each raises :class:`Unsupported`: the function then goes to the fallback)."""

    __slots__ = ("func", "_defined", "_scanned", "_well_defined")

    def __init__(self, func) -> None:
        self.func = func
        #: handle -> TIR variable, of those the parameters scanned so far define
        self._defined: dict[int, object] = {}
        self._scanned = 0  # parameters scanned (in order) for :attr:`_defined`
        #: handles of the scope types that TVM's rebuild keeps as they are (rule 10); the
        #: types are held by the function, so a handle names one type during the pass
        self._well_defined: set[int] = set()

    def function(self) -> None:
        """Rule 2 (the return type TVM's rebuilt Function gets) and 5b (void parameters)."""
        func = self.func
        ret, body = func.ret_ty, func.body.ty
        if not same_type(ret, body) and not (body.is_base_of(ret) and not ret.is_base_of(body)):
            raise Unsupported("a return type TVM's rebuild replaces")
        for param in ir.items(func.params):
            if is_void_var(param):
                raise Unsupported("a parameter of void type")

    def scope(self, seq, body, has_blocks: bool) -> None:
        """Rules 5b, 9 and 10 on one SeqExpr (after its bindings were swept); ``body``: its
        result, as the sweep read it."""
        kind = type(body)
        if kind in _NOT_LEAVES:
            raise Unsupported("a scope result that is not normalized")
        ty = None
        if kind is ir.Var:
            ty = body.ty  # read once: the type checks below need it too
            if is_void_type(ty):
                raise Unsupported("a void variable as a scope result")
        elif kind is ir.Tuple:
            for field in ir.items(body.fields):
                if type(field) in _NOT_LEAVES or is_void_var(field):
                    raise Unsupported("a tuple result that is not normalized")
        if not has_blocks:
            return  # TVM's mutators leave it as it is
        if ty is None:
            ty = body.ty
        if not same_type(seq.ty, ty):
            raise Unsupported("a scope whose type is not its result's")
        h = ty.__chandle__()
        if h in self._well_defined:
            return  # one type object, erased before (If branches often share theirs)
        if not _erase(ty, _EMPTY_MAP, _EMPTY_MAP).same_as(ty):
            if not _erase(ty, self._defined_in(ty), _EMPTY_MAP).same_as(ty):
                raise Unsupported("a scope type TVM's rebuild erases")
        self._well_defined.add(h)

    def _defined_in(self, ty):
        """The map, each to itself, of the TIR variables of ``ty`` that the parameters'
        types define (see :func:`_defined_by`).  The erasure reads only the variables of
        ``ty``, so this gives its result; the parameters are scanned, in order and once per
        function, only until every variable of ``ty`` is found (a decoder's sequence
        length is defined by its first parameter, before hundreds of weights)."""
        needed = {v.__chandle__() for v in ir.items(tir_vars_in_type(ty))}
        defined = self._defined
        params = self.func.params
        n_params = ir.array_size(params)
        while self._scanned < n_params and not needed <= defined.keys():
            param = ir.array_get(params, self._scanned)
            self._scanned += 1
            for var in _defined_by([param]):
                defined[var.__chandle__()] = var
        return tvm_ffi.convert({var: var for h, var in defined.items() if h in needed})

    @staticmethod
    def if_binding(var, value, true_branch, false_branch) -> None:
        """Rules 1 and 3 on a binding of an If (``true_branch`` and ``false_branch``: its
        branches, as the sweep read them): TVM wraps a branch whose type is not the If's,
        and gives the If's variable the rebuilt If's type."""
        ty = value.ty
        if not (
            same_type(var.ty, ty)
            and same_type(true_branch.ty, ty)
            and same_type(false_branch.ty, ty)
        ):
            raise Unsupported("an If whose branches or variable have other types")


_EMPTY_MAP = tvm_ffi.convert({})


def _defined_by(params: list) -> dict:
    """TIR variables that the parameters' types define (a subset of what TVM's scope holds:
    a single-variable dimension of a tensor or shape parameter), each mapped to itself."""
    defined = {}
    for param in params:
        ty = param.ty
        if type(ty) is ir.TensorType:
            shape = ty.shape
            values = shape.values if type(shape) is ir.ShapeExpr else ()
        elif type(ty) is ir.ShapeType:
            values = ty.values or ()
        else:
            continue
        for value in ir.items(values) if values else ():
            if isinstance(value, tvm.tirx.Var):
                defined[value] = value
    return defined
