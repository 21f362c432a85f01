// `swift run -c release delegatekit-bench [--quick] [--no-callgrind] [--no-peers]`, or `--churn-only`
Benchmark.main(CommandLine.arguments)
