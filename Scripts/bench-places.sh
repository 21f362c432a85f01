#!/usr/bin/env bash
# The benchmark's tables of where it runs (Benchmarks/results.md, "Where it runs"): `delegatekit-bench --place`
# in each place users run DelegateKit, each writing Benchmarks/places/NAME.md:
#   sid-libffi-3.8.0   Debian sid's libffi 3.8.0 (static trampolines) and swiftlang 6.2.3, in the amd64 chroot
#   aarch64-qemu       aarch64 under qemu-user, cross-built as .ci/aarch64.sh does; instructions counted by
#                      qemu itself (wall-clock time under an emulator says nothing)
#   this-machine-mdwe  this machine, in a process under PR_SET_MDWE
#   this-machine       this machine (last: it puts every place's table into results.md)
# Usage: Scripts/bench-places.sh [--quick] [PLACE...]   (as root or with sudo; the chroots as CI makes them)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# shellcheck source=.ci/chroot.sh
source .ci/chroot.sh

quick=()
places=()
for argument in "$@"; do
    case "$argument" in
        --quick) quick=(--quick) ;;
        *) places+=("$argument") ;;
    esac
done
[ "${#places[@]}" -gt 0 ] || places=(sid-libffi-3.8.0 aarch64-qemu this-machine-mdwe this-machine)
wanted() { printf '%s\n' "${places[@]}" | grep -qx "$1"; }

cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
# A virtual machine's model name can be as bare as "AMD EPYC": its family and model tell two apart.
family=$(grep -m1 "^cpu family" /proc/cpuinfo | cut -d: -f2 | tr -d ' ')
model=$(grep -m1 "^model[[:space:]]*:" /proc/cpuinfo | cut -d: -f2 | tr -d ' ')
[ -n "$family" ] && cpu="$cpu (family $family, model $model)"
host_libffi=$(pkg-config --modversion libffi)
host_swift=$(swift --version 2>&1 | grep -o 'Swift version [0-9.]*' | head -n 1)
mkdir -p Benchmarks/places

if wanted sid-libffi-3.8.0 || wanted aarch64-qemu; then
    dk_begin bench-places
fi

if wanted sid-libffi-3.8.0; then
    copy=$DK_CHROOT_BASE/src-bench-sid
    dk_copy_source "$root" "$copy"
    dpkg-query --root="$DK_CHROOT_AMD64" -W valgrind >/dev/null 2>&1 || dk_chroot_install "$DK_CHROOT_AMD64" valgrind
    in_sid() { dk_chroot_run "$DK_CHROOT_AMD64" --bind "$copy" "$DK_SRC_IN_CHROOT" -- bash -c 'cd "$0" && "$@"' "$DK_SRC_IN_CHROOT" "$@"; }
    in_sid swift build -c release --product delegatekit-bench --scratch-path .build/bench-sid "${DK_SWIFT_62_FLAGS[@]}"
    libffi=$(in_sid pkg-config --modversion libffi)
    in_sid .build/bench-sid/release/delegatekit-bench --place sid-libffi-3.8.0 "${quick[@]}" \
        --describe "$cpu, Debian sid's libffi $libffi (static trampolines) and swiftlang 6.2.3, in CI's amd64 chroot"
    cp "$copy/Benchmarks/places/sid-libffi-3.8.0.md" Benchmarks/places/
fi

if wanted aarch64-qemu; then
    trap dk_qemu_unregister EXIT
    dk_qemu_register
    dk_make_arm64_sysroot "$DK_SYSROOT_ARM64"
    copy=$DK_CHROOT_BASE/src-aarch64
    dk_copy_source "$root" "$copy"
    dk_cross_toolset "$copy"
    cross() { dk_cross_build "$copy" -c release --scratch-path .build/aarch64-bench "$@"; }
    cross --product delegatekit-bench
    bin=$(cross --show-bin-path | tail -n 1)
    qemu_dir=$(dirname "$DK_QEMU_AARCH64")
    dk_chroot_run "$DK_SYSROOT_ARM64" --bind "$copy" "$DK_SRC_IN_CHROOT" --ro-bind "$qemu_dir" /qemu -- \
        bash -c 'cd "$0" && "$@"' "$DK_SRC_IN_CHROOT" "$bin/delegatekit-bench" --place aarch64-qemu --quick \
        --counter qemu=/qemu/qemu-aarch64 \
        --describe "aarch64 under $("$DK_QEMU_AARCH64" --version | head -n 1 | sed 's/ (.*//') on $cpu, Debian sid's libffi and swiftlang 6.2.3; times are the emulator's and mean nothing, instructions are the guest's"
    cp "$copy/Benchmarks/places/aarch64-qemu.md" Benchmarks/places/
fi

if wanted this-machine-mdwe; then
    swift run -c release delegatekit-bench --place this-machine-mdwe --mdwe "${quick[@]}" \
        --describe "$cpu, Debian 12, libffi $host_libffi, $host_swift, in a process under PR_SET_MDWE (instructions: the same code as without it)"
fi

if wanted this-machine; then
    swift run -c release delegatekit-bench --place this-machine "${quick[@]}" \
        --describe "$cpu, Debian 12, libffi $host_libffi (no static trampolines), $host_swift"
fi
