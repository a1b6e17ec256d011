"""The KillAfterLastUse implementations: benchkill's optimized pass and the naive port."""

from __future__ import annotations

from typing import Any

from benchkill.passes.kill_after_last_use import SLOWDOWN_ENV, KillAfterLastUse, kill_after_last_use

__all__ = ["KillAfterLastUse", "NaiveKillAfterLastUse", "SLOWDOWN_ENV", "kill_after_last_use"]


def __getattr__(name: str) -> Any:
    if name == "NaiveKillAfterLastUse":
        from benchkill.passes.naive import NaiveKillAfterLastUse

        return NaiveKillAfterLastUse
    raise AttributeError(name)
