#!/usr/bin/env bash
# CI stage: the package with a second toolchain, Debian sid's swiftlang 6.2.3 (an assertions build), in an
# amd64 chroot: a user's package on a machine with nothing but Swift and libffi-dev; then the package built
# with no warning in its own sources, and the suite on both call paths.
# Run as root (CI) or with sudo. Every stage prints its wall time. Exits non-zero if any stage failed, after
# running the test suite on both paths (so that one run reports both).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# shellcheck source=.ci/chroot.sh
source .ci/chroot.sh

dk_begin swift-6.2

# A copy of the package, not a bind mount of it: the tests run `swift build -c release` into the package's
# own .build/release-stops (ReleaseBuild.swift), which a bind mount would share with the host's 6.3.1 build;
# and the host's .build must never see 6.2.3's modules. The copy's .build is kept between runs (the copy is
# refreshed around it), so a rerun is incremental. In CI the copy is new, so the build is clean and shows
# every warning.
copy=$DK_CHROOT_BASE/src-swift-6.2
dk_copy_source "$root" "$copy"

swift_in_chroot() {
    dk_chroot_run "$DK_CHROOT_AMD64" --bind "$copy" "$DK_SRC_IN_CHROOT" -- \
        bash -c 'cd "$0" && "$@"' "$DK_SRC_IN_CHROOT" "$@"
}

# Extra arguments for the test runs, e.g. DK_TEST_ARGS="--skip SAXParsingTests" (Swift Testing's --filter and
# --skip take regular expressions): to measure the rest when one test stops the whole process.
read -r -a test_args <<< "${DK_TEST_ARGS:-}"

failed=()
dk_stage "6.2.3 version" swift_in_chroot swift --version

# A user's package on a machine with only Swift and libffi's headers (the chroot has no SQLite, libxml2,
# libjpeg or GLib headers yet): Getting Started's manifest, with targets named as users name theirs, must
# resolve DelegateKit and build. Skipped when the chroot is reused and already has the test libraries.
# The marker lists the libraries installed: a reused chroot gets any that DK_TEST_LIBRARIES gained since.
libraries_marker=$DK_CHROOT_AMD64/.delegatekit-ci-libraries
if [ ! -e "$libraries_marker" ]; then
    dk_stage "consumer package with only Swift and libffi-dev (6.2.3)" \
        swift_in_chroot Scripts/check-consumer-manifest.sh Examples/Consumer
fi
if [ "$(cat "$libraries_marker" 2>/dev/null)" != "${DK_TEST_LIBRARIES[*]}" ]; then
    dk_stage "test libraries into the chroot" dk_chroot_install "$DK_CHROOT_AMD64" "${DK_TEST_LIBRARIES[@]}"
    echo "${DK_TEST_LIBRARIES[*]}" > "$libraries_marker"
fi

# The project has no warnings: any warning in a file of the package's own (not under .build) fails, whatever
# its targets are called.
log=$DK_LOG_DIR/swift-6.2-build.log
build() { swift_in_chroot swift build --build-tests --scratch-path .build/swift-6.2 "${DK_SWIFT_62_FLAGS[@]}" 2>&1 | tee "$log"; }
if dk_stage "6.2.3 build" build; then
    if dk_package_warnings "$log"; then
        echo "error: the 6.2.3 build has warnings (listed above)" >&2
        failed+=("6.2.3 warnings")
    fi
else
    # Nothing to test without a build.
    echo "error: the 6.2.3 build failed (log: $log)" >&2
    exit 1
fi

# The README's test command (register path for register-only signatures), then every closure through libffi.
# DK_SWIFT_62_TESTS=0 stops after the build (for a quick check of the toolchain alone).
fast_paths=(1 0)
[ "${DK_SWIFT_62_TESTS:-1}" != 0 ] || fast_paths=()
for fast_path in "${fast_paths[@]}"; do
    log=$DK_LOG_DIR/swift-6.2-test-fast-path-$fast_path.log
    test_run() {
        # sid's libffi 3.8.0 is built with static trampolines; the register path is taken all the same
        # (its slots are DelegateKit's own), which the tests check (ExpectedRegisterPath).
        DK_ENV_DELEGATEKIT_FAST_PATH=$fast_path swift_in_chroot swift test --scratch-path .build/swift-6.2 "${DK_SWIFT_62_FLAGS[@]}" "${test_args[@]}" 2>&1 | tee "$log"
    }
    dk_stage "6.2.3 tests, DELEGATEKIT_FAST_PATH=$fast_path" test_run || failed+=("6.2.3 tests, DELEGATEKIT_FAST_PATH=$fast_path")
    dk_test_summary "$log"
done

dk_end "${failed[@]}"
