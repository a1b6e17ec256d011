"""The inputs of the benchmarks: generated lowered modules (``families``), the shared
PrimFuncs and IR leaves they are built from (``kernels``) and the VM workloads with their
registry (``workloads``).  Imports only :mod:`benchkill.relax` and :mod:`benchkill.errors`."""
