// `swift run -c release delegatekit-bench [--quick] [--no-callgrind] [--no-peers] [--results-dir DIR]`, or
// `--churn-only` or `--calling-only` (timings only). The report goes to Benchmarks/results.md and results.json, or to DIR.
Benchmark.main(CommandLine.arguments)
