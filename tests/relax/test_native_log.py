"""TVM's C++ warnings stay off the terminal during benchkill's lowering and builds."""

from __future__ import annotations

import logging
import os

import tvm

from benchkill.cli.main import main
from benchkill.inputs.models import decoder
from benchkill.relax.lowering import before_kill, lower_to_kill_input
from benchkill.relax.native_log import tvm_log_captured

WARNING = "Fast mode segfaults"  # LegalizeOps of R.take (topi/transform.h)


def test_tvm_warns_on_its_own(capfd):
    """The control: TVM's lowering of the decoder's embedding prints the warning."""
    tvm.transform.Sequential(before_kill())(decoder(1, 64))
    assert WARNING in capfd.readouterr().err


def test_benchkill_lowering_keeps_it_in_the_log(capfd, caplog):
    with caplog.at_level(logging.DEBUG, logger="benchkill.tvm"):
        lower_to_kill_input(decoder(1, 64))
    assert WARNING not in capfd.readouterr().err
    assert any(WARNING in r.getMessage() for r in caplog.records)


def test_capture_restores_stderr_and_nests(capfd, caplog):
    with caplog.at_level(logging.DEBUG, logger="benchkill.tvm"):
        with tvm_log_captured():
            os.write(2, b"outer\n")
            with tvm_log_captured():
                os.write(2, b"inner\n")
        os.write(2, b"after\n")
    assert capfd.readouterr().err == "after\n"
    assert [r.getMessage() for r in caplog.records] == ["outer", "inner"]


def test_verbose_flag_prints_the_lines(capsys):
    logger = logging.getLogger("benchkill.tvm")
    before = list(logger.handlers), logger.level
    try:
        assert main(["-v", "generate", "chain", "2"]) == 0
        logger.debug("a TVM line")
        assert "tvm: a TVM line" in capsys.readouterr().err
    finally:
        logger.handlers[:], _ = before
        logger.setLevel(before[1])
