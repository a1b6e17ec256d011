"""The files here are inputs of ``benchkill equivalence`` (a TVM-style test file among them),
not tests of benchkill: pytest collects none of them."""

collect_ignore_glob = ["*.py"]
