"""Is council ready to run here: the preflight and `council doctor`."""
