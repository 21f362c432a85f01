#!/usr/bin/env bash
# Resolves Getting Started's manifest (Examples/Consumer/Package.swift, quoted verbatim by the article) against
# this checkout, offline: a throwaway clone tagged 0.1.0 stands in for https://example.invalid/DelegateKit.git
# through a SwiftPM mirror, so the URL, the version requirement and `.product(name:package:)` are checked as a
# user's `swift package resolve` would check them. Fails when the product or the package identity is wrong.
# Then builds the consumer's own sources against it with warnings as errors.
# Usage: Scripts/check-consumer-manifest.sh
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
url=$(sed -n 's/.*\.package(url: "\([^"]*\)".*/\1/p' Examples/Consumer/Package.swift)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The package as a user would fetch it: its committed HEAD, tagged with the version the manifest asks for.
git clone -q --no-hardlinks "$root" "$work/DelegateKit"
git -C "$work/DelegateKit" -c user.name=check -c user.email=check@delegatekit.invalid tag -a 0.1.0 -m 0.1.0

cp -R Examples/Consumer "$work/Consumer"
cd "$work/Consumer"
swift package config set-mirror --original "$url" --mirror "$work/DelegateKit"
swift package resolve
# Loading the whole graph checks that every product a target names exists in the package it names.
swift package show-dependencies --format json >/dev/null
swift package dump-package >/dev/null
# Its sources (the README's examples that only compile outside this package, such as a `@retroactive`
# conformance) build as a user's would, with no warning.
swift build -Xswiftc -warnings-as-errors
echo "consumer package: resolves $url and builds against its DelegateKit product"
