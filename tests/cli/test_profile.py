"""benchkill profile: the steps of the pass are timed with an injected clock."""

from __future__ import annotations

from benchkill.cli.main import main
from benchkill.inputs.families import generate
from benchkill.passes.profile import STEPS, profile_function
from benchkill.relax.counting import count_bindings
from tests.conftest import FakeClock
from tests.passes.test_differential import Dataflow


def _rounds(*rounds, gap=1.0):
    """The intervals of a clock read twice per timed step: each round's step times, each
    followed by ``gap`` (the time between two steps, never a sample)."""
    return [t for times in rounds for step in times for t in (step, gap)]


def test_profile_times_every_step_that_runs():
    # sweep, plan, rebuild, free in three rounds: each step's least time in another round
    times = (0.5, 0.25, 0.75, 0.5), (0.25, 0.75, 0.5, 0.25), (0.75, 0.5, 0.25, 0.75)
    mixed = generate("mixed", 20)  # canonicalized in Python, during the one sweep
    clock = FakeClock(steps=_rounds(*times))
    profile = profile_function(mixed["main"], count_bindings(mixed), repeats=3, clock=clock)
    assert profile.seconds == {"sweep": 0.25, "plan": 0.25, "rebuild": 0.25, "free": 0.25}
    clock = FakeClock(0.5)  # every reading advances 0.5 s
    # a dataflow block goes to the fallback (TVM's pass) once the sweep meets it
    profile = profile_function(Dataflow["main"], 4, repeats=1, clock=clock)
    assert list(profile.seconds) == ["sweep", "fallback"]
    assert set(profile.seconds) <= set(STEPS)
    chain = generate("chain", 20)
    steps = profile_function(chain["main"], 60, repeats=1, clock=clock).per_binding_us()
    assert list(steps) == ["sweep", "plan", "rebuild", "free"]
    assert steps["sweep"] == 0.5 / 60 * 1e6


