"""The pass suite and its interleaved timer, driven by a fake clock (no timing asserts)."""

from __future__ import annotations

import gc
import weakref

import pytest
import tvm
from tvm import relax

from benchkill.bench.model import FAILED, OK, Record
from benchkill.bench.suites import load_suite
from benchkill.bench.suites import pass_suite as ps
from benchkill.bench.timing import budget_repeats, interleave, peak_python_memory, round_order
from benchkill.errors import BenchkillError
from benchkill.inputs.families import FAMILIES
from benchkill.passes.naive import NaiveKillAfterLastUse
from tests.conftest import FakeClock

# --- timing ------------------------------------------------------------------------


def test_interleave_rotates_the_rounds_and_keeps_warmup_outputs():
    calls = []

    def make(name):
        def fn():
            calls.append(name)
            return f"out-{name}-{len(calls)}"

        return fn

    result = interleave(
        {"a": make("a"), "b": make("b"), "c": make("c")}, repeats=2, warmup=1, clock=FakeClock(0.5)
    )
    # warm-up in the given order, then each timed round starts one further on
    assert calls == ["a", "b", "c"] + ["a", "b", "c"] + ["b", "c", "a"]
    assert result.samples == {"a": (0.5, 0.5), "b": (0.5, 0.5), "c": (0.5, 0.5)}
    assert result.warmup == {"a": (0.5,), "b": (0.5,), "c": (0.5,)}
    assert result.outputs == {"a": "out-a-1", "b": "out-b-2", "c": "out-c-3"}


def test_interleave_repeats_can_depend_on_warmup_times():
    seen = {}

    def repeats(warm):
        seen.update(warm)
        return 4

    result = interleave({"x": lambda: None}, repeats=repeats, warmup=2, clock=FakeClock(2.0))
    assert seen == {"x": (2.0, 2.0)}
    assert len(result.samples["x"]) == 4


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_interleave_rejects_bad_repeats(bad):
    with pytest.raises(BenchkillError):
        interleave({"x": lambda: None}, repeats=bad, clock=FakeClock())
    with pytest.raises(BenchkillError):
        interleave({}, repeats=1)


def test_budget_repeats_fits_the_budget_within_bounds():
    budget = budget_repeats(10.0, minimum=3, maximum=15)
    assert budget.rounds(2.5) == 4  # 10 / 2.5
    assert budget.rounds(0.01) == 15
    assert budget.rounds(60.0) == 3
    assert budget.rounds(0.0) == 15
    with pytest.raises(BenchkillError):
        budget_repeats(1.0, minimum=5, maximum=2)


def test_interleave_with_a_budget_decides_the_rounds_after_the_first():
    calls = []
    functions = {name: (lambda name=name: calls.append(name)) for name in "ab"}
    # each run takes 1 s: the first round takes 2 s, 7 s hold 3 rounds in all
    result = interleave(functions, repeats=budget_repeats(7.0, 2, 10), clock=FakeClock(1.0))
    assert result.samples == {"a": (1.0,) * 3, "b": (1.0,) * 3}
    assert calls == ["a", "b"] * 2 + ["b", "a", "b", "a"]  # warm-up and three rounds


def test_no_function_always_runs_first_or_after_the_same_one():
    calls = []
    names = "abc"
    functions = {name: (lambda name=name: calls.append(name)) for name in names}
    interleave(functions, repeats=6, warmup=1, clock=FakeClock())
    rounds = [calls[i : i + 3] for i in range(3, len(calls), 3)]
    firsts = [r[0] for r in rounds]
    assert sorted(firsts) == sorted(names * 2)  # each first in one round of three
    after_a = {r[r.index("a") - 1] for r in rounds if r.index("a") > 0}
    assert after_a == {"b", "c"}


