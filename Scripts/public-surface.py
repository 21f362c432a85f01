#!/usr/bin/env python3
"""Counts DelegateKit's public surface as a user's code sees it: the public and open symbols of the module
`DelegateKit` that are declared in Sources/DelegateKit/ (enum cases and conformances written here
included; members Swift synthesizes or a protocol's extension supplies, which have no location here,
left out; a protocol extension's member counted once, not once per conforming type), split into hand-written and generated (`*.generated.swift`), and the overloads of each name.

The graph is dumped at the internal level and filtered to public and open symbols: the generated
overloads are hidden from DocC (`@_documentation(visibility: internal)`), which drops them from a
public-level graph, but a user's code calls them all the same.

Reads the symbol graph of a debug build (`swift package dump-symbol-graph`, about two minutes), or the one
already in .build with --reuse.

Usage: python3 Scripts/public-surface.py [--reuse] [--names] [--most N]
  --names   every public symbol, one per line (`Type.name(labels:)  file`), to compare two trees with diff
"""
import argparse
import collections
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
LIBRARY = "/Sources/DelegateKit/"


def symbol_graph(reuse):
    bin_path = subprocess.run(["swift", "build", "--show-bin-path"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    folder = pathlib.Path(bin_path).parent / "symbolgraph"
    if not reuse:
        # The dump fails for the synthesized test-discovery modules, which have no graph to give; only
        # DelegateKit's matters, so an old one is removed first and its absence is the failure.
        for old in folder.glob("DelegateKit*.symbols.json"):
            old.unlink()
        subprocess.run(["swift", "package", "dump-symbol-graph", "--minimum-access-level", "internal"], cwd=ROOT,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    files = sorted(folder.glob("DelegateKit.symbols.json")) + sorted(folder.glob("DelegateKit@*.symbols.json"))
    if not files:
        sys.exit(f"error: no symbol graph of DelegateKit in {folder}: run without --reuse")
    for file in files:
        yield from json.loads(file.read_text())["symbols"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reuse", action="store_true")
    parser.add_argument("--names", action="store_true")
    parser.add_argument("--most", type=int, default=12)
    arguments = parser.parse_args()

    declared = []
    seen = set()
    for symbol in symbol_graph(arguments.reuse):
        location = symbol.get("location", {})
        uri = location.get("uri", "")
        if LIBRARY not in uri or symbol.get("accessLevel") not in ("public", "open"):
            continue
        # A protocol extension's member appears once more for each conforming type, at the same place:
        # it is one declaration to read.
        where = (uri, location.get("position", {}).get("line"), location.get("position", {}).get("character"))
        if where in seen:
            continue
        seen.add(where)
        file = uri.split(LIBRARY, 1)[1]
        # The declaration as written (generic parameters and types included), which tells overloads apart.
        declaration = "".join(fragment["spelling"] for fragment in symbol.get("declarationFragments", []))
        path = ".".join(symbol["pathComponents"][:-1] + [" ".join(declaration.split())])
        declared.append((path, file, symbol["kind"]["identifier"], symbol["pathComponents"][-1]))

    if arguments.names:
        for path, file, _, _ in sorted(declared):
            print(f"{path}  {file}")
        return
    generated = sum(1 for _, file, _, _ in declared if file.endswith(".generated.swift"))
    print(f"public declarations: {len(declared)} ({len(declared) - generated} hand-written, {generated} generated)")
    overloads = collections.Counter(name.split("(")[0] for _, _, kind, name in declared
                                    if kind in ("swift.method", "swift.init", "swift.type.method", "swift.func"))
    print("overloads by name: " + ", ".join(f"{name} {count}" for name, count in overloads.most_common(arguments.most)))


if __name__ == "__main__":
    main()
