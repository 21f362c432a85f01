#!/usr/bin/env python3
"""Counts and writes down DelegateKit's public surface as a user's code sees it: the public and open
symbols of the module `DelegateKit` that are declared in Sources/DelegateKit/ (enum cases and conformances
written here included; members Swift synthesizes or a protocol's extension supplies, which have no
location here, left out; a protocol extension's member counted once, not once per conforming type), split
into hand-written and generated (`*.generated.swift`), and the overloads of each name.

The graph is dumped at the internal level and filtered to public and open symbols: the generated
overloads are hidden from DocC (`@_documentation(visibility: internal)`), which drops them from a
public-level graph, but a user's code calls them all the same.

Reads the symbol graph of a debug build of the library with no package trait (in .build/surface, or the
build directory --scratch names; under a minute to a few the first time), or the one already there with
--reuse.

Prints the totals, the hand-written count without enum cases (the count issue 43 sets its target in),
and the overloads of the names with most.

Usage: python3 Scripts/public-surface.py [--reuse] [--scratch DIR] [--names | --api MODE] [--most N]
  --names   every public symbol, one per line (`Type.name(labels:)  file`), to compare two trees with diff
  --api print|check|update|self-test   the API as the baseline file API/DelegateKit.api holds it: one
            declaration or conformance a line; `check` names each difference from the baseline and exits 1
            when there is one, `update` rewrites the baseline, `self-test` checks the comparison on altered
            copies of the baseline, with no build (Scripts/check-api.sh runs these)
"""
import argparse
import collections
import difflib
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
LIBRARY = "/Sources/DelegateKit/"
# How the USR of each of the module's own declarations starts (the module's mangled name).
MODULE_USR = "s:11DelegateKit"
BASELINE = ROOT / "API" / "DelegateKit.api"
BASELINE_HEADER = """\
# The public API of the module DelegateKit, one declaration or conformance a line, sorted: what
# `bash Scripts/check-api.sh` compares a build with. Regenerate it with `bash Scripts/check-api.sh --update`,
# and say in CHANGELOG.md what changed (a removed or changed line is a breaking change).
# The library as a package that names no trait builds it (DelegateKit has no default trait; the `Macros`
# trait adds the DelegateKitMacros module's `#CClosure` and the underscored hooks its expansion calls,
# which are not in this file). Generated overloads (`*.generated.swift`) are in it: hidden from DocC, but
# called by users all the same.
# A line is `Type.member(labels:)  declaration`; `[requirement]` marks a protocol's requirement,
# `[extension where ...]` the constraints of the extension a member is declared in.
"""