def test_rotation_keeps_the_samples_of_one_round_together():
    # each function's n-th sample comes from round n, whatever its place in the round
    clock = FakeClock(1.0)
    ticks = {}

    def make(name):
        def fn():
            ticks.setdefault(name, []).append(clock.now)

        return fn

    result = interleave({n: make(n) for n in "ab"}, repeats=4, clock=clock)
    assert len(result.samples["a"]) == len(result.samples["b"]) == 4
    for i in range(4):  # both runs of round i happen between those of rounds i-1 and i+1
        assert abs(ticks["a"][i + 1] - ticks["b"][i + 1]) < 4
    assert [round_order([1, 2, 3], i) for i in (0, 1, 2, 3, 4, 5, 6)] == [
        [1, 2, 3], [2, 3, 1], [3, 1, 2], [3, 2, 1], [1, 3, 2], [2, 1, 3], [1, 2, 3]
    ]  # fmt: skip
    assert round_order([1], 7) == [1]


def test_a_function_with_its_own_budget_stops_before_going_over():
    functions = {"fast": lambda: None, "slow": lambda: None}
    result = interleave(
        functions,
        repeats=5,
        clock=FakeClock(1.0),  # every run takes 1 s
        cpu_clock=FakeClock(0.25),
        budgets={"slow": 2.5},
    )
    assert result.samples["fast"] == (1.0,) * 5
    assert result.samples["slow"] == (1.0, 1.0)  # a third would make 3 s
    assert result.cpu_samples["slow"] == (0.25, 0.25)
    # at least one round, even over the budget
    result = interleave(functions, repeats=3, clock=FakeClock(1.0), budgets={"slow": 0.1})
    assert result.samples["slow"] == (1.0,)


def test_a_function_over_its_budget_in_warmup_has_the_warmup_as_sample():
    functions = {"fast": lambda: None, "slow": lambda: None}
    result = interleave(
        functions, repeats=2, clock=FakeClock(1.0), cpu_clock=FakeClock(0.25), budgets={"slow": 0.5}
    )
    assert result.samples == {"fast": (1.0, 1.0), "slow": (1.0,)}
    assert result.cpu_samples == {"fast": (0.25, 0.25), "slow": (0.25,)}
    assert result.from_warmup == {"slow"}
    # a traced warm-up is never a sample: one timed round instead
    traced = interleave(
        functions, repeats=2, clock=FakeClock(1.0), budgets={"slow": 0.5}, trace_memory=True
    )
    assert traced.samples["slow"] == (1.0,) and not traced.from_warmup


def test_check_sees_the_warmup_outputs_and_the_rounds_run_without_them():
    seen = {}

    def check(outputs):
        seen.update(outputs)
        return "verdict"

    counter = iter(range(100))
    result = interleave(
        {"x": lambda: f"out{next(counter)}"}, repeats=2, clock=FakeClock(), check=check
    )
    assert seen == {"x": "out0"} and result.checked == "verdict"
    assert result.outputs == {"x": None}  # released before the timed rounds


def test_interleave_traces_the_first_warmup_run():
    result = interleave(
        {"big": lambda: bytearray(3_000_000), "none": lambda: None},
        repeats=1,
        warmup=2,
        trace_memory=True,
    )
    assert result.peak_memory["big"] >= 3_000_000
    assert result.peak_memory["none"] < 100_000
    assert interleave({"x": lambda: None}, repeats=1).peak_memory is None


def test_peak_python_memory_sees_a_python_allocation():
    assert peak_python_memory(lambda: bytearray(4_000_000)) >= 4_000_000
    assert peak_python_memory(lambda: None) < 100_000


# --- cases -------------------------------------------------------------------------


def test_suite_is_registered():
    assert load_suite("pass") is ps
    assert ps.NAME == "pass"


