#!/usr/bin/env bash
# Builds DelegateKit's DocC documentation offline with the toolchain's own tools, and fails on any docc
# warning (a broken ``symbol`` link in the catalog or in a doc comment), then makes the static site a package
# index hosts from the archive (Scripts/check-docs-site.py opens it in a browser).
# Usage: Scripts/build-docs.sh   → .build/DelegateKit.doccarchive and .build/DelegateKit-site
set -euo pipefail
cd "$(dirname "$0")/.."

# Only the library's own symbol graphs, emitted by the compiler while it builds DelegateKit (in a build
# directory of its own, as the flags differ): `swift package dump-symbol-graph` would extract every module
# of the package, and since the package holds a macro it cannot load the test runner's modules.
selected="$(mktemp -d)"
trap 'rm -rf "$selected"' EXIT
swift build --target DelegateKit --scratch-path .build/docs \
    -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$selected" \
    -Xswiftc -symbol-graph-minimum-access-level -Xswiftc public
# (Swift writes every imported module's extension graphs too; DocC wants DelegateKit's own.)
find "$selected" -name '*.symbols.json' ! -name 'DelegateKit.symbols.json' ! -name 'DelegateKit@*.symbols.json' -delete

docc convert Sources/DelegateKit/DelegateKit.docc \
    --additional-symbol-graph-dir "$selected" \
    --output-path .build/DelegateKit.doccarchive \
    --fallback-display-name DelegateKit \
    --fallback-bundle-identifier org.delegatekit.DelegateKit \
    --warnings-as-errors

# The site under a base path, as a package index serves it (/owner/repo/version/documentation/…), so that the
# check reads the site as readers there do: a path that misses the base works at the root of a host only.
# (About a second; the archive stays as it is, for hosts that serve it at the root.)
rm -rf .build/DelegateKit-site
mkdir -p .build/DelegateKit-site
docc process-archive transform-for-static-hosting .build/DelegateKit.doccarchive \
    --output-path .build/DelegateKit-site \
    --hosting-base-path /DelegateKit
echo "documentation: .build/DelegateKit.doccarchive, site: .build/DelegateKit-site (served under /DelegateKit/)"
