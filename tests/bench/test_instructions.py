"""Instruction counts: callgrind's files, the pinned child, errors; one real count."""

from __future__ import annotations

import os
import shutil
from argparse import Namespace
from dataclasses import replace
from pathlib import Path

import pytest

from benchkill.bench import instructions as ins
from benchkill.bench.instruction_records import CountingSuite
from benchkill.bench.model import FAILED, CaseSpec, Record
from benchkill.cli.main import main
from benchkill.errors import BenchkillError
from benchkill.hooks import MISSED_KILLS_ENV, SLOWDOWN_ENV
from tests.conftest import make_results

DUMP = """# callgrind format
version: 1
creator: callgrind-3.19.0
pid: {pid}
part: 2

desc: I1 cache:
desc: Timerange: Basic block 10 - 20
desc: Trigger: Client Request: benchkill-instr:{label}

positions: line
events: Ir
summary: 0


ob=(1) /lib/libc.so.6
fl=(1) ???
fn=(1) memcpy
0 {a}
fn=(2) malloc
0 {b}

totals: {total}
"""


def write_dump(folder: Path, pid: int, part: int, label: str, a: int, b: int = 0) -> Path:
    path = folder / f"callgrind.out.{pid}.{part}"
    path.write_text(DUMP.format(pid=pid, label=label, a=a, b=b, total=a + b))
    return path


def test_parse_dump_reads_totals_not_summary(tmp_path):
    path = write_dump(tmp_path, 42, 1, "repeat-0", 1000, 234)
    assert ins.parse_dump(path) == ("benchkill-instr:repeat-0", 1234)


def test_parse_dump_rejects_other_events_and_truncation(tmp_path):
    path = tmp_path / "callgrind.out.1.1"
    path.write_text("events: Dr Ir\ntotals: 1 2\n")
    with pytest.raises(BenchkillError, match="events: Ir"):
        ins.parse_dump(path)
    path.write_text("events: Ir\nsummary: 5\n")
    with pytest.raises(BenchkillError, match="totals"):
        ins.parse_dump(path)


def test_collect_counts_orders_by_label_and_skips_other_dumps(tmp_path):
    write_dump(tmp_path, 7, 3, "0:repeat-1", 30)
    write_dump(tmp_path, 7, 1, "0:warmup", 10)
    write_dump(tmp_path, 7, 2, "0:repeat-0", 20)
    write_dump(tmp_path, 7, 5, "1:repeat-0", 21)
    write_dump(tmp_path, 7, 6, "1:repeat-1", 31)
    write_dump(tmp_path, 7, 4, "1:warmup", 11)
    (tmp_path / "callgrind.out.7").write_text(
        "desc: Trigger: Program termination\nevents: Ir\ntotals: 0\n"
    )
    write_dump(tmp_path, 8, 1, "0:warmup", 99)  # another process: ignored
    assert ins.collect_counts(tmp_path, 7, 2) == [(10, [20, 30])]
    assert ins.collect_counts(tmp_path, 7, 2, cases=2) == [(10, [20, 30]), (11, [21, 31])]
    with pytest.raises(BenchkillError, match="missing"):
        ins.collect_counts(tmp_path, 7, 3)
    with pytest.raises(BenchkillError, match="missing"):
        ins.collect_counts(tmp_path, 7, 2, cases=3)
    write_dump(tmp_path, 7, 9, "0:repeat-1", 31)
    with pytest.raises(BenchkillError, match="two callgrind dumps"):
        ins.collect_counts(tmp_path, 7, 2)


def test_child_environment_is_built_from_scratch_and_keeps_only_the_test_hooks(tmp_path):
    environ = {"PATH": "/bin", "HOME": "/h", "PYTHONHASHSEED": "7", "OTHER": "x"}
    environ[SLOWDOWN_ENV] = "0.01"
    env = ins.child_env(tmp_path, environ)
    assert env["PYTHONHASHSEED"] == "0" and env["OPENBLAS_NUM_THREADS"] == "1"
    assert env["PYTHONPATH"] == str(tmp_path) and "OTHER" not in env
    assert env[SLOWDOWN_ENV] == "0.01" and MISSED_KILLS_ENV not in env
    assert ins.test_hooks(env) == {SLOWDOWN_ENV: "0.01"}
    settings = ins.Instrument("/v", "valgrind-3.19.0", "/h.so", "5.0.4").settings(env)
    assert settings["tool"] == "callgrind" and "--instr-atstart=no" in settings["options"]
    assert SLOWDOWN_ENV not in settings["env"] and "PATH" not in settings["env"]


def test_missing_valgrind_is_a_one_line_error():
    with pytest.raises(BenchkillError, match=r"valgrind not found.*apt-get install valgrind"):
        ins.find_instrument("no-such-valgrind-here")


