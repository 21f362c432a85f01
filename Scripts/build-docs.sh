#!/usr/bin/env bash
# Builds DelegateKit's DocC documentation offline with the toolchain's own tools, and fails on any docc
# warning (a broken ``symbol`` link in the catalog or in a doc comment).
# Usage: Scripts/build-docs.sh   → .build/DelegateKit.doccarchive
set -euo pipefail
cd "$(dirname "$0")/.."

swift package dump-symbol-graph --minimum-access-level public >/dev/null
graphs="$(swift build --show-bin-path)/../symbolgraph"
# Only the library's own graphs: the package also holds examples, fixtures and tests.
selected="$(mktemp -d)"
cp "$graphs"/DelegateKit.symbols.json "$selected"/
cp "$graphs"/DelegateKit@*.symbols.json "$selected"/ 2>/dev/null || true

docc convert Sources/DelegateKit/DelegateKit.docc \
    --additional-symbol-graph-dir "$selected" \
    --output-path .build/DelegateKit.doccarchive \
    --fallback-display-name DelegateKit \
    --fallback-bundle-identifier org.delegatekit.DelegateKit \
    --warnings-as-errors
echo "documentation: .build/DelegateKit.doccarchive"
