# shellcheck shell=bash
# Functions for CI stages that build in a Debian chroot: a second toolchain (Debian sid's swiftlang 6.2.3,
# amd64) and a second CPU (an arm64 sysroot, cross-compiled against and run under qemu-user).
# `source .ci/chroot.sh` (from .ci/swift-6.2.sh and .ci/aarch64.sh); nothing runs on sourcing.
#
# The one hard rule of this file: a chroot is never deleted while anything is mounted under it. `rm -rf`
# follows a bind mount of /dev into the machine's own /dev (it happened). So:
#   - every mount made by dk_chroot_run lives in a private mount namespace (`unshare --mount
#     --propagation private`): it vanishes with the process, whatever way the process ends, and never
#     appears in the host's mount table;
#   - dk_chroot_delete refuses while `findmnt` lists anything under the path, and deletes only with
#     `rm -rf --one-file-system` (which never crosses into another file system even if a mount slipped in).
# Nothing here mounts outside a private namespace except binfmt_misc on /proc/sys/fs/binfmt_misc (a
# machine-wide setting, never under a chroot), where the aarch64 stage registers its emulator for its run.

# Debian's mirror; sid there is a fixed snapshot whose Release file has expired, so apt needs
# Check-Valid-Until=false (debootstrap itself does not check it).
: "${DK_MIRROR:=http://deb.debian.org/debian}"
: "${DK_SUITE:=sid}"
# Where chroots live. Not under the package (a `swift build` must never see them) and not under /tmp
# (often a small tmpfs: the amd64 chroot is ~4 GB).
: "${DK_CHROOT_BASE:=/var/tmp/delegatekit-ci}"
: "${DK_CHROOT_AMD64:=$DK_CHROOT_BASE/sid-amd64}"
: "${DK_SYSROOT_ARM64:=$DK_CHROOT_BASE/sid-arm64}"
# Where the package source appears inside either chroot. The same path in both, so that paths compiled into
# the test binary by the amd64 build (#filePath, the build directory) are valid when it runs in arm64.
: "${DK_SRC_IN_CHROOT:=/src}"

# The libraries the package, its tests and its examples link against (as .ci/run installs on the host).
# (libpython3-dev: CPython's C API, which PythonTests embeds.)
DK_TEST_LIBRARIES=(libffi-dev libsqlite3-dev libxml2-dev libjpeg-dev libglib2.0-dev libpng-dev liblua5.4-dev pkg-config python3 libpython3-dev)
# The toolchain chroot starts as a machine with only Swift and libffi's headers (plus libc6-dev, which
# Debian's swiftlang does not pull in but every link needs, git, which SwiftPM
# calls, and certificates), where a user's package must build; the test libraries come after
# (dk_chroot_install).
DK_AMD64_PACKAGES=(swiftlang libc6-dev libffi-dev git ca-certificates)
# The arm64 sysroot: swiftlang for its aarch64 runtime (libswiftCore.so, Foundation, XCTest, Testing and
# their .swiftmodules under /usr/libexec/swift/lib/swift), libc6-dev/libstdc++ come with it.
DK_ARM64_PACKAGES=(swiftlang "${DK_TEST_LIBRARIES[@]}")

# Options every 6.2.3 build needs. Debian's swiftlang 6.2.3 ships Swift Testing's Foundation cross-import
# overlay as a module (_Testing_Foundation.swiftmodule) without its library (lib_Testing_Foundation.so), so
# every test target that imports both Testing and Foundation fails to link ("cannot find
# -l_Testing_Foundation"). Without the overlay nothing asks for the library (the tests use none of its API).
DK_SWIFT_62_FLAGS=(-Xswiftc -Xfrontend -Xswiftc -disable-cross-import-overlays)

dk_log() { echo "== $*" >&2; }

# Prints the wall time of a stage: `dk_stage NAME command...`.
dk_stage() {
    local name=$1 start=$SECONDS status=0
    shift
    dk_log "$name"
    "$@" || status=$?
    dk_log "$name: $((SECONDS - start)) s (exit $status)"
    echo "$name: $((SECONDS - start)) s (exit $status)" >> "${DK_TIMES_FILE:-/dev/null}"
    return "$status"
}

