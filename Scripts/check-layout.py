#!/usr/bin/env python3
"""Checks the rules of the library's layout that the compiler does not: which files may import which C
module, and which may run which step of the slot-change protocol. Prints each breach with its file and
line, and exits 1 if there is any.

Rules:
- Each of the library's C modules is imported by the one file that owns it (`OWNERS`:
  `Shim/LibffiShim.swift`, `Shim/CallbackExitShim.swift`, `Shim/RetirementShim.swift`, the register path's
  `TrampolineShim.swift`) and by no other Swift file of the library, but for one that must: the retirement protocol's folder,
  whose entries call the C inline functions that record a call in their own frames. The compiler then keeps C types out of every other file's public and inlinable
  code, so the C boundary is those files.
- The steps of a slot change (forgetting abandoned calls, publishing, retiring, settling) run only in
  `Delegates/SlotTable/`: everything else changes a slot through `change(_:)` (SlotChange.swift).
- The folders are layers (`LAYERS`, bottom first), and no file names a top-level declaration of a layer
  above its own, so the layers have no cycles. (A textual check: a name counts wherever it appears outside
  comments and string literals, except as an argument label.)
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
LIBRARY = ROOT / "Sources" / "DelegateKit"
PROTOCOL = LIBRARY / "Delegates" / "SlotTable"
SHIM = LIBRARY / "Shim"

# Each C module of the package, and the files of the library that may import it (a folder ends in `/`).
OWNERS = {
    "CDelegateKitLibffi": {"Shim/LibffiShim.swift"},
    "CDelegateKitExits": {"Shim/CallbackExitShim.swift"},
    # The protocol's entries record calls with the C inline functions themselves, in their own frames.
    "CDelegateKitRetirement": {"Shim/RetirementShim.swift", "Delegates/SlotTable/"},
    "CDelegateKitTrampolines": {"Closures/RegisterPath/TrampolineShim.swift"},
}
# The library's layers, bottom first: the first folder of a file's path names its layer (the generated
# files too, which Scripts/generate-overloads.py writes into their layer's folder).
LAYERS = ["Shim", "Support", "Describing", "Closures", "CallingC", "Delegates"]
TOP_LEVEL = re.compile(
    r"^(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:(?:public|open|internal|private|fileprivate|package|final|indirect)\s+)*"
    r"(class|struct|enum|protocol|typealias|actor|func|let|var)\s+(\w+)", re.M)

# Any import of a C module of ours, whatever its access modifier or attribute.
C_IMPORT = re.compile(r"^\s*(?:@\w+\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+(CDelegateKit\w*)")

# A call of a protocol step: the name followed by an opening parenthesis, not a declaration.
STEPS = re.compile(r"(?<![\w.])(?:\w+\.)?(cffi_forget_abandoned_calls|republish|settle|retire|applyChange)\s*\(")


def code_lines(path):
    """Each line with its comment removed (string literals in this code base hold no `//` before a step)."""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        yield number, line.split("//", 1)[0]


def import_breaches():
    for path in sorted(LIBRARY.rglob("*.swift")):
        name = path.relative_to(LIBRARY).as_posix()
        for number, line in code_lines(path):
            match = C_IMPORT.match(line)
            if not match:
                continue
            owners = OWNERS.get(match.group(1))
            if owners is None:
                yield f"{path.relative_to(ROOT)}:{number}: `{match.group(1)}` is not a C module of the package"
            elif not any(name == owner or (owner.endswith("/") and name.startswith(owner)) for owner in owners):
                yield (f"{path.relative_to(ROOT)}:{number}: imports `{match.group(1)}`, which only "
                       f"{', '.join(sorted(owners))} may import; use what that file declares")


def layer_of(path):
    relative = path.relative_to(LIBRARY)
    return relative.parts[0] if len(relative.parts) > 1 else None


def layer_breaches():
    files = sorted(LIBRARY.rglob("*.swift"))
    declared = {}
    for path in files:
        layer = layer_of(path)
        if layer not in LAYERS:
            yield f"{path.relative_to(ROOT)}: in no layer of check-layout.py's LAYERS"
            continue
        for match in TOP_LEVEL.finditer(path.read_text()):
            # A function counts only where it is called (`name(`), not where a local of its name is used.
            name = match.group(2) + ("(" if match.group(1) == "func" else "")
            declared.setdefault(name, set()).add(layer)
    for path in files:
        layer = layer_of(path)
        if layer not in LAYERS:
            continue
        rank = LAYERS.index(layer)
        for number, line in code_lines(path):
            line = re.sub(r'"(?:\\.|[^"\\])*"', '""', line)
            names = set(re.findall(r"\b([A-Za-z_]\w*)\b(?!\s*:)", line))
            names |= {name + "(" for name in re.findall(r"\b([A-Za-z_]\w*)\s*[(<]", line)}
            for name in names:
                above = [other for other in declared.get(name, ()) if LAYERS.index(other) > rank]
                if above and layer not in declared[name]:
                    yield (f"{path.relative_to(ROOT)}:{number}: `{name.rstrip('(')}` belongs to {', '.join(sorted(above))}, "
                           f"a layer above {layer}")


def breaches():
    yield from import_breaches()
    yield from layer_breaches()
    for path in sorted(LIBRARY.rglob("*.swift")):
        # The protocol's folder runs its steps; the shim declares the C one.
        if PROTOCOL in path.parents or SHIM in path.parents:
            continue
        for number, line in code_lines(path):
            if re.search(r"\bfunc\s+(republish|settle|applyChange)\b", line):
                yield f"{path.relative_to(ROOT)}:{number}: a protocol step declared outside Delegates/SlotTable/"
                continue
            match = STEPS.search(line)
            # `implementation.retire()` and `stub.retire()` retire one object, a part of step 3 that its
            # owner exposes; the protocol's own `retire(_:slot:_:)` takes the slot.
            if match and not (match.group(1) == "retire" and "slot:" not in line):
                yield (f"{path.relative_to(ROOT)}:{number}: `{match.group(1)}` outside Delegates/SlotTable/; "
                       "change a slot with `change(_:)`")


def main():
    found = list(breaches())
    for breach in found:
        print(f"error: {breach}", file=sys.stderr)
    if found:
        sys.exit(1)
    print("layout: each C module is imported only by the files that own it; the slot-change protocol runs only "
          "in Delegates/SlotTable/; no layer names one above it (" + " < ".join(LAYERS) + ")")


if __name__ == "__main__":
    main()
