"""A file whose second module kills the process that builds it, and whose third hangs
(written for benchkill's tests: the child process is restarted after each)."""

import os
import signal
import time

from tvm.script import ir as I
from tvm.script import relax as R


def test_first():
    @I.ir_module
    class First:
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            y = R.add(x, x)
            return y


def test_crash():
    crash = os.kill(os.getpid(), signal.SIGSEGV)  # noqa: F841 (kept: an assignment)

    @I.ir_module
    class Crash:
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            return x


def test_hang():
    hang = time.sleep(600)  # noqa: F841 (kept: an assignment)

    @I.ir_module
    class Hang:
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            return x


def test_last():
    @I.ir_module
    class Last:
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            y = R.multiply(x, x)
            return y
