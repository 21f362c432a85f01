#!/usr/bin/env python3
"""Checks the rules of the library's layout that the compiler does not: which files may run which step of
the slot-change protocol. Prints each breach with its file and line, and exits 1 if there is any.

Rules:
- The steps of a slot change (forgetting abandoned calls, publishing, retiring, settling) run only in
  `Delegates/Retirement/`: everything else changes a slot through `change(_:)` (SlotChange.swift).
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
LIBRARY = ROOT / "Sources" / "DelegateKit"
PROTOCOL = LIBRARY / "Delegates" / "Retirement"

# A call of a protocol step: the name followed by an opening parenthesis, not a declaration.
STEPS = re.compile(r"(?<![\w.])(?:\w+\.)?(cffi_forget_abandoned_calls|republish|settle|retire|applyChange)\s*\(")


def code_lines(path):
    """Each line with its comment removed (string literals in this code base hold no `//` before a step)."""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        yield number, line.split("//", 1)[0]


def breaches():
    for path in sorted(LIBRARY.rglob("*.swift")):
        if PROTOCOL in path.parents:
            continue
        for number, line in code_lines(path):
            if re.search(r"\bfunc\s+(republish|settle|applyChange)\b", line):
                yield f"{path.relative_to(ROOT)}:{number}: a protocol step declared outside Delegates/Retirement/"
                continue
            match = STEPS.search(line)
            # `implementation.retire()` and `stub.retire()` retire one object, a part of step 3 that its
            # owner exposes; the protocol's own `retire(_:slot:_:)` takes the slot.
            if match and not (match.group(1) == "retire" and "slot:" not in line):
                yield (f"{path.relative_to(ROOT)}:{number}: `{match.group(1)}` outside Delegates/Retirement/; "
                       "change a slot with `change(_:)`")


def main():
    found = list(breaches())
    for breach in found:
        print(f"error: {breach}", file=sys.stderr)
    if found:
        sys.exit(1)
    print("layout: the slot-change protocol runs only in Delegates/Retirement/")


if __name__ == "__main__":
    main()
