"""The trust figures of ``benchkill history`` and ``bisect`` (docs/guide/alerts.md).

On a temporary clone of this project, over a window of consecutive first-parent commits
that change no pass code (``benchkill/passes/``, ``benchkill/relax/``):

1. every commit's ``benchkill/`` tree is measured once (instructions of one application
   of the pass on ``chain:50`` under callgrind, by the commit's own code in a temporary
   worktree: :func:`benchkill.bench.bisect.measure`); ``history`` over the window must
   find no change point;
2. a real code change of the pass (``rewrite_function`` sorts the plan again: more work,
   the same output) is injected at each position k = 1..10 of the window's last 11
   commits: trial k is a branch whose commits from k on are the real ones with the
   change (``git commit-tree`` of the real tree plus the patch, parents chained), each
   patched tree measured once; ``history`` over the trial's 11 commits must name exactly
   the injected commit;
3. ``benchkill bisect`` on one trial must name the injected commit within
   ceil(log2 N) + 1 measured commits.

Counts depend on the code only, so a tree measured once stands for every commit that has
it; the results files each trial's ``history`` reads are written from those measurements
with the trial's commits (the command prints which measured tree each one used).

usage: python docs/notes/alerts_trust.py REPO WINDOW_FILE OUT_DIR [--bisect-trial K]
(WINDOW_FILE: the window's full shas, oldest first, one a line)
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

from benchkill.bench import git
from benchkill.bench.bisect import measure
from benchkill.bench.machine import collect_machine
from benchkill.bench.model import label
from benchkill.results.store import ResultRecord, Results, RunSettings, save
from benchkill.stats import summarize

CASE = ("chain", 50)
ANCHOR = "    body = _rewrite_scope(sweep.root, plan, sweep.canonicalizer)\n"
PATCH = "    plan = {k: v for k, v in sorted(plan.items())}\n"
IDENTITY = ["-c", "user.name=benchkill trust", "-c", "user.email=trust@example.invalid"]


def g(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *IDENTITY, "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def patched_tree(repo: Path, commit: str) -> str:
    """The tree of ``commit`` with the regression applied (written to the object store)."""
    with git.temporary_worktree(repo, commit) as tree:
        path = tree / "benchkill" / "passes" / "rewrite.py"
        text = path.read_text()
        if ANCHOR not in text:
            raise SystemExit(f"{commit}: the anchor line is not in rewrite.py")
        path.write_text(text.replace(ANCHOR, PATCH + ANCHOR))
        g(tree, "add", "-A")
        return g(tree, "write-tree")


LOCK = threading.Lock()


def measure_tree(repo: Path, commit: str, key: str, cache: dict, cache_file: Path) -> None:
    """Measure ``commit`` (whose benchkill/ tree is ``key``) unless a tree is cached."""
    if key in cache:
        return
    with git.temporary_worktree(repo, commit) as tree:
        values = measure(tree, [CASE], "instructions", 1800.0)
    with LOCK:
        cache[key] = int(values[f"{CASE[0]}:{CASE[1]}"][0])
        cache_file.write_text(json.dumps(cache, indent=1))
    print(f"measured {commit[:10]} tree {key[:10]}: {cache[key]:,}", flush=True)


def results_dir(out: Path, name: str, commits: list[str], values: list[int]) -> Path:
    folder = out / name
    folder.mkdir(parents=True)
    base = collect_machine()
    params = {"family": CASE[0], "bindings": CASE[1], "impl": "benchkill"}
    for i, (commit, value) in enumerate(zip(commits, values, strict=True)):
        record = ResultRecord(
            label("pass", CASE[0], params),
            "pass",
            CASE[0],
            params,
            "pass_instructions",
            "instructions",
            (float(value),),
            summarize((float(value),)),
            git_commit=commit[:7],
            git_dirty=False,
        )
        # start times in reverse: only the git graph gives the right order
        started = f"2026-12-05T00:{59 - i:02d}:00+00:00"
        settings = RunSettings(("pass",), True, ("benchkill", "run"), started, started)
        run = Results(
            replace(base, git_commit=commit[:7], git_dirty=False), settings, (), (record,)
        )
        save(run, folder / f"{i:02d}-{commit[:7]}.json", exclusive=True)
    return folder


def history(folder: Path, repo: Path) -> tuple[int, list[str]]:
    done = subprocess.run(
        [sys.executable, "-m", "benchkill", "history", str(folder), "--repo", str(repo)],
        capture_output=True,
        text=True,
    )
    lines = done.stdout.strip().splitlines()
    return done.returncode, lines


def main(argv: list[str]) -> int:
    source, window_file, out = Path(argv[0]), Path(argv[1]), Path(argv[2])
    bisect_trial = int(argv[argv.index("--bisect-trial") + 1]) if "--bisect-trial" in argv else 6
    out.mkdir(parents=True, exist_ok=True)
    window = window_file.read_text().split()
    clone = Path(tempfile.mkdtemp(prefix="benchkill-trust-")) / "clone"
    subprocess.run(["git", "clone", "-q", "--no-local", str(source), str(clone)], check=True)
    print(
        f"clone of {source} at {g(clone, 'rev-parse', 'HEAD')}; window {window[0][:10]}.."
        f"{window[-1][:10]} ({len(window)} commits)",
        flush=True,
    )
    cache_file = out / "counts.json"
    cache = json.loads(cache_file.read_text()) if cache_file.exists() else {}

    # the trials' commits first (patched trees), so every tree is known before measuring
    last = window[-11:]
    patched = {c: patched_tree(clone, c) for c in last[1:]}
    trials: dict[int, list[str]] = {}
    for k in range(1, 11):
        parent, chain = last[k - 1], []
        for i in range(k, 11):
            message = (
                "rewrite: the plan in position order"
                if i == k
                else g(clone, "log", "-1", "--format=%B", last[i])
            )
            parent = g(clone, "commit-tree", patched[last[i]], "-p", parent, "-m", message)
            chain.append(parent)
        g(clone, "branch", f"trial-{k}", parent)
        trials[k] = last[:k] + chain

    every = list(dict.fromkeys(window + [c for t in trials.values() for c in t]))
    keys = {c: g(clone, "rev-parse", f"{c}:benchkill") for c in every}
    first = {}
    for c in every:
        first.setdefault(keys[c], c)
    print(f"{len(every)} commits, {len(first)} distinct benchkill/ trees", flush=True)
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(
            pool.map(lambda kc: measure_tree(clone, kc[1], kc[0], cache, cache_file), first.items())
        )
    values = {c: cache[keys[c]] for c in every}

    code, lines = history(results_dir(out, "window", window, [values[c] for c in window]), clone)
    found = [line for line in lines[:-1]]
    print(f"window: exit {code}, {len(found)} change point(s): {lines[-1]}")
    for line in found:
        print("  " + line)
    hits = 0
    for k, commits in trials.items():
        folder = results_dir(out, f"trial-{k}", commits, [values[c] for c in commits])
        code, lines = history(folder, clone)
        named = [line.split()[2] for line in lines[:-1]]
        ok = named == [commits[k]] and code == 1
        hits += ok
        print(
            f"trial {k}: injected at {commits[k][:10]}; history named {[n[:10] for n in named]}"
            f" exit {code}: {'ok' if ok else 'MISSED'}"
        )
    print(f"history found the injected commit exactly in {hits}/10 trials")

    commits = trials[bisect_trial]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchkill",
            "bisect",
            commits[0],
            commits[-1],
            "--repo",
            str(clone),
            "--case",
            f"{CASE[0]}:{CASE[1]}",
        ],
        capture_output=True,
        text=True,
    )
    print(done.stdout + done.stderr)
    tested = [
        x
        for x in done.stdout.splitlines()
        if x[:40].isalnum() and len(x.split()) > 1 and len(x.split()[0]) == 40
    ]
    bound = math.ceil(math.log2(len(commits))) + 1
    print(
        f"bisect trial {bisect_trial}: N = {len(commits)}, measured {len(tested)} "
        f"(bound {bound}); injected {commits[bisect_trial]}; exit {done.returncode}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
