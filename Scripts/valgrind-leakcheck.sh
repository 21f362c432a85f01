#!/usr/bin/env bash
# Runs the leak-check workload (Tests/Programs/delegatekit-leakcheck) under valgrind and fails on any definite
# leak or memory error. Usage: Scripts/valgrind-leakcheck.sh [rounds]   (default 2000)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-2000}"

if ! command -v valgrind >/dev/null; then
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q valgrind
fi

swift build --product delegatekit-leakcheck
binary="$(swift build --show-bin-path)/delegatekit-leakcheck"
# valgrind 3.19 cannot read the DWARF 5 the Swift toolchain emits; symbols are enough for its reports.
stripped="$(mktemp -d)/delegatekit-leakcheck"
strip --strip-debug -o "$stripped" "$binary"

log="$(mktemp)"
status=0
valgrind --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite --error-exitcode=3 \
    "$stripped" "$rounds" >"$log" 2>&1 || status=$?
grep -E "rounds done|definitely lost|indirectly lost|possibly lost|still reachable|ERROR SUMMARY" "$log"
if [ "$status" -ne 0 ]; then
    cat "$log" >&2
    echo "error: valgrind found a definite leak or a memory error (exit $status)" >&2
    exit 1
fi