def test_cases_cover_families_and_sizes_with_unique_keys(monkeypatch):
    monkeypatch.setattr(ps, "missing", lambda: "no models")  # the real family: its own test
    full = ps.cases(quick=False)
    assert {(c.params["family"], c.params["bindings"]) for c in full} == {
        (f, b) for f in FAMILIES if f != "model" for b in ps.SIZES
    } | {("model", b) for b in ps.MODEL_SIZES}
    assert set(ps.GENERATED) | {"model"} == set(FAMILIES)
    sizes = [c.params["bindings"] for c in full]
    assert sizes == sorted(sizes)  # smallest first
    assert len({c.key for c in full}) == len(full)
    assert ps.min_repeats(600_000) < ps.min_repeats(3_000)  # the largest sampled fewer times
    chain_3k = next(
        c for c in full if (c.params["family"], c.params["bindings"]) == ("chain", 3000)
    )
    assert chain_3k.params["n_ops"] == 1000 and chain_3k.params["seed"] == ps.SEED
    quick = ps.cases(quick=True)
    assert [(c.params["family"], c.params["bindings"]) for c in quick] == list(ps.QUICK)
    assert max(c.params["bindings"] for c in quick) <= 3_000


# --- run_case ----------------------------------------------------------------------


def _by(records: list[Record]) -> dict[tuple[str, str], Record]:
    return {(r.params["impl"], r.metric): r for r in records}


def test_run_case_records_with_a_fake_clock():
    spec = ps.case("mixed", 60)
    records = ps.run_case(spec, clock=FakeClock(1.0), cpu_clock=FakeClock(0.5))
    by = _by(records)
    metrics = (ps.TIME, ps.CPU_TIME, ps.MEMORY)
    assert set(by) == {(impl, metric) for impl in ps.IMPLS for metric in metrics} | {
        ("benchkill", ps.SPEEDUP),
        (ps.FLOOR, ps.TIME),
        (ps.FLOOR, ps.CPU_TIME),
        ("benchkill", ps.OVER_FLOOR),
    }
    # every clock reading advances 1 s, so a run "takes" 1 s: benchkill's first round
    # predicts 5 rounds in the budget of 5 s; TVM's budget of 10 s holds them all, the
    # naive port's of 1.5 s one, and the floor's of 1.5 s (in the same rounds) one
    rounds = {"benchkill": 5, "tvm": 5, "naive": 1, ps.FLOOR: 1}
    for impl in (*ps.IMPLS, ps.FLOOR):
        time_record = by[(impl, ps.TIME)]
        assert time_record.samples == (1.0,) * rounds[impl]
        assert time_record.unit == "seconds" and time_record.status == OK
        assert "sample_is_warmup" not in time_record.extra
        assert time_record.extra["warmup_seconds"] == [1.0]
        assert time_record.extra["generate_seconds"] == 1.0
        assert time_record.params == {**spec.params, "impl": impl}
        cpu_record = by[(impl, ps.CPU_TIME)]
        assert cpu_record.samples == (0.5,) * rounds[impl] and cpu_record.unit == "seconds"
        if impl != ps.FLOOR:  # not traced
            memory = by[(impl, ps.MEMORY)]
            assert memory.unit == "bytes" and len(memory.samples) == 1
    assert by[("benchkill", ps.MEMORY)].samples[0] > 0  # its sweep's dicts and wrappers
    speedup = by[("benchkill", ps.SPEEDUP)]
    assert speedup.unit == "ratio" and speedup.samples == (1.0,) * 5
    over = by[("benchkill", ps.OVER_FLOOR)]  # the one round the floor ran in
    assert over.unit == "ratio" and over.samples == (1.0,) and over.extra["denominator"] == "floor"
    assert all(r.extra["bindings_actual"] > 0 and r.suite == "pass" for r in records)


def test_naive_stops_at_its_budget(monkeypatch):
    monkeypatch.setattr(ps, "NAIVE_BUDGET_SECONDS", 2.5)
    by = _by(ps.run_case(ps.case("chain", 30), clock=FakeClock(1.0)))
    assert len(by[("naive", ps.TIME)].samples) == 2  # a third would make 3 s
    assert len(by[("tvm", ps.TIME)].samples) == 5


