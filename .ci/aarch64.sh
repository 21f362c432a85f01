#!/usr/bin/env bash
# CI stage: a second CPU. Cross-compiles the package and its tests for aarch64 with Debian's swiftlang 6.2.3
# (amd64, in the amd64 chroot) against an arm64 Debian sid root used as sysroot, then runs the test binary in
# that arm64 root under qemu-aarch64 (binfmt), on both call paths.
#
# Why cross-compile: compiling under qemu-user is ~14x slower. Why run in the arm64 root (a chroot whose
# programs the kernel hands to qemu through binfmt_misc: dk_qemu_register) rather than `qemu-aarch64 -L`:
# every child process (Swift Testing's exit tests re-run the test binary; some tests run helper executables
# from the build directory) is an aarch64 program too and runs the same way without any set-up, and the
# paths tests read (/usr/include/aarch64-linux-gnu/...) are the arm64 system's.
#
# What cannot work here, by design: the tests that run `swift build -c release` (ReleaseBuild.swift): the arm64
# root has no `swift` driver on PATH (its maintainer scripts, which make /usr/bin/swift, never ran), and
# compiling under qemu would take most of an hour anyway; the release products are cross-built below instead.
# And qemu-user answers `process_vm_readv` with ENOSYS and shows the host thread's state in
# /proc/self/task/TID/syscall: the one test that needs them says so and is skipped (LeavingCallsTests).
#
# Run as root (CI) or with sudo. Each stage prints its wall time. Exits non-zero when a stage failed, after
# running both paths.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# shellcheck source=.ci/chroot.sh
source .ci/chroot.sh

dk_begin aarch64
trap dk_qemu_unregister EXIT
dk_stage "qemu-aarch64 set-up" dk_qemu_register
dk_stage "arm64 sysroot set-up" dk_make_arm64_sysroot "$DK_SYSROOT_ARM64"

# A copy of the package of its own (see .ci/swift-6.2.sh); also bound into the arm64 root at the same path,
# so that the test binary finds its sources (#filePath) and the build directory's helper executables.
copy=$DK_CHROOT_BASE/src-aarch64
dk_copy_source "$root" "$copy"

# The cross build's toolset and pkg-config (dk_cross_build in .ci/chroot.sh says why each option).
dk_cross_toolset "$copy"
scratch=.build/aarch64
cross_build() { dk_cross_build "$copy" "$@"; }

# Extra arguments for the test runs, e.g. DK_TEST_ARGS="--skip SAXParsingTests" (Swift Testing's --filter and
# --skip take regular expressions): to measure the rest when one test stops the whole process.
read -r -a test_args <<< "${DK_TEST_ARGS:-}"

failed=()
log=$DK_LOG_DIR/aarch64-build.log
build() { cross_build --build-tests --scratch-path "$scratch" 2>&1 | tee "$log"; }
if ! dk_stage "cross build for aarch64 (6.2.3)" build; then
    echo "error: the cross build failed (log: $log)" >&2
    exit 1
fi
if dk_package_warnings "$log"; then
    echo "error: the aarch64 build has warnings (listed above)" >&2
    failed+=("aarch64 warnings")
fi

# The release executables the tests run in child processes (ReleaseBuild.swift would build them with a
# `swift` the arm64 root does not have): cross-built here, and named to the tests by
# DELEGATEKIT_RELEASE_PRODUCTS.
log=$DK_LOG_DIR/aarch64-release-build.log
release_build() {
    cross_build -c release --scratch-path "$scratch-release" --product delegatekit-misuse 2>&1 | tee "$log" &&
        cross_build -c release --scratch-path "$scratch-release" --product delegatekit-trampolines 2>&1 | tee -a "$log" &&
        cross_build -c release --scratch-path "$scratch-release" --product delegatekit-slot-races 2>&1 | tee -a "$log"
}
if ! dk_stage "cross release build of the programs the tests run (ReleaseBuild.products)" release_build; then
    echo "error: the release cross build failed (log: $log)" >&2
    exit 1
fi
release_bin=$(cross_build -c release --scratch-path "$scratch-release" --show-bin-path | tail -n 1)

bin=$(cross_build --scratch-path "$scratch" --show-bin-path | tail -n 1)
tests=$(find "$copy/${bin#"$DK_SRC_IN_CHROOT"/}" -maxdepth 1 -name '*PackageTests.xctest' | head -n 1)
[ -n "$tests" ] || { echo "error: no test binary in $bin" >&2; exit 1; }
tests=$DK_SRC_IN_CHROOT/${tests#"$copy"/}
file "$copy/${tests#"$DK_SRC_IN_CHROOT"/}" 2>/dev/null || true

# `swift test` runs the tests of a Swift Testing suite on Linux as `<tests>.xctest --testing-library
# swift-testing` from the package directory; the same here, in the arm64 root, the package bound at the same
# path as in the build.
for fast_path in 1 0; do
    log=$DK_LOG_DIR/aarch64-test-fast-path-$fast_path.log
    test_run() {
        # The churn and jump counts at a hundredth: emulated, one churn exit test still ran after six
        # minutes at a tenth.
        # No backtracer in the children that stop on purpose (the exit tests'): under qemu-user it reports
        # "failed to suspend thread" and only delays their end.
        DK_ENV_DELEGATEKIT_FAST_PATH=$fast_path DK_ENV_DELEGATEKIT_RELEASE_PRODUCTS=$release_bin \
            DK_ENV_DELEGATEKIT_CHURN_SCALE=100 DK_ENV_SWIFT_BACKTRACE=enable=no \
            dk_chroot_run "$DK_SYSROOT_ARM64" --bind "$copy" "$DK_SRC_IN_CHROOT" -- \
            bash -c 'cd "$0" && uname -m && "$@"' "$DK_SRC_IN_CHROOT" "$tests" --testing-library swift-testing "${test_args[@]}" 2>&1 | tee "$log"
    }
    dk_stage "aarch64 tests under qemu, DELEGATEKIT_FAST_PATH=$fast_path" test_run ||
        failed+=("aarch64 tests, DELEGATEKIT_FAST_PATH=$fast_path")
    dk_test_summary "$log"
done

dk_end "${failed[@]}"