# Runs a command as root: CI runs as root; a developer has sudo.
dk_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Installs what a fresh bookworm machine lacks.
dk_host_setup() {
    local packages=(debootstrap util-linux) missing=() package
    for package in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    if [ "${#missing[@]}" -gt 0 ]; then
        dk_log "installing on the host: ${missing[*]}"
        dk_root apt-get update -q
        DEBIAN_FRONTEND=noninteractive dk_root apt-get install -y -q "${missing[@]}"
    fi
}

# The binfmt_misc entry that runs aarch64 programs, ours alone, and the emulator it names.
DK_BINFMT_ENTRY=delegatekit-aarch64
: "${DK_QEMU_AARCH64:=$DK_CHROOT_BASE/qemu/qemu-aarch64}"

# Lets the kernel run aarch64 programs, in chroots too, through sid's qemu-aarch64 (static), registered
# under an entry of our own; dk_qemu_unregister removes it. Not bookworm's qemu-user-static (7.2): under it
# the test run stalled for good (every thread in a futex wait, exit tests' children never reaped), while
# sid's ran the same binary to the end in under two minutes (measured: 11.1.3).
# Needs the amd64 chroot (its apt downloads the package).
dk_qemu_register() {
    if [ ! -x "$DK_QEMU_AARCH64" ] || [ "${DK_FRESH:-0}" = 1 ]; then
        local dir
        dir=$(dirname "$DK_QEMU_AARCH64")
        dk_root mkdir -p "$dir"
        dk_chroot_apt_update "$DK_CHROOT_AMD64"
        # (As root without the _apt sandbox: the download lands in a directory bound from the host.)
        dk_chroot_run "$DK_CHROOT_AMD64" --bind "$dir" /download -- \
            sh -c 'cd /download && apt-get -o APT::Sandbox::User=root download -q qemu-user'
        # Only the one emulator (the package holds every target's).
        dpkg-deb --fsys-tarfile "$dir"/qemu-user_*.deb | dk_root tar -C "$dir" --strip-components=3 -xf - ./usr/bin/qemu-aarch64
        dk_root rm -f "$dir"/qemu-user_*.deb
    fi
    "$DK_QEMU_AARCH64" --version | head -n 1
    # A container or a minimal machine may not have binfmt_misc mounted. This is the one mount outside a
    # private namespace, and it is the kernel's own, not under any chroot: it stays (like systemd's).
    if [ ! -e /proc/sys/fs/binfmt_misc/status ]; then
        dk_root mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    fi
    dk_qemu_unregister
    # The magic and mask of an aarch64 ELF executable (qemu's own). The kernel tries the newest entry
    # first, so this one wins over a qemu-aarch64 the machine may have. Flags: F opens the emulator now, so
    # that it is found inside a chroot that has no copy of it; P hands it the program's own argv[0]; O lets
    # it read a program the caller may run but not read.
    local magic='\x7f\x45\x4c\x46\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
    local mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff'
    echo ":$DK_BINFMT_ENTRY:M::$magic:$mask:$(realpath "$DK_QEMU_AARCH64"):POF" |
        dk_root tee /proc/sys/fs/binfmt_misc/register > /dev/null
}

# Removes the binfmt_misc entry dk_qemu_register made (nothing when there is none).
dk_qemu_unregister() {
    local entry=/proc/sys/fs/binfmt_misc/$DK_BINFMT_ENTRY
    if [ -e "$entry" ]; then echo -1 | dk_root tee "$entry" > /dev/null; fi
}

# Lists the mount points at or under a path (the host's mount table), one a line.
dk_mounts_under() {
    local dir
    dir=$(realpath -m "$1")
    findmnt -rn -o TARGET | awk -v d="$dir" '$0 == d || index($0, d "/") == 1'
}

