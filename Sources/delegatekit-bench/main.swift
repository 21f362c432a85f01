// `swift run -c release delegatekit-bench [--quick] [--no-callgrind] [--no-peers]`
Benchmark.main(CommandLine.arguments)
