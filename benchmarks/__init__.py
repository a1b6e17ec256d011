"""benchkill's asv suite: pass time and memory (bench_pass), VM memory and run time (bench_vm)."""
