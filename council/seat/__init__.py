"""One seat through one phase: its folder, its turns, its hooks, its failover."""
