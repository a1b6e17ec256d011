"""Shards: ``run --shard K/N`` runs every N-th case; ``merge`` joins the shards of one run."""

import argparse
import json

import pytest

from benchkill.bench.sharding import from_command, select, shard, share, without_shard
from benchkill.cli.main import main
from benchkill.results.store import load


def test_shards_split_every_item_once():
    items = list(range(11))
    parts = [select(items, (k, 4)) for k in range(1, 5)]
    assert sorted(x for p in parts for x in p) == items
    assert parts[0] == [0, 4, 8]
    assert sum(share(1000, (k, 3)) for k in (1, 2, 3)) == 1000
    assert select(items, None) == items


@pytest.mark.parametrize("text", ["0/2", "3/2", "2", "a/b", "1/0", "-1/2"])
def test_bad_shard_spec(text):
    with pytest.raises(argparse.ArgumentTypeError):
        shard(text)


def test_command_keeps_and_drops_the_shard():
    command = ("benchkill", "run", "--suite", "pass", "--shard", "2/3")
    assert from_command(command) == (2, 3)
    assert without_shard(command) == ("benchkill", "run", "--suite", "pass")


def run_shards(tmp_path, n, fake_suite, monkeypatch):
    monkeypatch.chdir(tmp_path)
    paths = []
    for k in range(1, n + 1):
        out = tmp_path / f"s{k}.json"
        assert main(["run", "--suite", "fake", "--shard", f"{k}/{n}", "--out", str(out)]) == 0
        paths.append(out)
    return paths


def test_run_shards_and_merge_them(tmp_path, fake_suite, monkeypatch, capsys):
    fake_suite.n = 5
    paths = run_shards(tmp_path, 2, fake_suite, monkeypatch)
    assert [c.params["i"] for c in load(paths[0]).cases] == [0, 2, 4]
    assert [c.params["i"] for c in load(paths[1]).cases] == [1, 3]
    out = tmp_path / "merged.json"
    assert main(["merge", str(paths[1]), str(paths[0]), "--out", str(out)]) == 0
    merged = load(out)
    assert sorted(c.params["i"] for c in merged.cases) == [0, 1, 2, 3, 4]
    assert "--shard" not in merged.settings.command
    assert merged.settings.finished_at is not None
    # never over an existing file, and a run sharded the same way is not a second shard
    before = out.read_bytes()
    capsys.readouterr()
    assert main(["merge", *map(str, paths), "--out", str(out)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert out.read_bytes() == before
    assert main(["merge", str(paths[0]), str(paths[0]), "--out", str(tmp_path / "x.json")]) == 0
    assert "shards 2 of 2 are missing" in capsys.readouterr().err


def edited(path, change, tmp_path, name):
    data = json.loads(path.read_text())
    change(data)
    new = tmp_path / name
    new.write_text(json.dumps(data))
    return new


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (lambda d: d["machine"].update(git_commit="ffffff1"), "commit"),
        (lambda d: d["machine"].update(cpu_model="Other CPU"), "CPU model"),
        (lambda d: d["machine"].update(python_build="/elsewhere"), "Python build"),
        (lambda d: d["settings"].update(command=["benchkill", "run"]), "another command"),
    ],
)
def test_merge_refuses_shards_of_another_run(
    tmp_path, fake_suite, monkeypatch, capsys, change, fragment
):
    a, b = run_shards(tmp_path, 2, fake_suite, monkeypatch)
    other = edited(b, change, tmp_path, "other.json")
    capsys.readouterr()
    assert main(["merge", str(a), str(other), "--out", str(tmp_path / "m.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and fragment in err[0]
    assert not (tmp_path / "m.json").exists()