def symbol_graphs(reuse, scratch):
    # The module's own compile emits the graph, in a build of its own: `swift package dump-symbol-graph`
    # builds with every package trait on (SwiftPM 6.3, whatever trait options it is given), which would
    # count the `Macros` trait's hooks as every user's surface.
    build_folder = ROOT / scratch
    folder = build_folder.with_name(build_folder.name + "-symbolgraph")
    if not reuse:
        for old in folder.glob("DelegateKit*.symbols.json"):
            old.unlink()
        folder.mkdir(parents=True, exist_ok=True)
        # The graph is written only when the module compiles: a build that finds it up to date would
        # leave none, so the compiled module goes first (the build's own bookkeeping stays).
        for module in build_folder.glob("*/Modules/DelegateKit.swiftmodule"):
            module.unlink()
        build = subprocess.run(["swift", "build", "--target", "DelegateKit", "--scratch-path", str(build_folder),
                        "-Xswiftc", "-emit-symbol-graph", "-Xswiftc", "-emit-symbol-graph-dir", "-Xswiftc", str(folder),
                        "-Xswiftc", "-symbol-graph-minimum-access-level", "-Xswiftc", "internal"],
                       cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if build.returncode != 0:
            sys.exit(f"error: the library's build failed:\n{build.stdout}")
    # DelegateKit.symbols.json holds the module's own types; DelegateKit@Swift.symbols.json what it adds to
    # the standard library's (conformances to CValue, members of those extensions).
    files = sorted(folder.glob("DelegateKit.symbols.json")) + sorted(folder.glob("DelegateKit@*.symbols.json"))
    if not files:
        sys.exit(f"error: no symbol graph of DelegateKit in {folder}: run without --reuse")
    return [json.loads(file.read_text()) for file in files]


def declared_here(symbol):
    """The file under Sources/DelegateKit/ of a public or open symbol declared there, else None."""
    uri = symbol.get("location", {}).get("uri", "")
    if LIBRARY not in uri or symbol.get("accessLevel") not in ("public", "open"):
        return None
    return uri.split(LIBRARY, 1)[1]


def declaration(symbol):
    return " ".join("".join(fragment["spelling"] for fragment in symbol.get("declarationFragments", [])).split())


def count(graphs, arguments):
    declared = []
    seen = set()
    for symbol in (symbol for graph in graphs for symbol in graph["symbols"]):
        file = declared_here(symbol)
        if file is None:
            continue
        # A protocol extension's member appears once more for each conforming type, at the same place:
        # it is one declaration to read.
        location = symbol["location"]
        where = (location["uri"], location.get("position", {}).get("line"), location.get("position", {}).get("character"))
        if where in seen:
            continue
        seen.add(where)
        # The declaration as written (generic parameters and types included), which tells overloads apart.
        path = ".".join(symbol["pathComponents"][:-1] + [declaration(symbol)])
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


# Every type has these, or has them with another conformance it states (Sendable brings SendableMetatype);
# the graph lists them for some types and not others, so they would be noise in the file.
IMPLIED = {"Swift.Copyable", "Swift.Escapable", "Swift.SendableMetatype"}


def requirements(constraints):
    relation = {"conformance": ":", "superclass": ":", "sameType": "=="}
    return ", ".join(f"{c['lhs']} {relation.get(c['kind'], c['kind'])} {c['rhs']}" for c in constraints
                     if not (c["kind"] == "conformance" and "Swift." + c["rhs"] in IMPLIED))


def availability(symbol):
    attributes = []
    for entry in symbol.get("availability", []):
        parts = [entry.get("domain", "*")]
        if entry.get("isUnconditionallyDeprecated"):
            parts.append("deprecated")
        if entry.get("isUnconditionallyUnavailable"):
            parts.append("unavailable")
        for key in ("introduced", "deprecated", "obsoleted"):
            if key in entry:
                version = entry[key]
                parts.append(f"{key}: " + ".".join(str(version.get(k, 0)) for k in ("major", "minor", "patch")))
        for key in ("message", "renamed"):
            if key in entry:
                parts.append(f'{key}: "{entry[key]}"')
        attributes.append(f"@available({', '.join(parts)}) ")
    return "".join(sorted(attributes))


def api_lines(graphs):
    """The public API, one line per declaration, conformance or superclass: `path  text`, where path (the
    symbol's `Type.member(labels:)`) is what a comparison pairs an old line with a new one by."""
    names = {}
    kept = {}
    for graph in graphs:
        for symbol in graph["symbols"]:
            names[symbol["identifier"]["precise"]] = ".".join(symbol["pathComponents"])
            # A protocol extension's member is listed again under each conforming type (`::SYNTHESIZED::`):
            # it is one declaration, written once under the protocol.
            if declared_here(symbol) is not None and "::SYNTHESIZED::" not in symbol["identifier"]["precise"]:
                kept[symbol["identifier"]["precise"]] = symbol

    relationships = [relation for graph in graphs for relation in graph["relationships"]]
    required = {relation["source"]: relation["kind"] for relation in relationships
                if relation["kind"] in ("requirementOf", "optionalRequirementOf")}
    lines = []
    for identifier, symbol in kept.items():
        # Enum cases take their enum's access level; writing it would not be Swift.
        access = "" if symbol["kind"]["identifier"] == "swift.enum.case" else symbol["accessLevel"] + " "
        # As Swift is written: attributes (`@discardableResult`, `@frozen`) before the access level.
        attributes, rest = re.match(r"((?:@\w+(?:\([^()]*\))? )*)(.*)", declaration(symbol)).groups()
        text = availability(symbol) + attributes + access + rest
        if identifier in required:
            text += "  [requirement]" if required[identifier] == "requirementOf" else "  [optional requirement]"
        context = requirements(symbol.get("swiftExtension", {}).get("constraints", []))
        if context:
            text += f"  [extension where {context}]"
        lines.append((names[identifier], text))

    # The standard library's types DelegateKit extends have no symbol in its graphs: their USRs demangle
    # to their names.
    foreign = sorted({relation["source"] for relation in relationships
                      if relation["source"] not in names and relation["source"].startswith("s:")})
    if foreign:
        demangled = subprocess.run(["swift", "demangle", "--simplified"] + ["$s" + usr[2:] + "D" for usr in foreign],
                                   stdout=subprocess.PIPE, text=True, check=True).stdout.splitlines()
        names.update((usr, line.split(" ---> ", 1)[1]) for usr, line in zip(foreign, demangled))
    for relation in relationships:
        if relation["kind"] not in ("conformsTo", "inheritsFrom"):
            continue
        source, target = relation["source"], relation["target"]
        # A conformance of a type of the library's, or of a standard type the library extends, to a protocol
        # a user can name: one of the library's public ones or one from elsewhere.
        if any(usr.startswith(MODULE_USR) and usr not in kept for usr in (source, target)):
            continue
        name = names.get(target) or relation.get("targetFallback") or target
        if name in IMPLIED:
            continue
        text = ("conforms to " if relation["kind"] == "conformsTo" else "inherits from ") + name
        context = requirements(relation.get("swiftConstraints", []))
        if context:
            text += f" where {context}"
        lines.append((names.get(source, source), text))
    return sorted(set(f"{path}  {text}" for path, text in lines))


# The header's last line names the compiler whose symbol graph the file was written from.
GENERATOR = "# Written from the symbol graph of "


def generator(graphs):
    return graphs[0]["metadata"]["generator"]


def read_api(path):
    return [line for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


def differences(old, new):
    """Each difference between two API listings: `removed: line`, `added: line` or `changed: old -> new`.
    A removed and an added line of the same path (an overload's parameter or result type), or else of the
    same base name (a renamed label), are one change; among several, the most alike pair first."""
    old_count, new_count = collections.Counter(old), collections.Counter(new)
    removed = sorted((old_count - new_count).elements())
    added = sorted((new_count - old_count).elements())
    changes = []
    for key in (lambda line: line.split("  ", 1)[0], lambda line: line.split("  ", 1)[0].split("(", 1)[0]):
        candidates = sorted(((difflib.SequenceMatcher(None, a, b).ratio(), a, b)
                             for a in removed for b in added if key(a) == key(b)), reverse=True)
        for _, a, b in candidates:
            if a in removed and b in added:
                removed.remove(a)
                added.remove(b)
                changes.append(f"changed: {a} -> {b}")
    return sorted(changes) + [f"removed: {line}" for line in removed] + [f"added: {line}" for line in added]


def self_test():
    """The comparison on altered copies of the baseline: each alteration must be reported, by name."""
    lines = read_api(BASELINE)
    failures = [] if not differences(lines, list(lines)) else ["the baseline compared with itself differs"]
    # One of the overloads that share a path: a change must be paired with the overload it changed.
    target = next((line for line in lines if line.startswith("CFunction.call(_:returning:)  ") and "-> R where" in line), None)
    if target is None:
        sys.exit("self-test: the baseline has no `CFunction.call(_:returning:) ... -> R where` line to alter: "
                 "choose another in self_test()")
    added = "CFunction.callTwice()  public func callTwice()"
    for label, replacement, expected in [
        ("a changed result type", [target.replace("-> R where", "-> R? where")], f"changed: {target} -> "),
        ("a renamed label", [target.replace("call(_:returning:)", "call(_:as:)").replace("returning:", "as:")],
         f"changed: {target} -> "),
        ("a removed declaration", [], f"removed: {target}"),
        ("an added declaration", [target, added], f"added: {added}"),
    ]:
        copy = [new for line in lines for new in (replacement if line == target else [line])]
        found = differences(lines, copy)
        if len(found) != 1 or not found[0].startswith(expected):
            failures.append(f"{label}: expected one difference starting {expected!r}, got {found}")
    for failure in failures:
        print(f"self-test failed: {failure}")
    if failures:
        sys.exit(1)
    print("self-test: a changed type, a renamed label, a removed and an added declaration are each reported")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reuse", action="store_true")
    parser.add_argument("--scratch", default=".build/surface")
    parser.add_argument("--names", action="store_true")
    parser.add_argument("--api", choices=["print", "check", "update", "self-test"])
    parser.add_argument("--most", type=int, default=12)
    arguments = parser.parse_args()

    if arguments.api == "self-test":
        return self_test()
    graphs = symbol_graphs(arguments.reuse, arguments.scratch)
    if arguments.api is None:
        return count(graphs, arguments)
    lines = api_lines(graphs)
    if arguments.api == "print":
        print("\n".join(lines))
    elif arguments.api == "update":
        BASELINE.parent.mkdir(exist_ok=True)
        BASELINE.write_text(BASELINE_HEADER + f"{GENERATOR}{generator(graphs)}\n" + "\n".join(lines) + "\n")
        print(f"{BASELINE.relative_to(ROOT)}: {len(lines)} lines")
    else:
        found = differences(read_api(BASELINE), lines)
        if found:
            print("\n".join(found))
            # Another compiler may spell the same declaration otherwise (spacing, sugar): say so rather than
            # let a toolchain change pass for an API change.
            written = next((line[len(GENERATOR):] for line in BASELINE.read_text().splitlines() if line.startswith(GENERATOR)), None)
            if written != generator(graphs):
                print(f"note: the baseline was written from {written}'s symbol graph, this build's is {generator(graphs)}'s")
            sys.exit(f"error: the public API differs from {BASELINE.relative_to(ROOT)} ({len(found)} listed above): "
                     "if that is meant, run `bash Scripts/check-api.sh --update` and say so in CHANGELOG.md")
        print(f"the public API is {BASELINE.relative_to(ROOT)} ({len(lines)} lines)")


if __name__ == "__main__":
    main()