# Deletes a chroot, only when nothing is mounted under it, and never across a file system boundary.
dk_chroot_delete() {
    local dir
    dir=$(realpath -m "$1")
    case "$dir" in
        / | /var | /var/tmp | /tmp | /usr | /home | "") echo "error: refusing to delete '$dir'" >&2; return 1 ;;
    esac
    [ -e "$dir" ] || return 0
    local mounts
    mounts=$(dk_mounts_under "$dir")
    if [ -n "$mounts" ]; then
        echo "error: refusing to delete $dir: mounted under it:" >&2
        echo "$mounts" >&2
        return 1
    fi
    dk_root rm -rf --one-file-system -- "$dir"
}

# apt inside sid must accept the expired Release file; and no recommends, like debootstrap.
dk_write_apt_conf() {
    local dir=$1
    dk_root mkdir -p "$dir/etc/apt/apt.conf.d"
    printf '%s\n' 'Acquire::Check-Valid-Until "false";' 'APT::Install-Recommends "false";' |
        dk_root tee "$dir/etc/apt/apt.conf.d/99delegatekit-ci" > /dev/null
}

# Whether a root must be made: not when a finished one of the same packages is there (marked by the file
# its maker writes last, which lists them: `dk_root_complete`; DK_FRESH=1 starts over). A half-made one
# from an interrupted run, or one made with other packages, is deleted (safely) first.
dk_root_needs_making() {
    local dir=$1 packages=$2
    if [ "${DK_FRESH:-0}" = 1 ]; then dk_chroot_delete "$dir"; fi
    if [ -e "$dir/.delegatekit-ci-complete" ]; then
        if [ "$(cat "$dir/.delegatekit-ci-complete")" = "$packages" ]; then
            dk_log "reusing $dir"
            return 1
        fi
        dk_log "remaking $dir: it was made with other packages than: $packages"
    fi
    dk_chroot_delete "$dir"
    dk_root mkdir -p "$(dirname "$dir")"
}

# The start of a stage script (.ci/swift-6.2.sh, .ci/aarch64.sh): its log directory, a fresh file of its
# stages' wall times, the host's set-up and the amd64 toolchain chroot.
dk_begin() {
    local name=$1
    : "${DK_LOG_DIR:=$DK_CHROOT_BASE/logs}"
    mkdir -p "$DK_LOG_DIR"
    export DK_TIMES_FILE=$DK_LOG_DIR/$name.times
    : > "$DK_TIMES_FILE"
    dk_stage "host set-up" dk_host_setup
    dk_stage "amd64 chroot set-up" dk_make_amd64_chroot "$DK_CHROOT_AMD64"
}

