"""`council eval`: the same questions answered by each configuration of council (one agent,
three phases, the whole pipeline, a seat config of the user's), judged by one named judge, with
citation accuracy and cost beside the quality score. Built on Inspect AI: the configurations are
solvers, the judgements scorers, the results Inspect logs (docs/eval.md).

Nothing is imported here: `council --help` and the hooks must never load Inspect (~1 s)."""
