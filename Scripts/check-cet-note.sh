#!/usr/bin/env bash
# Checks that the trampoline table keeps CET in a program built with -fcf-protection: a program linked from
# a C file and CFFIShim/Trampolines/TrampolineTable.S, both compiled with the flag, must still say IBT and
# SHSTK in its x86 feature property (`readelf -n`), the linker keeping a feature only where every object
# has it. And that this check can fail: the same program with the table assembled without the flag (so
# without its note) must not say them. With gcc and its linker, and with the Swift toolchain's clang and
# the linker it picks (gold), which SwiftPM builds with. x86_64 only (where the note is).
# Usage: Scripts/check-cet-note.sh
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(uname -m)" != x86_64 ]; then
    echo "check-cet-note: skipped, the x86 feature property is x86_64's"
    exit 0
fi

compilers=(gcc)
if swift=$(command -v swift) && [ -x "$(dirname "$(readlink -f "$swift")")/clang" ]; then
    compilers+=("$(dirname "$(readlink -f "$swift")")/clang")
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# The program's own code: the function the table's stubs stop in, the message its freed stub passes, and
# an entry point. It links no start files and no C library, since Debian 12's glibc marks neither (no
# program linked with them is marked, whatever its own objects say); it is never run, only read.
cat >"$work/program.c" <<'EOF'
__attribute__((visibility("hidden"), noreturn)) void cffi_trampoline_stop(const char *message) {
    (void)message;
    for (;;) {}
}

__attribute__((visibility("hidden"))) const char cffi_trampoline_freed_message[] = "";

void _start(void) {
    for (;;) {}
}
EOF

# Whether the program $1 is marked with both IBT and SHSTK.
keeps_cet() {
    readelf -n "$1" | grep -E 'x86 feature: ' | grep -w IBT | grep -qw SHSTK
}

for cc in "${compilers[@]}"; do
    "$cc" -fcf-protection -c CFFIShim/Trampolines/TrampolineTable.S -o "$work/marked.o"
    "$cc" -fcf-protection=none -c CFFIShim/Trampolines/TrampolineTable.S -o "$work/unmarked.o"
    "$cc" -fcf-protection -nostdlib -static "$work/program.c" "$work/marked.o" -o "$work/marked"
    "$cc" -fcf-protection -nostdlib -static "$work/program.c" "$work/unmarked.o" -o "$work/unmarked"
    if ! keeps_cet "$work/marked"; then
        readelf -n "$work/marked" >&2
        echo "error: with $cc, a program built with -fcf-protection lost IBT or SHSTK (above) by linking the trampoline table" >&2
        exit 1
    fi
    if keeps_cet "$work/unmarked"; then
        readelf -n "$work/unmarked" >&2
        echo "error: with $cc, the program kept IBT and SHSTK (above) with the table assembled without -fcf-protection," \
            "which carries no note: this check cannot tell a table without the note" >&2
        exit 1
    fi
    echo "check-cet-note: with $cc, a program built with -fcf-protection keeps IBT and SHSTK with the trampoline table"
done
