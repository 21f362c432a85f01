#!/usr/bin/env bash
# Fuzzes DelegateKit's C declaration parsers with libFuzzer (see Fuzz/README.md).
#
#   Scripts/fuzz-parsers.sh [seconds]      # default 600
#
# Builds Fuzz/ParserFuzzer.swift with every Swift file of Sources/DelegateKit into one fuzzer binary (swiftc
# -sanitize=fuzzer,address; the C and assembly files of its three C modules compiled with clang; -lffi), then runs it on a copy of the
# seed corpus Fuzz/corpus with the dictionary Fuzz/c.dict. Everything it writes goes under
# $FUZZ_WORK (default .build/fuzz, which git ignores): the binary, the growing corpus, crash inputs,
# the log. Crashes, hangs (-timeout) and memory blow-ups (-rss_limit_mb) are written to
# $FUZZ_WORK/artifacts; the exit status is libFuzzer's (0 when nothing was found).
#
# Environment: FUZZ_WORK, FUZZ_JOBS (parallel jobs, default 1), FUZZ_MAX_LEN (default 4096),
# FUZZ_OPT (swiftc optimization, default -O).
set -euo pipefail

seconds="${1:-600}"
root="$(cd "$(dirname "$0")/.." && pwd)"
work="${FUZZ_WORK:-$root/.build/fuzz}"
jobs="${FUZZ_JOBS:-1}"
max_len="${FUZZ_MAX_LEN:-4096}"
opt="${FUZZ_OPT:--O}"
# The library's C modules, each as MODULE:FOLDER of CFFIShim/.
c_modules=(CDelegateKitLibffi:Libffi CDelegateKitExits:Exits CDelegateKitRetirement:Retirement CDelegateKitTrampolines:Trampolines)
mkdir -p "$work/obj" "$work/module" "$work/corpus" "$work/artifacts"

# --- Build -------------------------------------------------------------------------------------------
# A module map for each C module (SwiftPM makes them itself; here nobody does), an umbrella over its
# include folder as SwiftPM's, and every C file compiled against all the include folders.
c_objects=()
include_flags=()
module_flags=()
for entry in "${c_modules[@]}"; do
    module=${entry%%:*}
    include_flags+=(-I "$root/CFFIShim/${entry#*:}/include")
    # The module map, and the include folder its headers name each other through (<CDelegateKitLibffi/…>).
    module_flags+=(-I "$work/module/$module" -Xcc -I -Xcc "$root/CFFIShim/${entry#*:}/include")
done
for entry in "${c_modules[@]}"; do
    module=${entry%%:*}
    folder="$root/CFFIShim/${entry#*:}"
    mkdir -p "$work/module/$module"
    cat > "$work/module/$module/module.modulemap" <<EOF
module $module {
    umbrella "$folder/include"
    export *
}
EOF
    for source in "$folder"/*.c "$folder"/*.S; do
        [ -e "$source" ] || continue
        object="$work/obj/$module-$(basename "$source").o"
        clang -c -O1 -g -fsanitize=address,fuzzer-no-link "${include_flags[@]}" "$source" -o "$object"
        c_objects+=("$object")
    done
done
# Every Swift file of the library, in all its folders.
mapfile -t swift_sources < <(find "$root/Sources/DelegateKit" -name '*.swift' | sort)
# -parse-as-library: no top-level code, libFuzzer supplies main().
swiftc -swift-version 6 "$opt" -g -parse-as-library -module-name DelegateKit \
    -sanitize=fuzzer,address \
    "${module_flags[@]}" \
    "${swift_sources[@]}" "$root/Fuzz/ParserFuzzer.swift" \
    "${c_objects[@]}" -lffi \
    -module-cache-path "$work/module-cache" \
    -o "$work/parser-fuzzer"

# --- Run ---------------------------------------------------------------------------------------------
# The seeds (and the inputs that once crashed, so the fuzzer works around the fixes too) are copied,
# so that what libFuzzer adds stays out of the repository. The corpus in $work grows from run to run.
cp "$root"/Fuzz/corpus/* "$root"/Fuzz/regressions/* "$work/corpus/"
cd "$work"
log="$work/fuzz.log"
echo "fuzzing for ${seconds}s from $(date -u '+%Y-%m-%d %H:%M UTC'); log: $log, crash inputs: $work/artifacts/"
started=$SECONDS
status=0
parallel=()
# -jobs even at 1 makes libFuzzer run a child that logs to fuzz-0.log; one job runs in this process.
if [ "$jobs" -gt 1 ]; then parallel=(-jobs="$jobs" -workers="$jobs"); fi
rm -f "$work"/fuzz-*.log
./parser-fuzzer "$work/corpus" \
    -dict="$root/Fuzz/c.dict" \
    -max_total_time="$seconds" \
    -max_len="$max_len" \
    -timeout=5 \
    -rss_limit_mb=2048 \
    -malloc_limit_mb=2048 \
    -artifact_prefix="$work/artifacts/" \
    -use_value_profile=1 \
    -print_final_stats=1 \
    "${parallel[@]}" \
    2>&1 | tee "$log" || status=$?
# With -jobs libFuzzer logs each job to fuzz-N.log; gather those too.
cat "$log" "$work"/fuzz-*.log 2>/dev/null > "$work/all.log" || true

echo
echo "---- summary ----"
echo "fuzzing time: $((SECONDS - started)) s"
grep -h -E '^stat::number_of_executed_units' "$work/all.log" | awk '{ total += $2 } END { print "executions:", total + 0 }'
grep -h -E '^stat::average_exec_per_sec' "$work/all.log" | awk '{ total += $2 } END { print "exec/s:", total + 0 }'
grep -h -E '^#[0-9]+.*cov:' "$work/all.log" | tail -n 1 | sed 's/^/last status: /'
echo "corpus: $(ls "$work/corpus" | wc -l) inputs"
found="$(ls "$work/artifacts" | wc -l)"
echo "crash/timeout/oom inputs in $work/artifacts: $found"
exit "$status"