def test_the_naive_port_runs_in_rounds_of_its_own_after_benchkill_and_tvm():
    """In benchkill's and TVM's rounds the naive port slowed benchkill's pass more than
    TVM's (the model's benchkill / TVM: 0.48 without it, 0.49-0.52 with it), so it runs
    after them, its output checked against a run of TVM's pass of its own."""
    calls = []

    def logged(name, pass_):
        def run(mod):
            calls.append(name)
            return pass_(mod)

        return run

    passes = {name: logged(name, p) for name, p in ps.implementations().items()}
    records = ps.run_case(ps.case("chain", 30), clock=FakeClock(1.0), passes=passes)
    # a warm-up and 5 rounds of benchkill, TVM and the floor (not logged), rotated:
    # b t f, t f b, f b t, f t b, b f t; the naive port's warm-up, TVM's pass for its
    # check, then the one round of 1 s in its budget of 1.5 s
    pair, swapped = ["benchkill", "tvm"], ["tvm", "benchkill"]
    rounds = pair + swapped + pair + swapped + pair
    assert calls == pair + rounds + ["naive", "tvm"] + ["naive"] * 1
    assert all(r.status == OK for r in records), [r.error for r in records]
    assert len(_by(records)[("naive", ps.TIME)].samples) == 1


def test_tvm_over_its_budget_has_its_warmup_as_sample_and_no_memory_above_the_cap(monkeypatch):
    monkeypatch.setattr(ps, "TVM_BUDGET_SECONDS", 0.5)
    monkeypatch.setattr(ps, "MEMORY_MAX_BINDINGS", 10)
    spec = ps.case("chain", 30)
    by = _by(ps.run_case(spec, clock=FakeClock(1.0), cpu_clock=FakeClock(0.25)))
    tvm_time = by[("tvm", ps.TIME)]
    assert tvm_time.samples == (1.0,) and tvm_time.extra["sample_is_warmup"] is True
    assert by[("tvm", ps.CPU_TIME)].samples == (0.25,)
    assert len(by[("benchkill", ps.TIME)].samples) == 5
    assert by[("benchkill", ps.SPEEDUP)].samples == (1.0,)  # the one pair
    assert not [key for key in by if key[1] == ps.MEMORY]  # 30 bindings > 10


def test_model_case_runs_on_a_real_decoder():
    spec = ps.case("model", 300)
    assert spec.params["n_ops"] == 5  # layers
    records = ps.run_case(spec, clock=FakeClock(), naive_max_bindings=0)
    assert all(r.status == OK for r in records), [r.error for r in records]
    assert {r.extra["bindings_actual"] for r in records} == {330}


def test_a_case_keeps_neither_its_module_nor_any_output_alive(monkeypatch):
    """Nothing of a case outlives it: a module left alive slows TVM's pass on the next
    cases (README "A module left alive slows TVM's pass"), as the decoders cached for the
    whole process did before e2dc6fd.  Weak references to the module each case generates
    and to every pass output (warm-up and timed rounds) must all be dead once the case has
    returned; ``gc.collect`` first, so only a real holder (a cache) keeps one."""
    made, real_generate = [], ps.pass_input

    def generate(*args):
        mod = real_generate(*args)
        made.append(weakref.ref(mod))
        return mod

    def recording(pass_):
        def run(mod):
            out = pass_(mod)
            made.append(weakref.ref(out))
            return out

        return run

    monkeypatch.setattr(ps, "pass_input", generate)
    for family, bindings in (("model", 300), ("chain", 1000)):
        passes = {name: recording(p) for name, p in ps.implementations(True).items()}
        records = ps.run_case(ps.case(family, bindings), clock=FakeClock(), passes=passes)
        assert all(r.status == OK for r in records), [r.error for r in records]
    gc.collect()
    assert len(made) > 10  # two modules, and the outputs of three passes' rounds
    assert [ref for ref in made if ref() is not None] == []


