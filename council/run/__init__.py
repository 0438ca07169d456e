"""A run's lifetime: its supervisor, the graph's engine, stopping, resuming, crashing."""
