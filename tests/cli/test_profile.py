"""benchkill profile: the steps of the pass are timed with an injected clock."""

from __future__ import annotations

from benchkill.cli.main import main
from benchkill.inputs.families import count_bindings, generate
from benchkill.passes.profile import STEPS, profile_function
from tests.conftest import FakeClock
from tests.passes.test_differential import Dataflow


def test_profile_times_every_step_that_runs():
    clock = FakeClock(0.5)  # every reading advances 0.5 s
    mixed = generate("mixed", 20)  # canonicalized in Python, during the one sweep
    profile = profile_function(mixed["main"], count_bindings(mixed), repeats=2, clock=clock)
    assert list(profile.seconds) == ["sweep", "plan", "rebuild", "free"]
    assert set(profile.seconds.values()) == {0.5}
    # a dataflow block goes to the fallback (TVM's pass) once the sweep meets it
    profile = profile_function(Dataflow["main"], 4, repeats=1, clock=clock)
    assert list(profile.seconds) == ["sweep", "fallback"]
    assert set(profile.seconds) <= set(STEPS)
    chain = generate("chain", 20)
    steps = profile_function(chain["main"], 60, repeats=1, clock=clock).per_binding_us()
    assert list(steps) == ["sweep", "plan", "rebuild", "free"]
    assert steps["sweep"] == 0.5 / 60 * 1e6


def test_profile_command(capsys):
    assert main(["profile", "chain", "30", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "chain, 90 bindings" in out and "total" in out
    assert main(["profile", "nosuch", "3"]) == 2
    assert "unknown family 'nosuch'" in capsys.readouterr().err