# The end of a stage script: its stages' wall times, then failure if any stage named in the arguments failed.
dk_end() {
    echo "== wall times"
    cat "$DK_TIMES_FILE"
    if [ $# -gt 0 ]; then
        printf 'error: failed: %s\n' "$@" >&2
        exit 1
    fi
}

# Makes the amd64 toolchain chroot from nothing (~1 min, ~4 GB). Reuses an existing one that has
# every package (set DK_FRESH=1 to start over).
dk_make_amd64_chroot() {
    local dir=${1:-$DK_CHROOT_AMD64}
    local include
    include=$(IFS=,; echo "${DK_AMD64_PACKAGES[*]}")
    dk_root_needs_making "$dir" "$include" || return 0
    # minbase: only what the toolchain needs; debootstrap resolves swiftlang's dependencies itself.
    # debootstrap mounts /proc and /sys (and more) in the new root while it installs, in the caller's mount
    # namespace, unmounting them in a trap: run it in a private namespace, so that even a killed debootstrap
    # leaves no mount under the chroot.
    dk_root unshare --mount --propagation private -- \
        debootstrap --variant=minbase --include="$include" "$DK_SUITE" "$dir" "$DK_MIRROR"
    dk_write_apt_conf "$dir"
    # The downloaded .debs are not needed any more (~0.5 GB).
    dk_root rm -f "$dir"/var/cache/apt/archives/*.deb
    dk_root_complete "$dir" "$include"
}

# Makes the arm64 sysroot without emulating dpkg (which takes ~14 min under qemu): debootstrap's first
# stage downloads and unpacks on the host; then every downloaded .deb is unpacked into the root with
# dpkg-deb. The sysroot only needs files: headers, libraries, pkg-config files and the Swift runtime.
# No maintainer script runs; what they would do and a cross build or a run needs is done here by hand
# (/etc/passwd, the loader's cache).
dk_make_arm64_sysroot() {
    local dir=${1:-$DK_SYSROOT_ARM64}
    local include
    include=$(IFS=,; echo "${DK_ARM64_PACKAGES[*]}")
    dk_root_needs_making "$dir" "$include" || return 0
    # The first stage mounts nothing, but it runs in a private namespace all the same (see above).
    dk_root unshare --mount --propagation private -- debootstrap --arch=arm64 --foreign --variant=minbase --include="$include" \
        "$DK_SUITE" "$dir" "$DK_MIRROR"
    # The first stage unpacked only the essential packages; unpack all (the essential ones again: harmless).
    # --keep-directory-symlink: the root is merged-/usr (/lib -> usr/lib); a package that still ships a
    # file under /lib must land through the link, not replace it with a directory. (debootstrap does the same.)
    local deb count=0
    for deb in "$dir"/var/cache/apt/archives/*.deb; do
        dpkg-deb --fsys-tarfile "$deb" | dk_root tar -C "$dir" --keep-directory-symlink -xf -
        count=$((count + 1))
    done
    dk_log "unpacked $count packages into $dir"
    # The first stage leaves /proc as a symlink to /proc (the second stage would replace it): a mount
    # on it would land on the host's /proc. Make it the directory a chroot needs.
    if [ -L "$dir/proc" ]; then dk_root rm -f "$dir/proc" && dk_root mkdir -m 555 "$dir/proc"; fi
    # What maintainer scripts would have made and a run in the chroot needs: users and groups
    # (getpwuid, Foundation's home directory).
    [ -e "$dir/etc/passwd" ] || dk_root cp "$dir/usr/share/base-passwd/passwd.master" "$dir/etc/passwd"
    [ -e "$dir/etc/group" ] || dk_root cp "$dir/usr/share/base-passwd/group.master" "$dir/etc/group"
    dk_write_apt_conf "$dir"
    # The loader searches Debian's multiarch directories without a cache, but /etc/ld.so.conf.d may name
    # more: build the cache once, with the arm64 ldconfig under qemu (dk_qemu_register; one short static program).
    # No mount is needed for it.
    dk_root chroot "$dir" /sbin/ldconfig || dk_log "warning: ldconfig in $dir failed; relying on the built-in multiarch paths"
    # The first stage's own scripts and the .debs (~1 GB) are not needed.
    dk_root rm -rf --one-file-system "$dir/debootstrap"
    dk_root rm -f "$dir"/var/cache/apt/archives/*.deb
    dk_root_complete "$dir" "$include"
}

# Marks a root finished, made with `packages` (what dk_root_needs_making compares).
dk_root_complete() {
    printf '%s\n' "$2" | dk_root tee "$1/.delegatekit-ci-complete" > /dev/null
}

# Refreshes the package lists of a chroot made by dk_make_amd64_chroot, with apt inside it (the mirror's
# sid needs the apt.conf dk_write_apt_conf wrote). The host's resolv.conf is copied in for the download.
dk_chroot_apt_update() {
    dk_root cp /etc/resolv.conf "$1/etc/resolv.conf"
    dk_chroot_run "$1" -- apt-get update -q
}

# Installs packages into a chroot made by dk_make_amd64_chroot.
dk_chroot_install() {
    local dir=$1
    shift
    dk_chroot_apt_update "$dir"
    DK_ENV_DEBIAN_FRONTEND=noninteractive dk_chroot_run "$dir" -- apt-get install -y -q "$@"
    dk_root sh -c 'rm -f "$1"/var/cache/apt/archives/*.deb' sh "$dir"
}

# Runs a command in a chroot, with /proc, /dev, /sys and the given bind mounts made inside a private mount
# namespace: they vanish with the command, never show on the host, and can never be under a chroot that
# is being deleted.
#   dk_chroot_run DIR [--bind HOST_PATH CHROOT_PATH]... [--ro-bind HOST_PATH CHROOT_PATH]... -- COMMAND...
# The command runs with a clean environment (HOME=/root, PATH, LANG=C.UTF-8, TERM) plus every
# DK_ENV_* variable of the caller passed without the prefix (DK_ENV_DELEGATEKIT_FAST_PATH=0 ->
# DELEGATEKIT_FAST_PATH=0).
dk_chroot_run() {
    local dir binds=() name
    dir=$(realpath "$1")
    shift
    while [ $# -gt 0 ]; do
        case "$1" in
            --bind | --ro-bind) binds+=("$1" "$2" "$3"); shift 3 ;;
            --) shift; break ;;
            *) echo "dk_chroot_run: unknown option $1" >&2; return 2 ;;
        esac
    done
    # A mount point that is a symlink would be followed out of the chroot (onto the host's own /proc,
    # /dev...): refuse.
    for name in proc dev sys tmp; do
        if [ -L "$dir/$name" ] || [ ! -d "$dir/$name" ]; then
            echo "error: $dir/$name is not a directory; refusing to mount on it" >&2
            return 1
        fi
    done
    local env=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 TERM="${TERM:-dumb}")
    for name in $(compgen -v DK_ENV_ || true); do
        env+=("${name#DK_ENV_}=${!name}")
    done
    # The mount points are made on the chroot's own file system (empty directories; harmless if left).
    # The inner script runs in the new namespace: `set -e` there, so a failed mount stops before chroot.
    # The mounts made into /proc, /dev and /sys of the namespace's copy of the chroot are private: the
    # propagation is set before any mount, so nothing reaches the host.
    dk_root unshare --mount --propagation private --pid --fork --kill-child -- bash -c '
        set -euo pipefail
        dir=$1; shift
        mount -t proc proc "$dir/proc"
        # /dev with its submounts (devpts for a terminal, /dev/shm for POSIX shared memory).
        mount --rbind /dev "$dir/dev"
        mount -t sysfs -o ro sysfs "$dir/sys" 2>/dev/null || mount --rbind -o ro /sys "$dir/sys"
        mount -t tmpfs tmpfs "$dir/tmp"   # a fresh /tmp, so that nothing is left behind in the chroot
        chmod 1777 "$dir/tmp"
        while [ "$1" != -- ]; do
            kind=$1 src=$2 dst=$3; shift 3
            mkdir -p "$dir$dst"
            mount --bind "$src" "$dir$dst"
            # A read-only bind needs a second, remounting step.
            if [ "$kind" = --ro-bind ]; then mount -o remount,bind,ro "$dir$dst"; fi
        done
        shift
        exec chroot "$dir" "$@"
    ' dk-chroot-run "$dir" "${binds[@]}" -- env -i "${env[@]}" "$@"
}

# Copies the package at $1 into $2 for a build in a chroot, leaving $2/.build (so a rerun is incremental)
# and removing whatever else was there (a file deleted from the package must not linger in the copy).
# A copy, not a bind mount: see .ci/swift-6.2.sh.
dk_copy_source() {
    local src=$1 dst=$2
    mkdir -p "$dst"
    find "$dst" -mindepth 1 -maxdepth 1 ! -name .build -exec rm -rf --one-file-system -- {} +
    # Not Package.resolved (ignored by git, so never in a clone): the host's may pin swift-syntax from a build
    # with the Macros trait, which SwiftPM would then fetch even without the trait.
    tar -C "$src" --exclude=./.build --exclude=./Package.resolved -cf - . | tar -C "$dst" -xf -
}

# Prints (and succeeds when there are) compiler warnings in the package's own files in a build log: a
# path under the package as the chroot sees it ($DK_SRC_IN_CHROOT) or relative, not under .build.
# Independent of target names.
dk_package_warnings() {
    grep -E "^($DK_SRC_IN_CHROOT/)?[^/<: ][^:]*:[0-9]+:([0-9]+:)? warning:" "$1" |
        grep -vE "^($DK_SRC_IN_CHROOT/)?\.build/"
}

# Prints the summary lines of a Swift Testing run and the names of the failed tests.
dk_test_summary() {
    echo "== summary of $1"
    # (Colour codes removed: Swift Testing colours its output when run directly.)
    sed 's/\x1b\[[0-9;]*m//g' "$1" | grep -E "^✘ Test .*(failed|recorded an issue)|^✘ Suite|Test run with .* tests|error: Exited with" |
        sed -E 's/ at .*//' | sort -u | tail -n 400 || true
}

# ---- Cross-compiling for aarch64 (.ci/aarch64.sh, Scripts/bench-places.sh) ----
# Where the arm64 root appears inside the amd64 chroot (read-only: the build must not change it).
DK_SYSROOT_IN_CHROOT=/sysroot

# Writes the toolset of an aarch64 cross build into the package copy at $1 (.build/aarch64-toolset.json):
# SwiftPM's documented file for extra tool options (`--destination` is deprecated and hidden in 6.2.3's
# `swift build --help`). `--sdk` alone does not reach swiftc (measured: no `-sdk` in its command line, and
# then "missing required module 'SwiftGlibc'"), so the toolset states the sysroot for both compilers:
#   -sdk / --sysroot: headers and libraries of the arm64 root;
#   -resource-dir: the aarch64 Swift runtime and the .swiftmodules of its standard library, Foundation,
#     XCTest and Testing, from the arm64 swiftlang package (the amd64 toolchain's own is for x86_64 only);
#   -use-ld=lld: the toolchain's own lld links any target (the chroot's GNU ld is x86_64 only);
#   the extra rpath: the driver adds `<resource-dir>/linux`, which is this file's /sysroot/... path; the
#   binary runs in the arm64 root, where the runtime is /usr/libexec/swift/lib/swift/linux.
dk_cross_toolset() {
    local sysroot=$DK_SYSROOT_IN_CHROOT
    mkdir -p "$1/.build"
    cat > "$1/.build/aarch64-toolset.json" <<EOF
{
  "schemaVersion": "1.0",
  "swiftCompiler": {
    "extraCLIOptions": ["-sdk", "$sysroot", "-resource-dir", "$sysroot/usr/libexec/swift/lib/swift", "-use-ld=lld",
                        "-Xlinker", "-rpath", "-Xlinker", "/usr/libexec/swift/lib/swift/linux"]
  },
  "cCompiler": { "extraCLIOptions": ["--sysroot", "$sysroot"] }
}
EOF
}

# `swift build` for aarch64 of the package copy at $1 (with its toolset, dk_cross_toolset), in the amd64
# chroot with the arm64 root as sysroot; the other arguments go to `swift build`. pkg-config (SwiftPM reads
# the .pc files itself) must find only the arm64 root's files, and prefix the paths they name with the
# sysroot: the amd64 chroot has the same libraries' x86_64 .pc files in its default paths.
dk_cross_build() {
    local copy=$1 sysroot=$DK_SYSROOT_IN_CHROOT
    shift
    local pc_dirs=$sysroot/usr/lib/aarch64-linux-gnu/pkgconfig:$sysroot/usr/lib/pkgconfig:$sysroot/usr/share/pkgconfig
    DK_ENV_PKG_CONFIG_PATH=$pc_dirs DK_ENV_PKG_CONFIG_LIBDIR=$pc_dirs DK_ENV_PKG_CONFIG_SYSROOT_DIR=$sysroot \
        dk_chroot_run "$DK_CHROOT_AMD64" --bind "$copy" "$DK_SRC_IN_CHROOT" --ro-bind "$DK_SYSROOT_ARM64" "$sysroot" -- \
        bash -c 'cd "$0" && "$@"' "$DK_SRC_IN_CHROOT" \
        swift build --triple aarch64-unknown-linux-gnu --sdk "$sysroot" \
        --toolset "$DK_SRC_IN_CHROOT/.build/aarch64-toolset.json" --pkg-config-path "$pc_dirs" \
        "${DK_SWIFT_62_FLAGS[@]}" "$@"  # (no lib_Testing_Foundation.so in Debian's 6.2.3, see above)
}
