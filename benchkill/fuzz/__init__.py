"""Differential fuzzing of benchkill's KillAfterLastUse against TVM's, with hypothesis:
the drawn lowered modules (``values``, ``lowered``, ``shapes``, ``tuples``), the properties
(``properties``), buildable programs run on the VM (``buildable``) and campaigns
(``campaign``, ``benchkill fuzz``).

The only importer of hypothesis; may import every layer below the CLI (relax, passes,
analysis, inputs, execution, errors)."""