def test_profile_command(capsys):
    assert main(["profile", "--generate", "chain", "30", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert "chain, 90 bindings" in out and "total" in out
    assert main(["profile", "--generate", "nosuch", "3"]) == 2
    assert "unknown family 'nosuch'" in capsys.readouterr().err


def _kills(func, storage: bool = True) -> int:
    """Kill calls in ``func``; without ``storage`` the kill_storage calls are left out."""
    import tvm

    from benchkill.cli.cmd_apply import count_kills

    counts = count_kills(tvm.IRModule({"main": func}))
    return sum(n for op, n in counts.items() if storage or op != "kill_storage")


def _top_level_bindings(func) -> int:
    return sum(len(block.bindings) for block in func.body.blocks)


def test_the_floor_does_the_passes_unskippable_work():
    """The floor's counts are what benchkill's pass does to the module: its kills, the
    bindings canonicalization removes, the calls it rebuilds; and its run builds them."""
    from benchkill import KillAfterLastUse
    from benchkill.passes.profile import floor_work

    for family, n in (("mixed", 40), ("model", 1), ("chain", 30)):
        mod = generate(family, n)
        func = mod["main"]
        out_mod = KillAfterLastUse()(mod)
        out = out_mod["main"]
        work = floor_work(func)
        assert len(work.kills) == _kills(out) - _kills(func), family
        # the type of every killed variable but a storage is read (the kill's kind)
        typed = sum(typed for _, _, typed in work.kills)
        assert typed == _kills(out, storage=False) - _kills(func, storage=False), family
        assert 0 < typed < len(work.kills), family  # each family has storage and others
        # the bindings canonicalization removes: the input's less the output's own
        assert work.trivial == count_bindings(mod) - (count_bindings(out_mod) - len(work.kills))
        if family != "chain":
            assert work.rebuilt and work.trivial, family  # canonicalization on real IR
        floor = work.run()
        # the body's block holds its bindings, then the rebuilt calls and the kills
        assert _top_level_bindings(floor) == (
            _top_level_bindings(func) + len(work.rebuilt) + len(work.kills)
        )


def test_time_floor_takes_the_minimum_of_interleaved_rounds():
    from benchkill.bench.suites.pass_suite import time_floor
    from benchkill.bench.timing import round_order
    from benchkill.passes.profile import floor_work

    mod = generate("chain", 10)
    names = ["tvm", "benchkill", "floor", "visit"]
    # each function's time per round: the least in different rounds, after a quicker
    # warm-up (never a sample); the clock gives them in the order each round runs them
    times = {
        "tvm": (0.25, 0.1875, 0.5),
        "benchkill": (0.625, 0.75, 1.0),
        "floor": (0.875, 0.5625, 0.75),
        "visit": (0.5, 0.5, 0.375),
    }
    order = [names] + [round_order(names, r) for r in range(3)]
    per_round = [[0.125] * 4] + [[times[n][r] for n in order[r + 1]] for r in range(3)]
    clock = FakeClock(steps=_rounds(*per_round))
    best = time_floor(mod, floor_work(mod["main"]), rounds=3, clock=clock)
    assert best == {"tvm": 0.1875, "benchkill": 0.625, "floor": 0.5625, "visit": 0.375}


def test_profile_floor_command(capsys):
    assert main(["profile", "--generate", "mixed", "30", "--repeats", "1", "--floor"]) == 0
    out = capsys.readouterr().out
    assert "calls re-inferred" in out and "benchkill / floor" in out
    for name in ("tvm", "benchkill", "floor", "visit"):
        assert f"  {name} " in out
    assert "scaling exponents" not in out  # one size: no slope


def test_profile_several_sizes_ends_with_the_exponents(capsys):
    assert main(["profile", "--generate", "chain", "20", "60", "--repeats", "1", "--floor"]) == 0
    out = capsys.readouterr().out
    assert "chain, 60 bindings" in out and "chain, 180 bindings" in out
    last = out.strip().splitlines()[-1]
    assert last.startswith("scaling exponents, 60 to 180 bindings: ")
    names = [part.rsplit(" ", 1)[0] for part in last.split(": ", 1)[1].split(", ")]
    assert names == ["steps total", "tvm", "benchkill", "floor", "visit"]
    # without --floor: the exponent of the steps' total only
    assert main(["profile", "--generate", "chain", "20", "60", "--repeats", "1"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("scaling exponents") and last.count(",") == 1


TWO_FUNCTIONS = """from tvm.script import ir as I
from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        a: R.Tensor((4,), dtype="float32") = x
        b: R.Tensor((4,), dtype="float32") = a
        c: R.Tensor((4,), dtype="float32") = b
        return c

    @R.function
    def decode(x: R.Tensor((4,), dtype="float32")) -> R.Tensor((4,), dtype="float32"):
        y: R.Tensor((4,), dtype="float32") = x
        return y
"""


def test_profile_a_module_file_gives_the_generated_modules_figures(tmp_path, capsys):
    """A lowered module written as TVMScript (what a user dumps before the kill step) is
    profiled like the generated one it came from: same bindings, every timing."""
    mod = generate("mixed", 20)
    path = tmp_path / "kill_input.py"
    path.write_text(mod.script())
    assert main(["profile", str(path), "--repeats", "1", "--floor"]) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith(f"{path}, function main, {count_bindings(mod)} bindings")
    assert "calls re-inferred" in out and "benchkill / visit" in out


def test_profile_func_picks_one_relax_function_as_main(tmp_path, capsys):
    from benchkill.cli.cmd_profile import only_function
    from benchkill.relax.text import read_module

    path = tmp_path / "two.py"
    path.write_text(TWO_FUNCTIONS)
    mod = read_module(path)
    chain = generate("chain", 2)  # a module with kernels (PrimFuncs)
    for name, bindings in (("main", 3), ("decode", 1)):
        one = only_function(mod, name, path)
        assert [gv.name_hint for gv, _ in one.functions_items()] == ["main"]
        assert count_bindings(one) == bindings
        assert main(["profile", str(path), "--func", name, "--repeats", "1"]) == 0
        assert f"function {name}, {bindings} bindings" in capsys.readouterr().out
    kept = only_function(chain, "main", "chain")
    assert {gv.name_hint for gv, _ in kept.functions_items()} == {
        gv.name_hint for gv, _ in chain.functions_items()
    }  # the kernels stay


HIGH_LEVEL = """from tvm.script import ir as I
from tvm.script import relax as R

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((8, 8), dtype="float32")) -> R.Tensor((8, 8), dtype="float32"):
        with R.dataflow():
            a = R.matmul(x, x)
            b = R.nn.relu(a)
            c = R.add(b, x)
            R.output(c)
        return c
"""


def test_profile_lower_profiles_the_form_relax_build_gives_the_pass(tmp_path, capsys):
    from benchkill.relax.lowering import lower_to_kill_input
    from benchkill.relax.text import read_module

    path = tmp_path / "model.py"
    path.write_text(HIGH_LEVEL)
    lowered = count_bindings(lower_to_kill_input(read_module(path)))
    assert lowered > count_bindings(read_module(path))  # allocations and kernel calls
    assert main(["profile", str(path), "--lower", "--repeats", "1", "--floor"]) == 0
    out = capsys.readouterr().out
    assert f"function main, {lowered} bindings" in out
    assert "calls re-inferred" in out  # lowered IR: benchkill's own sweep, not the fallback
    # as written (a dataflow block), the sweep hands the function to TVM's pass
    assert main(["profile", str(path), "--repeats", "1"]) == 0
    assert "fallback" in capsys.readouterr().out
