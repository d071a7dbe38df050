"""What the benchmarks (bench/) rest on."""
