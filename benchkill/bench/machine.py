"""Metadata about the machine and the code a run measured.

Two results are only comparable when they come from the same machine and the reader
knows which code produced them, so every results file records the host, CPU, memory,
OS, Python (release and build), the malloc in use, apache-tvm, apache-tvm-ffi and
benchkill versions, and the git commit of the project.
Collecting it never imports TVM (slow) and never fails: unknown fields are ``None``.
"""

from __future__ import annotations

import ctypes
import os
import platform
import re
import socket
import subprocess
import sys
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

from benchkill import __version__
from benchkill.bench.model import Machine

#: The project's source tree (the repository holding this package when installed editable).
PROJECT_DIR = Path(__file__).resolve().parents[2]


def machine_name(hostname: str) -> str:
    """A file-system safe short name for a host (``node-7.example.org`` -> ``node-7``)."""
    short = hostname.split(".")[0]
    return re.sub(r"[^A-Za-z0-9_-]+", "_", short) or "unknown"


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def _package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _git(*args: str, cwd: Path) -> str | None:
    try:
        out = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


def python_build() -> str:
    """This interpreter's installation, build tag and date, and compiler, e.g.
    ``/usr (main Apr 28 2025 14:11:48, GCC 12.2.0)``: what tells two builds of one release
    apart (:attr:`benchkill.bench.model.Machine.python_build`)."""
    build = " ".join(" ".join(platform.python_build()).split())
    return f"{sys.base_prefix} ({build}, {platform.python_compiler()})"


#: Environment variables that change how glibc's malloc places and returns memory
#: (``mallopt(3)``'s, and the tunables that hold them all).
MALLOC_ENV = (
    "GLIBC_TUNABLES",
    "MALLOC_ARENA_MAX",
    "MALLOC_ARENA_TEST",
    "MALLOC_MMAP_MAX_",
    "MALLOC_MMAP_THRESHOLD_",
    "MALLOC_TOP_PAD_",
    "MALLOC_TRIM_THRESHOLD_",
    "MALLOC_PERTURB_",
    "MALLOC_CHECK_",
)


def mapped_file(address: int, maps: str) -> str | None:
    """The file mapped at ``address`` in a ``/proc/<pid>/maps`` listing, or None."""
    for line in maps.splitlines():
        fields = line.split(maxsplit=5)
        if len(fields) < 6 or not fields[5].startswith("/"):
            continue
        start, _, end = fields[0].partition("-")
        try:
            if int(start, 16) <= address < int(end, 16):
                return fields[5].strip()
        except ValueError:
            continue
    return None


def describe_malloc(library: str | None, libc: str, env: Mapping[str, str]) -> str:
    """What :func:`malloc_in_use` says: the file name of the library whose ``malloc`` the
    process calls (``libc.so.6 (glibc 2.36)``, ``libjemalloc.so.2``; ``unknown`` when
    not found), then each of :data:`MALLOC_ENV` that is set."""
    if library is None:
        text = "unknown"
    else:
        text = Path(library).name
        if text.startswith("libc.so") or text.startswith("libc-"):
            text += f" ({libc})" if libc else ""
    settings = [f"{name}={env[name]}" for name in MALLOC_ENV if env.get(name)]
    return "; ".join([text, *settings])


def malloc_in_use() -> str | None:
    """The malloc this process (and TVM in it) allocates with: the library that the
    dynamic linker resolved ``malloc`` to (``LD_PRELOAD=libjemalloc.so.2`` replaces
    glibc's), and glibc's settings from the environment.

    The allocator changes what TVM's pass costs: under glibc's malloc the function of a
    decoder kept alive slowed TVM's pass on other modules by 8-12% (more cache misses, the
    same instructions), under jemalloc by 0-3% (README "Why: glibc's malloc").  None where
    it cannot be told (no ``/proc``)."""
    try:
        address = ctypes.cast(ctypes.CDLL(None).malloc, ctypes.c_void_p).value
        maps = Path("/proc/self/maps").read_text()
    except (OSError, AttributeError):
        return None
    if address is None:
        return None
    name, version = platform.libc_ver()
    libc = f"{name} {version}".strip() if name == "glibc" else ""
    return describe_malloc(mapped_file(address, maps), libc, os.environ)


def git_state(project_dir: Path = PROJECT_DIR) -> tuple[str | None, bool | None]:
    """Short commit hash of ``project_dir`` and whether its work tree has changes."""
    commit = _git("rev-parse", "--short", "HEAD", cwd=project_dir)
    if not commit:
        return None, None
    status = _git("status", "--porcelain", "--untracked-files=no", cwd=project_dir)
    return commit, (bool(status) if status is not None else None)


def collect_machine() -> Machine:
    """Describe this machine and the installed code."""
    hostname = socket.gethostname()
    commit, dirty = git_state()
    return Machine(
        name=machine_name(hostname),
        hostname=hostname,
        cpu_model=_cpu_model(),
        cores=os.cpu_count(),
        memory_bytes=_memory_bytes(),
        os=platform.platform(),
        python=f"{platform.python_implementation()} {platform.python_version()}",
        python_build=python_build(),
        malloc=malloc_in_use(),
        tvm_version=_package_version("apache-tvm"),
        tvm_ffi_version=_package_version("apache-tvm-ffi"),
        benchkill_version=__version__,
        git_commit=commit,
        git_dirty=dirty,
    )
