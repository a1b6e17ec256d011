"""benchkill results as asv results: ``asv publish`` draws them, headless Chromium shows
the graphs (instruction counts included)."""

import contextlib
import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading

import pytest

from benchkill.cli.main import main
from benchkill.results.loading import load_any
from benchkill.results.store import save
from tests.conftest import make_record, make_results

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def git(repo, *args):
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


@pytest.fixture
def published(tmp_path):
    """Three runs at three commits of a repository, exported and published by asv."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    results = tmp_path / "results"
    results.mkdir()
    shas = []
    for i, count in enumerate([1000, 1000, 1200]):
        (repo / "f").write_text(str(i))
        git(repo, "add", "f")
        git(repo, "commit", "-q", "-m", str(i))
        shas.append(git(repo, "rev-parse", "HEAD"))
        params = {"family": "chain", "bindings": 300, "impl": "benchkill"}
        records = [
            make_record([count] * 3, "pass_instructions", "instructions", params=params),
            make_record([0.01 * (i + 1)] * 3, "pass_time", "seconds", params=params),
        ]
        run = make_results(
            records, f"2026-01-01T00:0{i}:00+00:00", git_commit=shas[-1][:7], cores=2
        )
        save(run, results / f"{i}.json")
    out = tmp_path / "asv-results"
    assert main(["export", str(results), "--out", str(out), "--repo", str(repo)]) == 0
    conf = tmp_path / "asv.conf.json"
    conf.write_text(
        json.dumps(
            {
                "version": 1,
                "project": "benchkill",
                "repo": str(repo),
                "branches": ["main"],
                "results_dir": str(out),
                "html_dir": str(tmp_path / "html"),
            }
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "asv", "publish", "--config", str(conf)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return tmp_path, out, shas


def test_export_reads_back_and_refuses_to_overwrite(published, capsys):
    tmp_path, out, shas = published
    [machine_dir] = [p for p in out.iterdir() if p.is_dir()]
    files = sorted(p for p in machine_dir.glob("*.json") if p.name != "machine.json")
    assert len(files) == 3
    back = [load_any(p) for p in files]
    counts = {
        r.machine.git_commit: [
            x.summary.median for x in r.records if x.metric == "pass_instructions"
        ]
        for r in back
    }
    assert counts == {sha[:8]: [c] for sha, c in zip(shas, [1000, 1000, 1200], strict=True)}
    before = {p: p.read_bytes() for p in files}
    code = main(
        ["export", str(tmp_path / "results"), "--out", str(out), "--repo", str(tmp_path / "repo")]
    )
    assert code == 2 and "already exists" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in files} == before


def test_asv_publish_has_the_graphs(published):
    tmp_path, _, shas = published
    graphs = list((tmp_path / "html" / "graphs").rglob("*.json"))
    names = {p.stem for p in graphs}
    assert "benchkill.pass.chain.track_pass_instructions" in names
    [graph] = [
        p
        for p in graphs
        if p.stem == "benchkill.pass.chain.track_pass_instructions" and "summary" not in p.parts
    ]
    points = json.loads(graph.read_text())
    assert [p[1] for p in points] == [[1000], [1000], [1200]]  # one parameter combination
    regressions = json.loads((tmp_path / "html" / "regressions.json").read_text())
    found = [r for r in regressions["regressions"] if "instructions" in r[0]]
    # asv's regressions page: the step from 1000 to 1200 at revision 2, the third commit
    [[*_, ranges]] = found
    assert ranges == [[None, 2, 1000.0, 1200.0]]
    index = json.loads((tmp_path / "html" / "index.json").read_text())
    assert index["revision_to_hash"]["2"] == shas[2]


#: asv's page loads jQuery, flot, bootstrap, stupidtable and md5 from CDNs, which an
#: offline machine cannot reach: Debian's copies (libjs-jquery, libjs-jquery-flot,
#: libjs-bootstrap, libjs-jquery-stupidtable, node-blueimp-md5) stand in for them.
DEBIAN_JS = "/usr/share/javascript"
OFFLINE = {
    "jquery-3.3.1.min.js": "jquery/jquery.min.js",
    "jquery.flot.min.js": "jquery-flot/jquery.flot.pack.js",  # flot 4 with its plugins
    "stupidtable.min.js": "jquery-stupidtable/stupidtable.min.js",
    "md5.min.js": "blueimp-md5/md5.min.js",
    "bootstrap.min.js": "bootstrap/js/bootstrap.min.js",
    "bootstrap.min.css": "bootstrap/css/bootstrap.min.css",
}


def offline(html_dir):
    """Point the published page's CDN links at local copies (others dropped)."""
    import re

    page = html_dir / "index.html"
    text = page.read_text()
    vendor = html_dir / "offline"
    vendor.mkdir()

    def local(match):
        url = match.group(2)
        name = url.rsplit("/", 1)[-1]
        source = OFFLINE.get(name)
        if source is None or not os.path.exists(os.path.join(DEBIAN_JS, source)):
            return ""  # a flot plugin the pack holds, or orderBars (bar charts only)
        shutil.copy(os.path.join(DEBIAN_JS, source), vendor / name)
        return (
            f'<link rel="stylesheet" href="offline/{name}">'
            if match.group(1) == "link"
            else (f'<script src="offline/{name}"></script>')
        )

    pattern = r'<(script|link)[^>]*(?:src|href)="(https://[^"]+)"[^>]*>(?:</script>)?'
    page.write_text(re.sub(pattern, local, text))
    missing = [n for n in OFFLINE if not (vendor / n).exists()]
    return missing


@contextlib.contextmanager
def serving(directory):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
def test_headless_chromium_renders_the_graph(published):
    if CHROMIUM is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is required in CI (.ci/run installs Debian's)")
        pytest.skip("chromium is not installed")
    tmp_path, _, _ = published
    missing = offline(tmp_path / "html")
    if missing:
        pytest.skip(f"no local copy of {missing} (Debian's libjs-* packages, .ci/run installs)")
    with serving(tmp_path / "html") as url:
        page = f"{url}/#benchkill.pass.chain.track_pass_instructions"
        done = subprocess.run(
            [
                CHROMIUM,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--virtual-time-budget=15000",
                "--dump-dom",
                page,
            ],
            capture_output=True,
            text=True,
            timeout=180,
            env={**os.environ, "HOME": str(tmp_path)},
        )
    dom = done.stdout
    assert "flot-base" in dom, (done.stderr[-2000:], dom[-2000:])  # the graph's canvas
    assert "track_pass_instructions" in dom
