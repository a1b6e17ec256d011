"""Per-case policy: thresholds by pattern, acknowledged regressions, malformed policies."""

import pytest

from benchkill.cli.main import main
from benchkill.errors import BenchkillError
from benchkill.reporting.formatting import comparison_markdown
from benchkill.reporting.policy import load_policy, pattern_regex, policy_from_table
from benchkill.reporting.run_comparison import compare
from benchkill.reporting.verdicts import ACKNOWLEDGED, NO_CHANGE, REGRESSION
from benchkill.results.store import save
from tests.conftest import BASE10, make_record, make_results

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def runs(factor, metric="pass_time", unit="seconds", samples=BASE10, commit=COMMIT):
    base = make_results([make_record(samples, metric, unit)], git_commit="f" * 40)
    new = make_results(
        [make_record([v * factor for v in samples], metric, unit)], git_commit=commit
    )
    return base, new


def write_policy(path, text):
    path.write_text(text)
    return load_policy(path)


def test_pattern_is_a_glob_whose_brackets_are_literal():
    assert pattern_regex("pass:chain[*]").match("pass:chain[bindings=100]")
    assert not pattern_regex("pass:chain[*]").match("pass:chainx[bindings=100]")
    assert pattern_regex("pass:?hain*").match("pass:chain[bindings=100]")
    assert not pattern_regex("vm:*").match("pass:chain[bindings=100]")


def test_threshold_of_a_case_widens_its_factor(tmp_path):
    base, new = runs(1.3)
    assert compare(base, new).comparisons[0].verdict == REGRESSION
    policy = write_policy(
        tmp_path / "pyproject.toml",
        '[[tool.benchkill.thresholds]]\ncase = "pass:chain[*]"\nfactor = 1.5\n',
    )
    [c] = compare(base, new, policy=policy).comparisons
    assert c.verdict == NO_CHANGE
    assert "policy pass:chain[*]" in c.notes
    # a pattern of another case leaves this one at the default
    other = write_policy(
        tmp_path / "other.toml",
        '[[tool.benchkill.thresholds]]\ncase = "pass:diamond[*]"\nfactor = 1.5\n',
    )
    assert compare(base, new, policy=other).comparisons[0].verdict == REGRESSION


def test_bytes_tolerance_of_a_case(tmp_path):
    mib = 2**20
    base, new = runs(1.0 + 0.2, "vm_peak_bytes", "bytes", samples=[10 * mib] * 3)
    assert compare(base, new).comparisons[0].verdict == REGRESSION  # +2 MiB > 512 KiB
    policy = write_policy(
        tmp_path / "p.toml",
        f'[[tool.benchkill.thresholds]]\ncase = "*"\nbytes_tolerance = {4 * mib}\n',
    )
    assert compare(base, new, policy=policy).comparisons[0].verdict == NO_CHANGE


def test_acknowledged_regression_does_not_fail(tmp_path):
    base, new = runs(1.3)
    policy = write_policy(
        tmp_path / "p.toml",
        "[[tool.benchkill.acknowledged]]\n"
        'case = "pass:chain*"\nmetric = "pass_time"\n'
        f'commit = "{COMMIT[:9]}"\nreason = "slower but correct"\n',
    )
    report = compare(base, new, policy=policy)
    [c] = report.comparisons
    assert c.verdict == ACKNOWLEDGED
    assert "acknowledged: slower but correct" in c.notes
    assert report.exit_code == 0
    # the same change at another commit is still a regression
    base, other = runs(1.3, commit="9" * 40)
    assert compare(base, other, policy=policy).exit_code == 1


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('[[tool.benchkill.thresholds]]\ncase = "*"\nfactor = "big"\n', "thresholds[0].factor"),
        ('[[tool.benchkill.thresholds]]\ncase = "*"\nfactor = 0.9\n', "thresholds[0].factor"),
        ('[[tool.benchkill.thresholds]]\ncase = "*"\nalpha = 2\n', "thresholds[0].alpha"),
        ("[[tool.benchkill.thresholds]]\nfactor = 1.2\n", "thresholds[0].case"),
        ('[[tool.benchkill.thresholds]]\ncase = "*"\nfactr = 1.2\n', "thresholds[0].factr"),
        ("[tool.benchkill]\nthresholds = 3\n", "tool.benchkill.thresholds"),
        ("[tool.benchkill]\nrules = []\n", "tool.benchkill.rules"),
        (
            '[[tool.benchkill.acknowledged]]\ncase = "*"\nmetric = "m"\ncommit = "xyz"\n'
            'reason = "r"\n',
            "acknowledged[0].commit",
        ),
        (
            '[[tool.benchkill.acknowledged]]\ncase = "*"\nmetric = "m"\ncommit = "abcdef0"\n',
            "acknowledged[0].reason",
        ),
    ],
)
def test_malformed_policy_names_its_key(tmp_path, text, key):
    with pytest.raises(BenchkillError, match=key.replace("[", r"\[").replace("]", r"\]")):
        write_policy(tmp_path / "pyproject.toml", text)


def test_no_table_is_no_policy():
    policy = policy_from_table({})
    assert policy.thresholds == () and policy.acknowledged == ()


def test_compare_cli_policy_and_markdown(tmp_path, capsys):
    base, new = runs(1.3)
    save(base, tmp_path / "base.json")
    save(new, tmp_path / "new.json")
    files = [str(tmp_path / "base.json"), str(tmp_path / "new.json")]
    assert main(["compare", *files, "--format", "markdown"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("### benchkill compare: regression")
    assert "| `pass:chain[bindings=100] pass_time` |" in out
    assert "**regression**" in out
    bad = tmp_path / "bad.toml"
    bad.write_text('[[tool.benchkill.thresholds]]\ncase = "*"\nalpha = -1\n')
    assert main(["compare", *files, "--policy", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "tool.benchkill.thresholds[0].alpha" in err[0]
    good = tmp_path / "good.toml"
    good.write_text(
        "[[tool.benchkill.acknowledged]]\n"
        f'case = "*"\nmetric = "pass_time"\ncommit = "{COMMIT}"\nreason = "known"\n'
    )
    assert main(["compare", *files, "--policy", str(good), "--format", "markdown"]) == 0
    assert "| acknowledged |" in capsys.readouterr().out


def test_markdown_escapes_pipes_and_lists_warnings():
    base, new = runs(1.0)
    text = comparison_markdown(compare(base, new), ["a | b"])
    assert "> warning: a \\| b" in text
    assert text.startswith("### benchkill compare: no regression")