def test_naive_is_left_out_above_its_cap():
    records = ps.run_case(ps.case("chain", 30), clock=FakeClock(), naive_max_bindings=10)
    assert {r.params["impl"] for r in records} == {"benchkill", "tvm", ps.FLOOR}
    records = ps.run_case(
        ps.case("chain", 30), clock=FakeClock(), naive_max_bindings=10, floor=False
    )
    assert {r.params["impl"] for r in records} == {"benchkill", "tvm"}


def test_the_floor_runs_in_benchkill_and_tvm_rounds_and_only_with_benchkill(monkeypatch):
    """The floor's runs are in benchkill's and TVM's rounds (benchkill / floor is a ratio
    of the same rounds), within its budget, and run the work found on the case's own
    main: here a wrapped FloorWork logs its runs between the logged passes'."""
    calls = []
    real_work = ps.floor_work

    class Logged:
        def __init__(self, work):
            self.work = work

        def run(self):
            calls.append(ps.FLOOR)
            return self.work.run()

    def logged_work(mod):
        work = real_work(mod)
        assert work is not None and len(work.kills) > 0  # the chain's kills
        return Logged(work)

    def logged(name, pass_):
        def run(mod):
            calls.append(name)
            return pass_(mod)

        return run

    monkeypatch.setattr(ps, "floor_work", logged_work)
    passes = {name: logged(name, p) for name, p in ps.implementations().items()}
    records = ps.run_case(ps.case("chain", 30), clock=FakeClock(1.0), passes=passes)
    # a warm-up and 5 rotated rounds; the floor in the first (1 s of its budget of 1.5 s)
    both, swapped = ["benchkill", "tvm"], ["tvm", "benchkill"]
    three = [*both, ps.FLOOR]
    rounds = three + swapped + both + swapped + both
    assert calls == three + rounds + ["naive", "tvm"] + ["naive"] * 1
    by = _by(records)
    floor = by[(ps.FLOOR, ps.TIME)]
    assert floor.status == OK and floor.extra["warmup_seconds"] == [1.0]
    assert floor.samples == (1.0,) and "sample_is_warmup" not in floor.extra
    assert (ps.FLOOR, ps.MEMORY) not in by  # not a pass: its warm-up's memory is not kept
    # over its budget, the warm-up run is its one sample, and says so
    monkeypatch.setattr(ps, "FLOOR_BUDGET_SECONDS", 0.5)
    monkeypatch.setattr(ps, "MEMORY_MAX_BINDINGS", 10)  # an untraced warm-up
    calls.clear()
    floor = _by(ps.run_case(ps.case("chain", 30), clock=FakeClock(1.0), passes=passes))
    assert calls.count(ps.FLOOR) == 1
    assert floor[(ps.FLOOR, ps.TIME)].extra["sample_is_warmup"] is True
    assert ("benchkill", ps.OVER_FLOOR) not in floor  # no round of its own to divide by
    calls.clear()
    only_tvm = {"tvm": passes["tvm"]}
    records = ps.run_case(ps.case("chain", 30), clock=FakeClock(1.0), passes=only_tvm)
    assert ps.FLOOR not in calls and {r.params["impl"] for r in records} == {"tvm"}


def test_a_function_for_the_fallback_has_no_floor():
    """Where benchkill's sweep hands main to TVM's pass (here: a dataflow block), there
    is no floor work to time, and the case has no floor records."""
    from tvm.script import relax as R

    @tvm.script.ir_module
    class Dataflow:
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            with R.dataflow():
                y = R.add(x, x)
                R.output(y)
            return y

    assert ps.floor_work(Dataflow) is None
    assert ps.floor_work(ps.pass_input("chain", 10, 0)) is not None


def test_a_failed_benchkill_fails_the_floor_records_too():
    wrong = {
        "benchkill": NaiveKillAfterLastUse(exclude_null_value=False),
        "tvm": relax.transform.KillAfterLastUse(),
    }
    records = ps.run_case(ps.case("shape_heap", 40), clock=FakeClock(), passes=wrong)
    floor = [r for r in records if r.params["impl"] == ps.FLOOR]
    assert floor and all(r.status == FAILED for r in floor)


