"""Benchmarks of ln_core against PyTorch; run them all with `bash bench/run.sh`."""
