"""The progress display of ``benchkill run``: case k/n, elapsed time and ETA within 80
columns, and the word "interrupted" when Ctrl-C stops the run."""

import io
import re

import pytest

from benchkill.bench.model import CaseSpec
from benchkill.bench.runner import PlainProgress, RichProgress, clock_text, run
from benchkill.results.recorder import ResultsFile
from tests.conftest import FakeClock, FakeSuite, make_results


class Terminal(io.StringIO):
    def isatty(self):
        return True


class LongNames(FakeSuite):
    """FakeSuite with case names longer than a terminal line."""

    def cases(self, quick):
        long = "a-workload-name-much-longer-than-the-rest-of-the-line" * 2
        return [CaseSpec("fake", "case", {"i": i, "workload": long}) for i in range(self.n)]


def fresh(path):
    return ResultsFile(make_results(suites=("fake",), quick=False), path)


def screen_lines(text):
    """The lines a terminal shows, control sequences removed (a \\r redraws the line)."""
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    return [line for line in plain.replace("\r", "\n").split("\n") if line.strip()]


def test_rich_bar_keeps_counter_time_and_eta_within_80_columns(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    term = Terminal()
    run([LongNames(n=3)], fresh(tmp_path / "r.json"), RichProgress(term))
    lines = screen_lines(term.getvalue())
    assert max(len(line) for line in lines) <= 80
    working = [line for line in lines if "fake:case[i=1" in line]
    assert working and all(
        re.match(r"case \d/3 .* 0:00:\d\d ETA \S+ fake:case", w) for w in working
    )
    assert working[-1].endswith("…")  # the long name is cut, not the counter or the times
    assert re.match(r"case 3/3 .* ETA 0:00 done", lines[-1])


def test_rich_bar_says_interrupted_on_ctrl_c(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    term = Terminal()
    with pytest.raises(KeyboardInterrupt):
        run([FakeSuite(interrupt_at=2)], fresh(tmp_path / "r.json"), RichProgress(term))
    last = screen_lines(term.getvalue())[-1]
    assert last.startswith("case 2/4") and "interrupted" in last and "done" not in last


def test_plain_lines_have_an_eta_and_say_interrupted(tmp_path):
    out = io.StringIO()
    with pytest.raises(KeyboardInterrupt):
        run(
            [FakeSuite(interrupt_at=2)],
            fresh(tmp_path / "r.json"),
            PlainProgress(out, clock=FakeClock(1.0)),
            clock=FakeClock(10.0),
        )
    lines = out.getvalue().splitlines()
    assert lines[2] == "[1/4] fake:case[i=0]: ok, 2 records (10.0 s, elapsed 1 s, ETA 0:30)"
    assert lines[-1].startswith("interrupted after 2 of 4 cases")


def test_clock_text():
    assert clock_text(None) == "-:--"
    assert clock_text(65) == "1:05"
    assert clock_text(3725) == "1:02:05"
