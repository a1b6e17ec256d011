"""Names vulture (``.ci/run``) cannot see used: fields read only through ``asdict``,
``str.format(**fields)`` or JSON.  The names that are used by name in strings (child-process
tasks, hypothesis rules, visitors, asv benchmarks) are its ``--ignore-names``."""

from benchkill.analysis.kill_rules import Site
from benchkill.bench.instructions import Counts
from benchkill.execution.explain import PeakParts
from benchkill.execution.trace import TraceEvent

Site.type_name  # formatted into the kill-no-register-type message
Counts.wall_seconds  # stored with the record
PeakParts.at_seq  # stored with the trace summary
TraceEvent.rss  # stored with the trace
