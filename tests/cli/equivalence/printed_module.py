# ruff: noqa
# A module as benchkill apply / TVMScript's printer writes it: the imports are comments.
# from tvm.script import ir as I
# from tvm.script import relax as R


@I.ir_module
class Module:
    @R.function(pure=False)
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        a: R.Tensor((4,), dtype="float32") = R.call_packed(
            "f", x, ty_args=(R.Tensor((4,), dtype="float32"),)
        )
        y = a
        b: R.Tensor(ndim=1) = R.call_packed("f", y, ty_args=(R.Tensor((4,), dtype="float32"),))
        return b
