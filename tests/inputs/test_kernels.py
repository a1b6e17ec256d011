"""The shared PrimFuncs and IR leaves: the kernels compute what they are named for, for any
shape, and the leaves are typed like the kernels and the operator table."""

from __future__ import annotations

import numpy as np
import pytest
import tvm

from benchkill.inputs.kernels import KERNELS, Atoms, kernels
from benchkill.relax import ops


@pytest.mark.parametrize("shape", [(4,), (3, 5), (2, 3, 2)])
def test_kernels_compute_their_documented_values(shape):
    module = kernels(shape)
    assert sorted(gv.name_hint for gv in module.get_global_vars()) == sorted(KERNELS)
    exported = tvm.IRModule(
        {
            gv.name_hint: f.with_attr("global_symbol", gv.name_hint)
            for gv, f in module.functions_items()
        }
    )
    lib = tvm.compile(exported, target="llvm")
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(shape).astype("float32") for _ in range(3))
    s = np.array(3, "float32")
    expected = {
        "unary": ((a,), a * 0.5 + 1),
        "binary": ((a, b), (a + b) * 0.5),
        "ternary": ((a, b, c), (a + b + c) * 0.25),
        "scale": ((a, s), a * s),
    }
    for name, (inputs, want) in expected.items():
        out = tvm.runtime.tensor(np.zeros(shape, "float32"))
        lib[name](*(tvm.runtime.tensor(x) for x in inputs), out)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-6, err_msg=name)


def test_kernels_are_parsed_once_per_shape():
    assert kernels((4,)) is kernels((4,))
    assert kernels((4,)) is not kernels((16, 16))


def test_atoms_match_the_kernels_and_the_operator_table():
    atoms = Atoms((3, 5))
    assert [int(d) for d in atoms.shape.values] == [3, 5]
    assert atoms.tensor_ty.dtype == "float32" and atoms.tensor_bytes == 3 * 5 * 4
    assert [int(d) for d in atoms.storage_bytes.values] == [60]
    module = kernels((3, 5))
    for name, gv in atoms.kernel_vars.items():
        tvm.ir.assert_structural_equal(gv.ty, module.get_global_var(name).ty)
    functions = atoms.kernel_functions(("unary",))
    assert list(functions) == [atoms.kernel_vars["unary"]]
    assert functions[atoms.kernel_vars["unary"]].same_as(module["unary"])
    assert {
        atoms.op_alloc_storage.name,
        atoms.op_vm_alloc_storage.name,
        atoms.op_alloc_tensor.name,
        atoms.op_vm_alloc_tensor.name,
    } == {*ops.ALLOC_STORAGE, *ops.ALLOC_TENSOR}
    assert [
        atoms.op_kill_tensor.name,
        atoms.op_kill_storage.name,
        atoms.op_kill_object.name,
    ] == list(ops.KILLS)
    assert atoms.op_null_value.name == ops.NULL_VALUE
