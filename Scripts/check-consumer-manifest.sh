#!/usr/bin/env bash
# Resolves and builds the consumer packages in Examples/ (Consumer: Getting Started's manifest, plus targets
# named as users name theirs; MacroConsumer: the README's one `.package` line with the `Macros` trait)
# against this checkout, offline: a throwaway clone tagged 0.1.0 stands in for
# https://example.invalid/DelegateKit.git through a SwiftPM mirror, so the URL, the version requirement, the
# trait and `.product(name:package:)` are checked as a user's `swift package resolve` would check them, and
# every target name of DelegateKit's meets the consumer's in one graph. Then builds the consumer's own
# sources against it with warnings as errors.
# Usage: Scripts/check-consumer-manifest.sh [Examples/NAME ...]   (default: every package in Examples/)
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
consumers=("$@")
[ "${#consumers[@]}" -gt 0 ] || consumers=(Examples/Consumer Examples/MacroConsumer)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The package as a user would fetch it: its committed HEAD, tagged with the version the manifests ask for.
git clone -q --no-hardlinks "$root" "$work/DelegateKit"
git -C "$work/DelegateKit" -c user.name=check -c user.email=check@delegatekit.invalid tag -a 0.1.0 -m 0.1.0

for consumer in "${consumers[@]}"; do
    name=$(basename "$consumer")
    url=$(sed -n 's/.*\.package(url: "\([^"]*\)".*/\1/p' "$consumer/Package.swift")
    cp -R "$consumer" "$work/$name"
    (
        cd "$work/$name"
        swift package config set-mirror --original "$url" --mirror "$work/DelegateKit"
        swift package resolve
        # Loading the whole graph checks that every product a target names exists in the package it names,
        # and that no two targets in the graph share a name.
        swift package show-dependencies --format json >/dev/null
        swift package dump-package >/dev/null
        # Its sources (the README's examples that only compile outside this package, such as a
        # `@retroactive` conformance or a macro's expansion) build as a user's would, with no warning.
        swift build -Xswiftc -warnings-as-errors
        # A package that does not ask for the macro must not get swift-syntax at all.
        if ! grep -q 'traits:' Package.swift && [ -e .build/checkouts/swift-syntax ]; then
            echo "error: $consumer resolved swift-syntax without the Macros trait" >&2
            exit 1
        fi
    )
    echo "consumer package $consumer: resolves $url and builds against it"
done
