"""The KillAfterLastUse implementations: benchkill's optimized pass and the naive port.

Modules: :mod:`.kill_after_last_use` (the pass and its steps :mod:`.last_use` with
:mod:`.canonicalize` and :mod:`.checks`, :mod:`.plan`, :mod:`.rewrite`; :mod:`.fallback`,
TVM's result for the functions the steps hand it; :mod:`.keys`, the variables' table
keys), :mod:`.naive` (the naive port), :mod:`.profile` (per-step timing and the floor),
:mod:`.injection` (the test hooks' deliberately worse pass).  Imports only
:mod:`benchkill.relax`, :mod:`benchkill.errors` and :mod:`benchkill.hooks`.
"""

from __future__ import annotations

from benchkill.passes.kill_after_last_use import KillAfterLastUse
from benchkill.passes.naive import NaiveKillAfterLastUse

__all__ = ["KillAfterLastUse", "NaiveKillAfterLastUse"]
