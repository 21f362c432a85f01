#!/usr/bin/env python3
"""Counts DelegateKit's public surface as a user's code sees it: the public and open symbols of the module
`DelegateKit` that are declared in Sources/DelegateKit/ (enum cases and conformances written here
included; members Swift synthesizes or a protocol's extension supplies, which have no location here,
left out; a protocol extension's member counted once, not once per conforming type), split into hand-written and generated (`*.generated.swift`), and the overloads of each name.

The graph is dumped at the internal level and filtered to public and open symbols: the generated
overloads are hidden from DocC (`@_documentation(visibility: internal)`), which drops them from a
public-level graph, but a user's code calls them all the same.

Reads the symbol graph of a debug build of the library with no package trait (in .build/surface, about two
minutes the first time), or the one already there with --reuse.

Prints the totals, the hand-written count without enum cases (the count issue 43 sets its target in),
and the overloads of the names with most.

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
    # The module's own compile emits the graph, in a build of its own: `swift package dump-symbol-graph`
    # builds with every package trait on (SwiftPM 6.3, whatever trait options it is given), which would
    # count the `Macros` trait's hooks as every user's surface.
    folder = ROOT / ".build" / "surface-symbolgraph"
    if not reuse:
        for old in folder.glob("DelegateKit*.symbols.json"):
            old.unlink()
        folder.mkdir(parents=True, exist_ok=True)
        # The graph is written only when the module compiles: a build that finds it up to date would
        # leave none, so the compiled module goes first (the build's own bookkeeping stays).
        for module in (ROOT / ".build" / "surface").glob("*/Modules/DelegateKit.swiftmodule"):
            module.unlink()
        build = subprocess.run(["swift", "build", "--target", "DelegateKit", "--scratch-path", str(ROOT / ".build" / "surface"),
                        "-Xswiftc", "-emit-symbol-graph", "-Xswiftc", "-emit-symbol-graph-dir", "-Xswiftc", str(folder),
                        "-Xswiftc", "-symbol-graph-minimum-access-level", "-Xswiftc", "internal"],
                       cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if build.returncode != 0:
            sys.exit(f"error: the library's build failed:\n{build.stdout}")
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
    # Issue 43 counts hand-written declarations without enum cases: its "252 hand-written" is this
    # script's 319 minus 67 cases on the tree it was filed against (71fe105).
    cases = sum(1 for _, file, kind, _ in declared if kind == "swift.enum.case" and not file.endswith(".generated.swift"))
    print(f"hand-written without enum cases: {len(declared) - generated - cases} ({cases} cases)")
    overloads = collections.Counter(name.split("(")[0] for _, _, kind, name in declared
                                    if kind in ("swift.method", "swift.init", "swift.type.method", "swift.func"))
    print("overloads by name: " + ", ".join(f"{name} {count}" for name, count in overloads.most_common(arguments.most)))


if __name__ == "__main__":
    main()
