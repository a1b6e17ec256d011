"""The KillAfterLastUse implementations: benchkill's optimized pass and the naive port.

Modules: :mod:`.kill_after_last_use` (the pass and its steps :mod:`.canonicalize`,
:mod:`.last_use`, :mod:`.plan`, :mod:`.rewrite`), :mod:`.naive` (the naive port),
:mod:`.profile` (per-step timing).  Imports only :mod:`benchkill.relax` and
:mod:`benchkill.errors`.
"""

from __future__ import annotations

from benchkill.passes.kill_after_last_use import KillAfterLastUse
from benchkill.passes.naive import NaiveKillAfterLastUse

__all__ = ["KillAfterLastUse", "NaiveKillAfterLastUse"]
