"""What is on disk: council's own writer and locks (disk), the agents' folders (agentfs), a
run's state and its owner, its workspace, progress.log and its events, the loop files, the
published snapshots, the sessions, the run lock, and the redaction every write passes."""