def test_run_with_instructions_and_no_valgrind_exits_2_and_writes_nothing(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    out = tmp_path / "r.json"
    code = main(["run", "--suite", "pass", "--quick", "--instructions", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.strip().splitlines() == [
        "benchkill: error: valgrind not found ('valgrind' is not on PATH): instruction counts "
        "need valgrind's callgrind; install it (Debian/Ubuntu: apt-get install valgrind)"
    ]
    assert list(tmp_path.iterdir()) == []


def test_instructions_need_the_pass_suite(tmp_path, capsys):
    code = main(["run", "--suite", "vm", "--instructions-only", "--out", str(tmp_path / "r.json")])
    assert code == 2
    assert "--instructions-only counts the pass suite: add --suite pass" in capsys.readouterr().err


class _Suite:
    """The pass suite's interface, with a count that fails."""

    NAME = "pass"

    def cases(self, quick):
        return [
            CaseSpec("pass", "chain", {"family": "chain", "bindings": 3, "n_ops": 1, "seed": 0})
        ]

    def run_case(self, spec):
        return [Record("pass", "chain", {"impl": "benchkill"}, "pass_time", "seconds", (1.0,))]

    def instruction_records(self, specs):
        raise BenchkillError("valgrind crashed")


def test_a_failed_count_keeps_the_times_and_fails_its_own_record():
    suite = _Suite()
    [spec] = CountingSuite(suite).cases(True)
    timed, failed = CountingSuite(suite).run_case(spec)
    assert timed.metric == "pass_time"
    assert (failed.metric, failed.status) == ("pass_instructions", FAILED)
    assert failed.error == "BenchkillError: valgrind crashed"
    assert [r.metric for r in CountingSuite(suite, only=True).run_case(spec)] == [
        "pass_instructions"
    ]


class _BatchSuite:
    """Three cases; the counts of a batch are each case's name, and calls are kept."""

    NAME = "pass"

    def __init__(self):
        self.batches = []

    def cases(self, quick):
        return [
            CaseSpec("pass", name, {"family": name, "bindings": 3, "n_ops": 1, "seed": 0})
            for name in ("a", "b", "c")
        ]

    def run_case(self, spec):
        return [Record("pass", spec.name, {"impl": "benchkill"}, "pass_time", "seconds", (1.0,))]

    def instruction_records(self, specs):
        self.batches.append([s.name for s in specs])
        return [
            [Record("pass", s.name, {"impl": "benchkill"}, "pass_instructions", "", (9.0,))]
            for s in specs
        ]


def test_counts_of_the_remaining_cases_are_taken_at_once_and_handed_out_per_case():
    suite = _BatchSuite()
    counting = CountingSuite(suite, only=True)
    a, b, c = counting.cases(True)
    # a resumed run: case a is done, so the batch starts at b
    assert [r.name for r in counting.run_case(b)] == ["b"]
    assert [r.name for r in counting.run_case(c)] == ["c"]
    assert suite.batches == [["b", "c"]]
    assert [r.name for r in counting.run_case(a)] == ["a"]  # not counted yet: its own batch
    assert suite.batches == [["b", "c"], ["a", "b", "c"]]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_counts_are_exact_across_processes_and_grow_with_the_slowdown_hook(monkeypatch):
    """Three real children under callgrind (~10 s of CPU each, two at a time)."""
    monkeypatch.delenv(SLOWDOWN_ENV, raising=False)
    monkeypatch.delenv(MISSED_KILLS_ENV, raising=False)
    job = dict(cases=[("chain", 10, 0), ("chain", 20, 0)], impl="benchkill", repeats=2)
    slowed = dict(job, environ={**os.environ, SLOWDOWN_ENV: "1"})
    runs = ins.count_all([job, job, slowed], parallel=2, counter=ins.count_cases)
    (first, first_20), (second, second_20), (slow, slow_20) = runs
    assert first.counts == second.counts and first.warmup == second.warmup
    assert first_20.counts == second_20.counts and first_20.warmup == second_20.warmup
    assert (first.bindings, first_20.bindings) == (30, 60)
    assert all(c > 100_000 for c in first.counts)
    assert all(b > a for a, b in zip(first.counts, first_20.counts, strict=True))
    assert first.settings == second.settings and first.hooks == {}
    assert slow.hooks == {SLOWDOWN_ENV: "1"}
    # SLOWDOWN=1: the pass runs once more on the whole function
    bases, slower_counts = first.counts + first_20.counts, slow.counts + slow_20.counts
    for base, slower in zip(bases, slower_counts, strict=True):
        assert 1.8 < slower / base < 2.2


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_a_resumed_run_keeps_its_counting_choice():
    from benchkill.cli.cmd_run import _counting

    results = make_results(suites=("pass",))
    command = ("benchkill", "run", "--suite", "pass", "--instructions-only")
    results = replace(results, settings=replace(results.settings, command=command))
    args = Namespace(resume=Path("r.json"), instructions=False, instructions_only=False)
    [suite] = _counting(args, results)
    assert isinstance(suite, CountingSuite) and suite.only
    args.instructions = True
    with pytest.raises(BenchkillError, match="r.json: was not run with --instructions$"):
        _counting(args, results)
