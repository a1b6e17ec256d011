"""The run loop, driven by a small fake suite (it tests the runner, not TVM)."""

import io
from types import SimpleNamespace

import pytest

from benchkill.bench.model import EXPECTED_FAILURE, FAILED, OK, CaseSpec, Record
from benchkill.bench.runner import (
    PlainProgress,
    RichProgress,
    failed_records,
    make_progress,
    run,
    run_case,
)
from benchkill.errors import BenchkillError
from benchkill.results.recorder import ResultsFile
from benchkill.results.store import load
from tests.conftest import FakeClock, FakeSuite, make_results


def fresh(path, quick=False):
    """The results file of a run of the fake suite, no case done yet."""
    return ResultsFile(make_results(suites=("fake",), quick=quick), path)


def quiet():
    return PlainProgress(io.StringIO(), clock=FakeClock(0.25))


def test_run_saves_every_case_and_finishes(tmp_path):
    path = tmp_path / "r.json"
    suite = FakeSuite()
    out = io.StringIO()
    results = run(
        [suite],
        fresh(path),
        PlainProgress(out, clock=FakeClock(0.25)),
        clock=FakeClock(0.5),
        now=lambda: "2025-01-01T01:00:00+00:00",
    )
    assert suite.calls == [0, 1, 2, 3]
    assert load(path) == results
    assert len(results.cases) == 4 and len(results.records) == 8
    assert results.settings.finished_at == "2025-01-01T01:00:00+00:00"
    assert [c.seconds for c in results.cases] == [0.5] * 4  # from the injected clock
    assert results.records[0].summary.median == 1.5
    assert failed_records(results.records) == []
    lines = out.getvalue().splitlines()
    assert lines[0] == "running 4 of 4 cases"
    assert "[1/4] fake:case[i=0] ..." in lines
    assert any(line.startswith("[4/4] fake:case[i=3]: ok, 2 records") for line in lines)


def test_file_is_written_after_each_case(tmp_path):
    path = tmp_path / "r.json"
    suite = FakeSuite()
    seen = []
    suite.on_call = lambda i: seen.append(len(load(path).cases))
    run([suite], fresh(path), quiet())
    assert seen == [0, 1, 2, 3]


def test_exception_becomes_failed_record_and_run_goes_on(tmp_path):
    path = tmp_path / "r.json"
    out = io.StringIO()
    results = run([FakeSuite(raise_at=(1,), expected_at=(2,))], fresh(path), PlainProgress(out))
    assert len(results.cases) == 4
    failed = failed_records(results.records)
    assert [(r.case, r.metric, r.status) for r in failed] == [("fake:case[i=1]", "case", FAILED)]
    assert failed[0].error == "RuntimeError: case 1 broke on two lines"
    expected = [r for r in results.records if r.status == EXPECTED_FAILURE]
    assert [r.error for r in expected] == ["not supported"]
    assert "FAILED: RuntimeError: case 1 broke" in out.getvalue()


@pytest.mark.parametrize(
    "returned,fragment",
    [
        (["not a record"], "not a Record"),
        ([Record("f", "c", {}, "t", "s", samples=(float("inf"),))], "non-finite"),
        ([Record("f", "c", {}, "t", "s", samples=("1",))], "non-numeric"),
        ([Record("f", "c", {}, "t", "s", status="fine")], "unknown status"),
        ([Record("f", "c", {"x": {1, 2}}, "t", "s")], "not JSON-serialisable"),
    ],
)
def test_malformed_records_become_failures(returned, fragment):
    suite = SimpleNamespace(run_case=lambda spec: returned)
    [record] = run_case(suite, CaseSpec("f", "c", {"i": 1}))
    assert record.status == FAILED and record.metric == "case"
    assert fragment in record.error


def test_interrupt_keeps_finished_cases_and_resume_completes(tmp_path):
    path = tmp_path / "r.json"
    progress = quiet()
    with pytest.raises(KeyboardInterrupt):
        run([FakeSuite(interrupt_at=2)], fresh(path), progress)
    partial = load(path)
    assert [c.key for c in partial.cases] == ["fake:case[i=0]", "fake:case[i=1]"]
    assert partial.settings.finished_at is None

    suite = FakeSuite()
    out = io.StringIO()
    done = run([suite], ResultsFile(partial, path), PlainProgress(out))
    assert suite.calls == [2, 3]  # finished cases are skipped
    assert [c.key for c in done.cases] == [f"fake:case[i={i}]" for i in range(4)]
    assert len(done.records) == 8
    assert out.getvalue().startswith("running 2 of 4 cases (2 already done)")
    assert "[3/4] fake:case[i=2]" in out.getvalue()


def test_bad_sample_is_a_failure_not_a_crash(tmp_path):
    results = run([FakeSuite(n=2, bad=1)], fresh(tmp_path / "r.json"), quiet())
    assert [r.status for r in results.records] == [OK, OK, FAILED]


def test_quick_uses_the_quick_cases(tmp_path):
    suite = FakeSuite()
    run([suite], fresh(tmp_path / "r.json", quick=True), quiet())
    assert suite.calls == [0, 1]


def test_duplicate_case_keys_are_rejected(tmp_path):
    with pytest.raises(BenchkillError, match="twice"):
        run([FakeSuite(), FakeSuite()], fresh(tmp_path / "r.json"), quiet())


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_is_a_rich_bar_on_a_terminal_and_plain_lines_otherwise(tmp_path):
    assert isinstance(make_progress(io.StringIO()), PlainProgress)
    term = Terminal()
    progress = make_progress(term)
    assert isinstance(progress, RichProgress)
    results = run([FakeSuite(n=3, raise_at=(1,))], fresh(tmp_path / "r.json"), progress)
    assert len(results.cases) == 3
    shown = term.getvalue()
    assert "case 3/3" in shown
    assert "fake:case[i=1]: FAILED: RuntimeError" in shown
    assert "fake:case[i=2]" in shown  # the current case, brackets not taken for markup


def test_rich_bar_is_stopped_on_interrupt(tmp_path):
    progress = RichProgress(Terminal())
    with pytest.raises(KeyboardInterrupt):
        run([FakeSuite(interrupt_at=1)], fresh(tmp_path / "r.json"), progress)
    assert not progress.bar.live.is_started


class ListSink:
    """A sink that keeps the records in memory (the runner knows no results file)."""

    quick = True

    def __init__(self, done=()):
        self.done = frozenset(done)
        self.added, self.started, self.finished = [], False, None

    def start(self):
        self.started = True

    def add(self, spec, seconds, records):
        self.added.append((spec.key, [r.metric for r in records]))

    def finish(self, finished_at):
        self.finished = finished_at
        return self.added


def test_runner_reports_to_any_sink():
    sink = ListSink(done={"fake:case[i=0]"})
    added = run([FakeSuite()], sink, quiet(), now=lambda: "then")
    assert sink.started and sink.finished == "then"
    assert added == [("fake:case[i=1]", ["t", "mem"])]
