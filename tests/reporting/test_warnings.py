"""Why two runs may not compare: one warning line per difference."""

from dataclasses import replace

from benchkill.reporting.warnings import CHECKS, comparison_warnings
from tests.conftest import make_record, make_results


def test_runs_of_one_setup_and_different_commits_get_no_warning():
    base = make_results(git_commit="abc1234", git_dirty=False, tvm_version="0.27.0")
    new = replace(base, machine=replace(base.machine, git_commit="def5678"))
    assert comparison_warnings(base, new) == []


def test_each_difference_gets_its_line_in_order():
    base = make_results(git_commit="abc1234", git_dirty=False, tvm_version="0.27.0", cores=2)
    machine = replace(base.machine, name="laptop", cores=8, tvm_version="0.28.0", git_dirty=True)
    machine = replace(machine, tvm_ffi_version="0.1.15.post2")
    settings = replace(base.settings, quick=False, suites=("pass", "vm"))
    warnings = comparison_warnings(base, replace(base, machine=machine, settings=settings))
    assert [w.split(":")[0].split(" (")[0] for w in warnings] == [
        "different machines",
        "a quick run",
        "software changed",
        "different suites",
        "uncommitted changes in the code of the new run",
    ]
    assert warnings[0] == (
        "different machines (name 'box' -> 'laptop', cores 2 -> 8): their times and peaks do "
        "not compare"
    )
    assert "apache-tvm 0.27.0 -> 0.28.0" in warnings[2]
    assert "apache-tvm-ffi" not in warnings[2]  # the base did not record it: unknown


def test_another_tvm_ffi_release_is_a_software_change():
    base = make_results(git_commit="abc1234", tvm_ffi_version="0.1.14.post0")
    new = replace(base, machine=replace(base.machine, git_commit="d", tvm_ffi_version="0.1.15"))
    assert comparison_warnings(base, new) == [
        "software changed: apache-tvm-ffi 0.1.14.post0 -> 0.1.15"
    ]


def test_another_build_of_the_same_python_is_a_software_change():
    base = make_results(git_commit="a", python="CPython 3.11.7", python_build="/opt/py, main")
    pgo = replace(base.machine, git_commit="b", python_build="/usr, main")
    assert comparison_warnings(base, replace(base, machine=pgo)) == [
        "software changed: Python build /opt/py, main -> /usr, main"
    ]
    unknown = replace(base.machine, git_commit="b", python_build=None)  # an older file
    assert comparison_warnings(base, replace(base, machine=unknown)) == []


def test_another_malloc_is_a_software_change():
    """jemalloc in place of glibc's malloc moves TVM's pass time (README "A module left alive
    slows TVM's pass"): the same code under it is not noise either."""
    base = make_results(git_commit="abc1234", git_dirty=False, malloc="libc.so.6 (glibc 2.36)")
    preloaded = replace(base, machine=replace(base.machine, malloc="libjemalloc.so.2"))
    assert comparison_warnings(base, preloaded) == [
        "software changed: malloc libc.so.6 (glibc 2.36) -> libjemalloc.so.2",
        "both runs measured the same code (commit abc1234): a regression or improvement "
        "below comes from what the warnings above say changed, or is noise",
    ]
    unknown = replace(base.machine, malloc=None)  # a file from before the field
    assert comparison_warnings(base, replace(base, machine=unknown)) == [
        "both runs measured the same code (commit abc1234): every regression or "
        "improvement below is noise of the machine"
    ]


def test_the_same_commit_under_another_python_is_not_called_noise():
    """The same code under another interpreter build: what changed may be the build's."""
    base = make_results(git_commit="abc1234", git_dirty=False, python_build="/opt/py (main)")
    other = replace(base, machine=replace(base.machine, python_build="/usr (main)"))
    assert comparison_warnings(base, other) == [
        "software changed: Python build /opt/py (main) -> /usr (main)",
        "both runs measured the same code (commit abc1234): a regression or improvement "
        "below comes from what the warnings above say changed, or is noise",
    ]


def test_a_few_hundred_kib_of_memory_is_the_same_machine():
    base = make_results(git_commit="abc1234", memory_bytes=25276510208)
    new = replace(base, machine=replace(base.machine, memory_bytes=25276059648, git_commit="x"))
    assert comparison_warnings(base, new) == []
    assert len(CHECKS) == 7


def test_the_same_clean_commit_on_both_sides_is_noise():
    base = make_results(git_commit="abc1234", git_dirty=False)
    (warning,) = comparison_warnings(base, base)
    assert warning.startswith("both runs measured the same code (commit abc1234)")


def _counted(settings, hooks=None):
    extra = {"kind": "instructions", "instrument": settings}
    if hooks:
        extra["test_hooks"] = hooks
    return make_record([1.0e8] * 3, "pass_instructions", "instructions", extra=extra)


SETTINGS = {"tool": "callgrind", "valgrind": "valgrind-3.19.0", "env": {"PYTHONHASHSEED": "0"}}


def test_other_instrument_settings_or_test_hooks_get_a_line():
    base = make_results([_counted(SETTINGS)])
    assert comparison_warnings(base, base) == []
    other = {**SETTINGS, "valgrind": "valgrind-3.22.0", "env": {"PYTHONHASHSEED": "1"}}
    (line,) = comparison_warnings(base, make_results([_counted(other)]))
    assert line == (
        "instrument settings differ: PYTHONHASHSEED 0 -> 1, valgrind valgrind-3.19.0 -> "
        "valgrind-3.22.0"
    )
    slowed = make_results([_counted(SETTINGS, {"BENCHKILL_INJECT_SLOWDOWN": "0.01"})])
    (line,) = comparison_warnings(base, slowed)
    assert line == (
        "test hooks differ (a deliberately worse pass): base none; "
        "new BENCHKILL_INJECT_SLOWDOWN=0.01"
    )
    # a run without counts against one with them: nothing to warn about
    assert comparison_warnings(make_results([make_record()]), base) == []


def test_another_kernel_build_is_a_software_change():
    """Two runs on this CPU, days apart, saw different kernel builds: the same machine name and CPU,
    other software under both passes."""
    base = make_results(git_commit="a", os="Linux-6.18.44-fc-v857-x86_64-with-glibc2.36")
    kernel = replace(
        base.machine, git_commit="b", os="Linux-6.18.44-fc-v1147-x86_64-with-glibc2.36"
    )
    assert comparison_warnings(base, replace(base, machine=kernel)) == [
        "software changed: OS Linux-6.18.44-fc-v857-x86_64-with-glibc2.36 -> "
        "Linux-6.18.44-fc-v1147-x86_64-with-glibc2.36"
    ]
