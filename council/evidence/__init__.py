"""The pure checks and accounts: claims, scope, sources, score, regression, usage."""
