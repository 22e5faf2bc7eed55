"""Turn-taking metrics of other benchmarks, each in its own definition, beside ours (docs/metrics-compared.md)."""
