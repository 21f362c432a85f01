#!/usr/bin/env bash
# Compares DelegateKit's public API with the committed baseline, API/DelegateKit.api, and names each
# difference ("removed: ...", "added: ...", "changed: old -> new"); exits 1 when there is one, 0 when none.
# The library is built as a dependent that names no package trait builds it, in .build/api (offline; under
# a minute warm), and its API read from the symbol graph Scripts/public-surface.py reads.
# Usage: bash Scripts/check-api.sh              compare with the baseline
#        bash Scripts/check-api.sh --update     write the build's API as the new baseline (then add a
#                                               CHANGELOG.md entry: a removed or changed line breaks users)
#        bash Scripts/check-api.sh --self-test  check the comparison itself on altered copies of the
#                                               baseline (no build)
#        --reuse (with either of the first two) reads the symbol graph of the last run, without building
set -euo pipefail
cd "$(dirname "$0")/.."

mode=check reuse=()
for argument in "$@"; do
    case "$argument" in
        --update) mode=update ;;
        --self-test) mode=self-test ;;
        --reuse) reuse=(--reuse) ;;
        *) echo "usage: bash Scripts/check-api.sh [--update | --self-test] [--reuse]" >&2; exit 2 ;;
    esac
done
exec python3 Scripts/public-surface.py --scratch .build/api --api "$mode" "${reuse[@]}"
