"""Environment variables of benchkill's test hooks (off when unset).

They exist to check that benchkill's alerts catch what they should: a run with a hook
set is a deliberately worse benchkill.  This module imports nothing, so every layer that
sets or reads a hook (the pass, the trust measurement, tests) names it from here.
"""

#: ``BENCHKILL_INJECT_SLOWDOWN=F``: the pass does extra work of about F times its own.
SLOWDOWN_ENV = "BENCHKILL_INJECT_SLOWDOWN"
#: ``BENCHKILL_INJECT_MISSED_KILLS=F``: the pass drops that fraction of its kills.
MISSED_KILLS_ENV = "BENCHKILL_INJECT_MISSED_KILLS"
#: Every hook, for code that must pass them on or record them (e.g. a counting child).
HOOK_ENVS = (SLOWDOWN_ENV, MISSED_KILLS_ENV)