def test_mismatch_with_tvm_fails_the_whole_case():
    # the pre-fix behaviour kills the R.null_value() shape heap: not TVM's output
    wrong = {
        "benchkill": NaiveKillAfterLastUse(exclude_null_value=False),
        "tvm": relax.transform.KillAfterLastUse(),
    }
    records = ps.run_case(ps.case("shape_heap", 40), clock=FakeClock(), passes=wrong)
    assert records and all(r.status == FAILED for r in records)
    assert all("benchkill output differs from TVM's" in r.error for r in records)


def test_naive_mismatch_fails_only_the_naive_records():
    passes = ps.implementations()
    passes["naive"] = NaiveKillAfterLastUse(exclude_null_value=False)
    records = ps.run_case(ps.case("shape_heap", 40), clock=FakeClock(), passes=passes)
    for r in records:
        assert (r.status == FAILED) == (r.params["impl"] == "naive"), (r.params, r.metric)


def test_benchkill_equals_tvm_on_small_quick_cases():
    for spec in (ps.case("chain", 1_000), ps.case("mixed", 1_000)):
        records = ps.run_case(spec, clock=FakeClock(), naive_max_bindings=0)
        assert all(r.status == OK for r in records), [r.error for r in records]


def test_speedup_is_the_ratio_of_cpu_times_round_by_round():
    """Wall time under load inflates long calls more than short ones, so the speedup
    comes from the CPU clock: here TVM's calls take 3 CPU seconds, benchkill's 1, while
    every wall-clock reading advances 1 s."""
    cpu = [0.0]

    def costing(pass_, seconds):
        def run(mod):
            cpu[0] += seconds
            return pass_(mod)

        return run

    real = ps.implementations(include_naive=False)
    passes = {"benchkill": costing(real["benchkill"], 1.0), "tvm": costing(real["tvm"], 3.0)}
    records = ps.run_case(
        ps.case("chain", 30), clock=FakeClock(1.0), passes=passes, cpu_clock=lambda: cpu[0]
    )
    speedup = _by(records)[("benchkill", ps.SPEEDUP)]
    assert speedup.samples and set(speedup.samples) == {3.0}
    assert speedup.extra["clock"] == "process_time"


def test_time_over_floor_is_benchkill_over_the_floor_round_by_round(monkeypatch):
    """Here benchkill's calls take 2 CPU seconds and the floor's 0.5: every round the floor
    ran in gives 4 (the floor's budget holds the 5 rounds of 1 wall second each)."""
    cpu = [0.0]

    class CostlyWork:
        def run(self):
            cpu[0] += 0.5

    def benchkill(mod):
        cpu[0] += 2.0
        return real["benchkill"](mod)

    real = ps.implementations(include_naive=False)
    monkeypatch.setattr(ps, "floor_work", lambda mod: CostlyWork())
    monkeypatch.setattr(ps, "FLOOR_BUDGET_SECONDS", 10.0)
    passes = {"benchkill": benchkill, "tvm": real["tvm"]}
    records = ps.run_case(
        ps.case("chain", 30), clock=FakeClock(1.0), passes=passes, cpu_clock=lambda: cpu[0]
    )
    over = _by(records)[("benchkill", ps.OVER_FLOOR)]
    assert over.samples == (4.0,) * 5 and over.extra["clock"] == "process_time"
    assert over.status == OK


def test_output_errors_leave_the_floor_out():
    """The floor's run returns a function that is not a pass's output: never compared."""
    mod = ps.pass_input("chain", 10, 0)
    tvm_out = relax.transform.KillAfterLastUse()(mod)
    assert ps.output_errors({"tvm": tvm_out, ps.FLOOR: mod, "benchkill": tvm_out}) == {}
    assert set(ps.output_errors({"tvm": tvm_out, "benchkill": mod})) == {"benchkill"}
