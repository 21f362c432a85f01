// `swift run -c release delegatekit-bench [--quick] [--no-callgrind] [--no-peers] [--results-dir DIR]`, or
// `--shapes-only` or `--arities-only` (with callgrind unless --no-callgrind), `--churn-only` or `--calling-only` (timings only). The report goes to Benchmarks/results.md and results.json, or to DIR.
// Without `-c release`, a debug build: its own table against a plain `@convention(c)` closure, written to
// Benchmarks/results-debug.md (`[--quick] [--no-callgrind] [--results-dir DIR]`), or `--check-debug-bounds`.
Benchmark.main(CommandLine.arguments)
