#!/usr/bin/env python3
"""Checks that every file path and every code name the hand-written docs (ARCHITECTURE.md, CONTRIBUTING.md,
README.md) give still exists, as the DocC build does for the catalog's symbol links: prose that names a
file, a function or a variable nobody has any more fails CI instead of misleading the next reader. Prints
each missing name with its doc and line and exits 1 if there is any; one summary line otherwise.

What is checked, in each doc's text outside fenced code blocks (a ```swift block is compiled code, checked
by DocumentationExamplesTests; any other fenced block, such as the layer diagram, is read for paths only):
- Paths: a backticked token or a link target that contains `/` or ends in a file extension. It must be a
  tracked file or folder (`git ls-files`), relative to the repository root, the doc's folder or, for
  ARCHITECTURE.md, `Sources/DelegateKit/` (its paths are relative to that); a partial path
  (`RegisterPath/RegisterBody.swift`, a bare `SlotStub.swift`, `+Streams`) must end the path of at least
  one tracked file. `<Target/Header.h>` is looked up in the C targets' `include/` folders; a `#fragment`
  of a link to a Markdown file must be one of its headings. Absolute paths (the running system's),
  `.build/` (a build's output) and placeholders (`<target>`) are not the tree's and are skipped.
- Code names: a backticked identifier, dotted name or call form (`SlotTable.change(_:)`, `cffi_enter_fast`,
  `DynamicDelegate(protocol:)`, `.stable`, `#CClosure`) must be declared in the tree's code (Sources/,
  CFFIShim/, Tests/, Examples/, Benchmarks/, Scripts/, Fuzz/, .ci/, Package.swift): a Swift declaration
  (a type, member, case, parameter or generic parameter), an identifier of the C or assembly outside
  comments and strings, a name of a Python or shell script's code, a target of a manifest. In a dotted
  name each part after a Swift type of the tree must be a member of that type (its extensions and the
  types it inherits from included); argument labels, when given, must be those of one declaration, less
  parameters with a default value (all that follow `…`). Where a doc says which file holds a name
  (`File.swift` (`name`), `name` (`File.swift`), `name` in `File.c`), the file must declare it.
  A name the tree does not declare passes only when it comes from outside: the system's C headers
  (/usr/include and the toolchain's clang headers), the Swift toolchain's module interfaces, a register or
  instruction (`REGISTER`), or `OUTSIDE` below, a short list that says why each is in none of those.
- Environment variables (`DELEGATEKIT_*`) and command-line flags must appear in the tree's code, and a
  hyphenated word (`delegatekit-misuse`, `sqlite-config`) must be a target or a string of the code.
- Commands (`swift test --traits Macros`, `bash Scripts/build-docs.sh`): the scripts they run must exist,
  and `swift run NAME` must name an executable target of the manifest; the rest is not checked.
Anything else in backticks (a C declaration, a phrase, a literal) is not a name and is not checked.

    python3 Scripts/check-doc-names.py              # the docs of this tree (CI)
    python3 Scripts/check-doc-names.py --list       # also lists each token checked, as what
    python3 Scripts/check-doc-names.py --self-test  # appends known breaks to a copy and checks each is found
"""
import ast
import fnmatch
import glob
import io
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time
import tokenize

ROOT = pathlib.Path(__file__).resolve().parent.parent
SELF = pathlib.Path(__file__).resolve().relative_to(ROOT).as_posix()
DOCS = ["ARCHITECTURE.md", "CONTRIBUTING.md", "README.md"]
# Besides the root and its own folder: where a doc's paths may be relative to.
DOC_BASES = {"ARCHITECTURE.md": ["Sources/DelegateKit/"]}
# The tree's code, where a name must be declared.
CODE = ("Sources/", "CFFIShim/", "Tests/", "Examples/", "Benchmarks/", "Scripts/", "Fuzz/", ".ci/", "Package.swift")
FILE_EXTENSIONS = ("swift", "c", "h", "S", "py", "sh", "md", "json", "modulemap", "docc", "doccarchive", "supp",
                   "txt", "dict")
# Words a backticked command may start with: its script paths are checked, the rest is the tool's.
COMMANDS = {"swift", "bash", "sh", "python3", "apt-get", "sudo", "git", "valgrind", "docc", "gdb", "qemu-aarch64",
            "qemu-x86_64"}

# Names the docs use that are neither declared in the tree nor found in the system's headers or the Swift
# toolchain's interfaces, each with why. Keep it short: a name belongs here only when it comes from outside.
OUTSIDE = {
    "__va_list_tag": "Clang's built-in type of x86_64's va_list (no header declares it)",
    "__va_list": "Clang's built-in type of AAPCS64's va_list (no header declares it)",
    "__int128": "a C type of GCC and Clang, built in",
    "swiftcc": "LLVM's name of Swift's calling convention",
    **dict.fromkeys(["ffi_closure_unix64_inner", "ffi_closure_SYSV_inner", "ffi_closure_unix64_sse"],
                    "libffi's internal code, read in its source; no installed header declares it"),
    "PR_SET_MDWE": "Linux 6.3's prctl, newer than Debian 12's <linux/prctl.h>: Scripts/under-mdwe.py passes 65",
    "MemoryDenyWriteExecute": "a setting of systemd's units (systemd.exec(5))",
    "execmem": "an SELinux permission",
    **dict.fromkeys(["Darwin", "thread_get_state", "mach_vm_read"], "macOS's, named for a port that does not exist"),
    "example.invalid": "a host name reserved never to resolve (RFC 2606), the README's placeholder",
}
# Registers and instructions of x86_64 and aarch64, which the docs name where a calling convention puts a
# value: the CPU's, not the tree's (TrampolineTable.S spells only those it uses).
REGISTER = re.compile(r"(?:r[a-d]x|r[sd]i|r[sb]p|r\d+|[a-d]l|xmm\d+|st\d|[xwdvq]\d+|endbr64|bti|blr|br|ldar)")

# Swift's own words (keywords, attributes), which no declaration and no interface spells as a name.
SWIFT_WORDS = {"nonisolated", "defer", "inout", "throws", "rethrows", "async", "await", "some", "any", "Self",
               "self", "super", "init", "deinit", "subscript", "typealias", "associatedtype", "open", "public",
               "package", "internal", "fileprivate", "private", "static", "final", "weak", "unowned", "let",
               "var", "func", "return", "guard", "if", "else", "switch", "case", "default", "where", "in",
               "true", "false", "nil", "import", "extension", "protocol", "struct", "class", "enum", "actor",
               "macro", "consume", "borrowing", "consuming", "sending"}

IDENT = r"[A-Za-z_][A-Za-z_0-9]*"


def tracked_files():
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return sorted(name for name in out.decode().split("\0") if name)


# ---- Reading the tree's code ------------------------------------------------------------------------

SWIFT_LEXEMES = re.compile(r'//[^\n]*|/\*|#*"""|#*"')


def strip_swift(text):
    """The code with comments blanked and string literals emptied (newlines kept), and the literals' text."""
    out, strings, i = [], [], 0
    while True:
        match = SWIFT_LEXEMES.search(text, i)
        if not match:
            out.append(text[i:])
            break
        out.append(text[i:match.start()])
        token, start = match.group(), match.end()
        if token.startswith("//"):
            i = match.end()
        elif token == "/*":
            depth, j = 1, start
            while depth and j < len(text):
                nxt = min((p for p in (text.find("/*", j), text.find("*/", j)) if p >= 0), default=len(text))
                if nxt == len(text):
                    j = nxt
                    break
                depth += 1 if text.startswith("/*", nxt) else -1
                j = nxt + 2
            out.append("\n" * text.count("\n", match.start(), j))
            i = j
        else:
            hashes = token.count("#")
            close = token.lstrip("#") + "#" * hashes
            if close == '"':  # a one-line literal: escapes, and no newline
                end = re.compile(r'(?:\\.|[^"\\\n])*"').match(text, start)
                j = end.end() if end else start
                body = text[start:j - 1]
            else:
                j = text.find(close, start)
                j = len(text) if j < 0 else j + len(close)
                body = text[start:j - len(close)]
            strings.append(body)
            out.append('""' + "\n" * body.count("\n"))
            i = j
    return "".join(out), strings


def strip_c(text):
    """C or preprocessed assembly with comments blanked (newlines kept); string literals stay."""
    return re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: "\n" * m.group().count("\n"), text, flags=re.S)


def strip_c_strings(code):
    return re.sub(r'"(?:\\.|[^"\\\n])*"', '""', code)


def strip_shell_comments(text):
    """A shell script without its `#` comments (a crude cut: `#` after a blank or at the start of a line)."""
    return re.sub(r"(^|\s)#(?![!{]).*", r"\1", text, flags=re.M)


def read_python(text):
    """A Python script's names (not those in its comments and strings) and its string literals' values."""
    names, strings = set(), []
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type == tokenize.NAME:
            names.add(token.string)
        elif token.type == tokenize.STRING:
            try:
                strings.append(str(ast.literal_eval(token.string)))
            except (ValueError, SyntaxError):  # an f-string: its text, braces and all
                strings.append(token.string)
    return names, strings


class SwiftDeclarations:
    """What the tree's Swift declares: every name, each type's members, what each type inherits from, and
    the argument labels of each function and initializer."""

    TOKENS = re.compile(r"->|`|" + IDENT + r"|\S")
    TYPE_KEYWORDS = {"class", "struct", "enum", "protocol", "actor", "extension"}
    MEMBER_KEYWORDS = {"func", "var", "let", "case", "typealias", "associatedtype", "macro", "init", "subscript"}

    def __init__(self):
        self.names, self.types = set(), set()
        self.members, self.inherits, self.labels = {}, {}, {}
        self.in_file, self.file = {}, None  # each file's declared names

    def declare(self, owner, name):
        self.names.add(name)
        self.in_file.setdefault(self.file, set()).add(name)
        if owner:
            self.members.setdefault(owner, set()).add(name)

    def add(self, file, code):
        self.file = file
        tokens = [t for t in self.TOKENS.findall(code) if t != "`"]
        scopes, pending = [], None  # each `{` pushes the type it opens, or None
        i = 0
        while i < len(tokens):
            token = tokens[i]
            owner = scopes[-1] if scopes else None
            following = tokens[i + 1] if i + 1 < len(tokens) else ""
            if token == "{":
                scopes.append(pending)
                pending = None
            elif token == "}":
                if scopes:
                    scopes.pop()
            elif token in self.TYPE_KEYWORDS and re.fullmatch(IDENT, following) and following not in {
                    "func", "var", "let", "subscript", "init"}:
                j = i + 1
                while j + 2 < len(tokens) and tokens[j + 1] == "." and re.fullmatch(IDENT, tokens[j + 2]):
                    j += 2  # extension A.B: members of B
                name = tokens[j]
                pending = name
                if token != "extension":
                    self.types.add(name)
                    self.declare(owner, name)
                j = self.generics(tokens, j + 1)
                if j < len(tokens) and tokens[j] == ":":
                    while j < len(tokens) and tokens[j] not in ("{", "where"):
                        if re.fullmatch(IDENT, tokens[j]):
                            self.inherits.setdefault(name, set()).add(tokens[j])
                        j += 1
                i = j
                continue
            elif token in self.MEMBER_KEYWORDS:
                i = self.member(tokens, i, owner)
                continue
            i += 1

    def generics(self, tokens, j):
        """Skips a generic parameter clause at `j`, declaring its parameters; returns the index after it."""
        if j >= len(tokens) or tokens[j] != "<":
            return j
        depth = 0
        while j < len(tokens):
            if tokens[j] == "<":
                depth += 1
            elif tokens[j] == ">":
                depth -= 1
                if depth == 0:
                    return j + 1
            elif depth == 1 and re.fullmatch(IDENT, tokens[j]) and tokens[j - 1] in ("<", ","):
                self.names.add(tokens[j])
            j += 1
        return j

    def member(self, tokens, i, owner):
        keyword = tokens[i]
        j = i + 1
        if keyword in ("init", "subscript"):
            name = keyword
            while j < len(tokens) and tokens[j] in ("?", "!"):
                j += 1
        elif j < len(tokens) and re.fullmatch(IDENT, tokens[j]):
            name = tokens[j]
            j += 1
        else:
            return i + 1
        if keyword == "case" and owner is not None:  # case a, b(Int), c
            self.declare(owner, name)
            while j < len(tokens) and tokens[j] not in ("}", "case", "{"):
                if tokens[j] == "(":
                    j = self.skip_group(tokens, j)
                    continue
                if tokens[j] == "," and j + 1 < len(tokens) and re.fullmatch(IDENT, tokens[j + 1]):
                    self.declare(owner, tokens[j + 1])
                    j += 2
                    continue
                if tokens[j] in ("=", ":") or (re.fullmatch(IDENT, tokens[j]) and tokens[j - 1] not in (",", "case")):
                    break
                j += 1
            return j
        if keyword == "case":
            return j
        self.declare(owner, name)
        if keyword in ("func", "init", "macro"):
            j = self.generics(tokens, j)
            if j < len(tokens) and tokens[j] == "(":
                self.labels.setdefault((owner, name), []).append(self.parameter_labels(tokens, j))
                self.labels.setdefault((None, name), []).append(self.parameter_labels(tokens, j))
        return j

    @staticmethod
    def skip_group(tokens, j):
        depth = 0
        while j < len(tokens):
            if tokens[j] in ("(", "[", "{", "<"):
                depth += 1
            elif tokens[j] in (")", "]", "}", ">"):
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        return j

    def parameter_labels(self, tokens, j):
        """The external labels of the parameter list that opens at `j` (`_` for none)."""
        labels, parameter, depth = [], [], 0
        j += 1
        while j < len(tokens):
            token = tokens[j]
            if token in ("(", "[", "{", "<"):
                depth += 1
            elif token in (")", "]", "}", ">"):
                if depth == 0:
                    break
                depth -= 1
            if depth == 0 and token == ",":
                labels.append(parameter)
                parameter = []
            else:
                parameter.append(token)
            j += 1
        if parameter:
            labels.append(parameter)
        result = []
        for parameter in labels:
            names = []
            for token in parameter:
                if token == ":":
                    break
                if re.fullmatch(IDENT, token):
                    names.append(token)
            if names:
                result.append((names[0], "=" in parameter))  # the label, and whether it has a default value
                for name in names:
                    self.names.add(name)  # a parameter's names: what a doc may say `body` or `filling:` of
        return tuple(result)

    def members_of(self, type_name, seen=None):
        seen = seen if seen is not None else set()
        if type_name in seen:
            return set()
        seen.add(type_name)
        found = set(self.members.get(type_name, ()))
        for parent in self.inherits.get(type_name, ()):
            found |= self.members_of(parent, seen)
        return found


class Tree:
    """The names the tree's code declares or uses, and its files."""

    def __init__(self, files):
        self.files = files
        self.file_set = set(files)
        self.folders = {str(pathlib.PurePosixPath(f).parent) + "/" for f in files}
        for folder in list(self.folders):
            parts = folder.rstrip("/").split("/")
            self.folders |= {"/".join(parts[:n]) + "/" for n in range(1, len(parts))}
        self.swift = SwiftDeclarations()
        self.c_names, self.script_names, self.strings = set(), set(), set()
        self.c_in_file = {}  # each C, header or assembly file's identifiers
        self.code_text = []  # every code file without comments: environment variables and flags
        self.targets, self.executables = set(), set()
        for name in files:
            if not name.startswith(CODE) or (name.endswith(".generated.swift") and "SpellingMatrix" in name):
                continue  # the spelling matrix is 800 KiB of tests of spellings, and declares nothing
            path = ROOT / name
            suffix = path.suffix
            try:
                text = path.read_text()
            except (UnicodeDecodeError, IsADirectoryError):
                continue
            if name == SELF:  # this script counts without its self-test, which spells names that must not exist
                text = re.sub(r"\ndef self_test\(.*?(?=\ndef )", "\n", text, flags=re.S)
            if suffix == ".swift":
                code, strings = strip_swift(text)
                self.swift.add(name, code)
                self.strings |= {s for s in strings if re.fullmatch(r"[\w.+-]+", s)}
                for silgen in re.findall(r'@_silgen_name\("(\w+)"\)', text):
                    self.swift.names.add(silgen)
                self.code_text.append(code + "\n" + "\n".join(strings))
                if path.name == "Package.swift":  # the manifests' targets, products and traits
                    self.targets |= {s for s in strings if re.fullmatch(r"[\w-]+", s)}
                if name == "Package.swift":
                    self.executables |= set(re.findall(r'\.executableTarget\(\s*name:\s*"([\w-]+)"', text))
            elif suffix in (".c", ".h", ".S", ".modulemap"):
                code = strip_c(text)
                self.c_in_file[name] = set(re.findall(IDENT, strip_c_strings(code)))
                self.c_names |= self.c_in_file[name]
                self.code_text.append(code)
            elif suffix == ".py":
                names, strings = read_python(text)
                self.script_names |= names
                self.strings |= {s for s in strings if re.fullmatch(r"[\w.+-]+", s)}
                self.code_text.append("\n".join(strings))
            elif suffix == ".sh" or name.startswith(".ci/"):
                code = strip_shell_comments(text)
                self.script_names |= set(re.findall(IDENT, code))
                self.strings |= set(re.findall(r"""["']([\w.+-]+)["']""", code))
                self.code_text.append(code)
        self.code_text = "\n".join(self.code_text)
        self.variables = set(re.findall(r"\bDELEGATEKIT_\w+", self.code_text))

    def declares_in(self, file, name):
        return name in self.swift.in_file.get(file, ()) or name in self.c_in_file.get(file, ())

    def declares(self, name):
        return (name in self.swift.names or name in self.c_names or name in self.script_names
                or name in self.targets)


class Outside:
    """Names from outside the tree: the Swift toolchain's module interfaces and the system's C headers."""

    def __init__(self):
        self.swift = set()
        swift = shutil.which("swift")
        if not swift:
            sys.exit("error: no `swift` on PATH: its toolchain's interfaces hold the standard library's names")
        toolchain = pathlib.Path(os.path.realpath(swift)).parent.parent
        for interface in sorted(glob.glob(str(toolchain / "lib/swift/linux/*.swiftmodule/*.swiftinterface"))):
            if ".private." not in interface:
                self.swift |= set(re.findall(IDENT, pathlib.Path(interface).read_text(errors="replace")))
        self.headers = ["/usr/include"] + sorted(glob.glob(str(toolchain / "lib/clang/*/include")))
        self.in_headers = set()

    def look_up_in_headers(self, names):
        """Which of `names` any system header spells, as a word: one grep for all of them."""
        names = sorted(set(names) - self.in_headers)
        if not names:
            return
        found = subprocess.run(["grep", "-rhowF", "--include=*.h", "-f", "-", *self.headers], input="\n".join(names),
                               capture_output=True, text=True).stdout
        self.in_headers |= set(found.split())


# ---- Reading the docs -------------------------------------------------------------------------------

FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*([\w+-]*)")
CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)((?:(?!\n\s*\n).)+?)(?<!`)\1(?!`)", re.S)
LINK = re.compile(r"\]\(([^)\s]+)\)")
# Where a doc says which file holds a name: "`File.swift` (`name`, …)", "`name` (`File.swift`)" (not a list of
# files), "`name` in `File.c`".
SOURCE = r"`(?P<file>[^`\s]+\.(?:swift|c|h|S))`"
FILE_THEN_NAMES = re.compile(SOURCE + r"\s+\((?P<inner>`[^()`]+`[^()]*)\)")
NAME_THEN_FILE = re.compile(r"`(?P<name>[^`\s]+)`\s+(?:\(|in\s+)" + SOURCE + r"(?!,\s*`)")


def read_doc(text):
    """The doc's prose (fenced blocks blanked), and the text of its fenced blocks that are not Swift."""
    prose, other, fence = [], [], None
    for line in text.split("\n"):
        match = FENCE.match(line)
        if fence is None and match:
            fence = (match.group(1), match.group(2))
            prose.append("")
            other.append("")
        elif fence is not None:
            if match and match.group(1).startswith(fence[0]) and not match.group(2):
                fence = None
                other.append("")
            else:
                other.append(line if fence[1] not in ("swift",) else "")
            prose.append("")
        else:
            prose.append(line)
            other.append("")
    return "\n".join(prose), "\n".join(other)


def slug(heading):
    """GitHub's anchor of a heading."""
    heading = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", heading))


class Checker:
    def __init__(self, tree, outside, docs):
        self.tree, self.outside, self.docs = tree, outside, docs
        self.missing, self.counts = [], {"path": 0, "name": 0, "variable": 0, "command": 0, "anchor": 0,
                                         "placement": 0}
        self.unresolved = []  # (doc, line, token, name): names to look up in the headers, last
        self.listing = []  # what was checked, as what (--list)

    def fail(self, doc, line, token, why):
        self.missing.append(f"{doc}:{line}: `{token}`: {why}")

    def note(self, doc, line, kind, token):
        self.listing.append(f"{doc}:{line}: {kind}: {token}")

    # Paths

    def path_exists(self, doc, path):
        path = path.rstrip("/") + ("/" if path.endswith("/") else "")
        bases = ["", str(pathlib.PurePosixPath(doc).parent) + "/"] + DOC_BASES.get(doc, [])
        for base in bases:
            candidate = os.path.normpath(base + path) + ("/" if path.endswith("/") else "")
            candidate = candidate[2:] if candidate.startswith("./") else candidate
            if any(ch in candidate for ch in "*?["):
                if fnmatch.filter(self.tree.files, candidate) or fnmatch.filter(self.tree.folders, candidate):
                    return True
            elif candidate in self.tree.file_set or candidate.rstrip("/") + "/" in self.tree.folders:
                return True
        # A partial path: the end of one tracked path (a bare file name, a folder inside a layer).
        pattern = "*/" + path.lstrip("./")
        return bool(fnmatch.filter(self.tree.files, pattern) or fnmatch.filter(self.tree.folders, pattern))

    def check_path(self, doc, line, token, path):
        self.counts["path"] += 1
        self.note(doc, line, "path", path)
        anchor = None
        if "#" in path:
            path, anchor = path.split("#", 1)
        include = re.fullmatch(r"<([\w/.+-]+)>", path)
        if include:
            if not fnmatch.filter(self.tree.files, "CFFIShim/*/include/" + include.group(1)):
                self.fail(doc, line, token, "no header of a C target has that include path")
            return
        if path.startswith(("/", "~", ".build/", "http:", "https:")) or "<" in path:
            return  # the running system's, a build's output, a web page or a placeholder: not the tree's
        if path and not self.path_exists(doc, path):
            self.fail(doc, line, token, "no such file or folder in the tree")
            return
        if anchor:
            self.counts["anchor"] += 1
            target = self.resolve_file(doc, path) if path else doc
            if target and target.endswith(".md"):
                headings = {slug(h) for h in re.findall(r"^#+\s+(.*)$", read_doc((ROOT / target).read_text())[0], re.M)}
                if anchor not in headings:
                    self.fail(doc, line, token, f"{target} has no heading #{anchor}")

    def files_named(self, doc, path):
        """The tracked files a doc's path may mean: itself from one of the doc's bases, else those it ends."""
        exact = self.resolve_file(doc, path)
        return [exact] if exact else fnmatch.filter(self.tree.files, "*/" + path)

    def check_placement(self, doc, line, name, path):
        """`name (file)`, `file (name)`, `name in file`: the name is declared in that file."""
        files = self.files_named(doc, path)
        last = re.sub(r"\(.*", "", name).split(".")[-1]
        if not files or not re.fullmatch(IDENT, last) or looks_like_path(name):
            return
        self.counts["placement"] += 1
        self.note(doc, line, "placement", f"{name} in {path}")
        if not any(self.tree.declares_in(file, last) for file in files):
            self.fail(doc, line, name, f"`{last}` is not declared in {', '.join(files)}")

    def resolve_file(self, doc, path):
        for base in ["", str(pathlib.PurePosixPath(doc).parent) + "/"] + DOC_BASES.get(doc, []):
            candidate = os.path.normpath(base + path)
            if candidate in self.tree.file_set:
                return candidate
        return None

    # Names

    def known(self, name):
        return (self.tree.declares(name) or name in self.outside.swift or name in OUTSIDE
                or REGISTER.fullmatch(name) is not None)

    def check_name(self, doc, line, token, name):
        """A dotted name, maybe with a call's labels: `A.b.c(x:_:)`."""
        self.counts["name"] += 1
        self.note(doc, line, "name", name)
        labels = None
        call = re.fullmatch(r"([\w.]+)\((.*)\)", name)
        if call:
            name, inside = call.groups()
            label_form = re.fullmatch(r"((?:\w+(?: \w+)?:)*)(…)?", inside)
            if label_form:
                wanted = tuple(part.split(" ")[0] for part in label_form.group(1).split(":")[:-1])
                labels = (wanted, bool(label_form.group(2)))
            else:  # a call with arguments: `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`
                for argument in re.findall(IDENT, inside):
                    self.check_simple(doc, line, token, argument)
        parts = [part for part in name.split(".") if part]
        if not parts or name in OUTSIDE:
            return
        swift = self.tree.swift
        owner = None
        for part in parts:
            if owner is not None:
                if part not in swift.members_of(owner):
                    self.fail(doc, line, token, f"`{part}` is not a member of {owner} (nor of an extension of it)")
                    return
            else:
                self.check_simple(doc, line, token, part)
            owner = part if part in swift.types else None
        if labels is not None:
            self.check_labels(doc, line, token, parts, labels)

    def check_simple(self, doc, line, token, part):
        """One name: in the tree or the toolchain now, in the system's headers once all are collected."""
        if not (self.known(part) or part in SWIFT_WORDS):
            self.unresolved.append((doc, line, token, part))

    def check_labels(self, doc, line, token, parts, labels):
        wanted, open_ended = labels
        swift = self.tree.swift
        name, owner = parts[-1], parts[-2] if len(parts) > 1 else None
        if name in swift.types and (owner is None or owner in swift.types):  # `Type(labels)`: an initializer
            owners, name = [name], "init"
        elif owner in swift.types:
            owners = [owner] + sorted(swift.inherits.get(owner, ()))
        else:
            owners = [None]
        candidates = [found for o in owners for found in swift.labels.get((o, name), [])]
        if not candidates:
            return  # a variable, a C function or a name from outside: its name was checked, it has no labels
        if any(matches(wanted, found, open_ended) for found in candidates):
            return
        shown = "; ".join("(" + "".join(f"{label}:" for label, _ in found) + ")" for found in sorted(set(candidates)))
        self.fail(doc, line, token, f"no declaration with those labels (declared: {shown})")

    # Tokens

    def check_token(self, doc, line, token):
        token = token.strip()
        for variable in re.findall(r"\bDELEGATEKIT_\w+", token):
            self.counts["variable"] += 1
            if variable not in self.tree.variables:
                self.fail(doc, line, token, f"{variable} appears in none of the tree's code")
        if re.fullmatch(r"DELEGATEKIT_\w+(=\S*)?", token):
            return
        words = token.split()
        if not words:
            return
        if words[0] in COMMANDS or re.fullmatch(r"\w+=\S*", words[0]) and len(words) > 1 or (
                len(words) > 1 and re.search(r"\.(sh|py)$", words[0])):
            self.check_command(doc, line, token, words)
            return
        if words[0] == "import" and len(words) == 2:  # `import DelegateKit`: a module of the manifests
            self.counts["name"] += 1
            self.note(doc, line, "module", token)
            if words[1] not in self.tree.targets:
                self.fail(doc, line, token, "no target of a manifest is named so")
            return
        if len(words) > 1 and not re.fullmatch(r"[\w.]+\((?:\w+(?: \w+)?:)*…?\)", token):
            self.note(doc, line, "phrase", token)
            for name in re.findall(r"\b(?:cffi|CFFI)_\w+", token):  # a phrase: only the package's C names in it
                self.check_name(doc, line, token, name)
            return
        if token.startswith("--"):
            self.counts["name"] += 1
            self.note(doc, line, "flag", token)
            flag = re.match(r"--[\w-]+", token)
            if flag and not re.search(re.escape(flag.group()) + r"(?![\w-])", self.tree.code_text):
                self.fail(doc, line, token, "no code of the tree passes or parses that flag")
            return
        if re.fullmatch(r"\+\w+", token):  # `+Streams`: a file DynamicDelegate+Streams.swift
            self.counts["path"] += 1
            if not any(token + "." in f for f in self.tree.files):
                self.fail(doc, line, token, "no file of the tree is named so")
            return
        if looks_like_path(token) or token in self.tree.file_set:
            self.check_path(doc, line, token, token)
            return
        if re.fullmatch(r"\w+(?:-\w+)+", token):  # `delegatekit-misuse`, `sqlite-config`: a target, a code's word
            self.counts["name"] += 1
            self.note(doc, line, "name", token)
            if token not in self.tree.targets and token not in self.tree.strings:
                self.fail(doc, line, token, "no target of a manifest and no string of the tree's code")
            return
        prefix = re.fullmatch(r"(\w+_)\*", token)
        if prefix:  # `ffi_type_complex_*`: names that begin so
            self.check_prefix(doc, line, token, prefix.group(1))
            return
        subscript = re.fullmatch(r"([\w.]+)\[\w*\]", token)
        if subscript:  # `running[0]`
            token = subscript.group(1)
        setting = re.fullmatch(r"(\w+)=\S*", token)
        if setting:
            self.check_name(doc, line, token, setting.group(1))
            return
        name = re.fullmatch(r"[#@\\]?\.?([\w.]+(?:\((?:[^()]|\([^()]*\))*\))?):?", token)
        if name and re.match(r"[A-Za-z_]", name.group(1)):
            self.check_name(doc, line, token, name.group(1))
        else:
            self.note(doc, line, "skipped", token)

    def check_prefix(self, doc, line, token, prefix):
        self.counts["name"] += 1
        self.note(doc, line, "prefix", token)
        names = self.tree.c_names | self.tree.swift.names | self.tree.script_names
        if any(name.startswith(prefix) for name in names):
            return
        found = subprocess.run(["grep", "-rqE", "--include=*.h", rf"\b{prefix}\w", *self.outside.headers])
        if found.returncode != 0:
            self.fail(doc, line, token, "no name of the tree or the system's headers begins so")

    def check_command(self, doc, line, token, words):
        self.counts["command"] += 1
        self.note(doc, line, "command", token)
        for word in words:
            if looks_like_path(word) and "/" in word and not word.startswith(("-", "/", ".build")):
                self.check_path(doc, line, token, word)
        if words[:2] == ["swift", "run"]:
            rest = iter(words[2:])
            for word in rest:
                if word in ("-c", "--configuration", "--traits", "--scratch-path"):
                    next(rest, None)
                elif not word.startswith("-"):
                    if word not in self.tree.executables:
                        self.fail(doc, line, token, f"{word} is no executable target of Package.swift")
                    break

    def check_doc(self, doc, text):
        prose, other = read_doc(text)
        line_of = lambda text, offset: text.count("\n", 0, offset) + 1  # noqa: E731
        spans = list(CODE_SPAN.finditer(prose))
        for span in spans:
            self.check_token(doc, line_of(prose, span.start()), " ".join(span.group(2).split()))
        for match in FILE_THEN_NAMES.finditer(prose):
            for name in re.findall(r"`([^`]+)`", match.group("inner")):
                self.check_placement(doc, line_of(prose, match.start()), name, match.group("file"))
        for match in NAME_THEN_FILE.finditer(prose):
            self.check_placement(doc, line_of(prose, match.start()), match.group("name"), match.group("file"))
        blanked = CODE_SPAN.sub(lambda m: " " * len(m.group()), prose)
        for link in LINK.finditer(blanked):
            self.check_path(doc, line_of(blanked, link.start()), link.group(1), link.group(1))
        for word in re.finditer(r"(?<![\w/.-])(?:[\w.+-]+/)+[\w.+-]*", other):  # a diagram's folders and files
            self.check_path(doc, line_of(other, word.start()), word.group(), word.group())

    def run(self):
        for doc, text in self.docs:
            self.check_doc(doc, text)
        self.outside.look_up_in_headers(name for _, _, _, name in self.unresolved)
        for doc, line, token, name in self.unresolved:
            if name not in self.outside.in_headers:
                self.fail(doc, line, token, f"`{name}` is declared nowhere in the tree's code, the system's headers "
                          "or Swift's interfaces")
        order = {doc: index for index, (doc, _) in enumerate(self.docs)}
        return sorted(self.missing, key=lambda m: (order[m.split(":")[0]], int(m.split(":")[1])))


def matches(wanted, declared, open_ended):
    """Whether a doc's labels name a declaration's parameters: each in order, those left out having a
    default value (`init(protocol:)` for `init(protocol:file:line:)`); after `…`, any that follow."""
    i = 0
    for label, has_default in declared:
        if i < len(wanted) and wanted[i] == label:
            i += 1
        elif not (has_default or open_ended and i == len(wanted)):
            return False
    return i == len(wanted)


def looks_like_path(token):
    if re.search(r"\s", token) or token.startswith(("--", "@")):
        return False
    return "/" in token or bool(re.search(r"\.(" + "|".join(FILE_EXTENSIONS) + r"|\*)$", token))


def check(docs, tree=None, outside=None, listing=False):
    tree = tree or Tree(tracked_files())
    checker = Checker(tree, outside or Outside(), docs)
    missing = checker.run()
    if listing:
        print("\n".join(checker.listing))
    return missing, checker.counts


def self_test():
    """Breaks a copy of the docs in known ways and checks that each break, and nothing else, is reported."""
    docs = [(doc, (ROOT / doc).read_text()) for doc in DOCS]
    breaks = {
        "`cffi_enter_fastest`": "cffi_enter_fastest",             # a renamed C function
        "`Delegates/Slots/SlotPlan.swift`": "Delegates/Slots/",   # a wrong folder
        "`SlotTable.changes(_:)`": "not a member of SlotTable",    # a member that is not there
        "`DynamicDelegate(protocols:)`": "no declaration with those labels",
        "`DELEGATEKIT_FAST_PATHS=0`": "DELEGATEKIT_FAST_PATHS",
        "[x](ARCHITECTURE.md#no-such-heading)": "no heading #no-such-heading",
        "`swift run delegatekit-benchmark`": "no executable target",
        "`Delegates/DynamicDelegate.swift` (`removeEntries`)": "not declared in",  # a name in the wrong file
        "```swift\nlet x = `cffi_not_scanned_in_a_swift_block`\n```\n": None,
    }
    tree, outside = Tree(tracked_files()), Outside()
    clean, _ = check(docs, tree, outside)
    if clean:
        sys.exit("self-test: the docs of this tree do not pass:\n" + "\n".join(clean))
    broken = [(doc, text + "\n\n" + "\n\n".join(breaks) + "\n") for doc, text in docs[:1]] + docs[1:]
    found, _ = check(broken, tree, outside)
    expected = [why for why in breaks.values() if why]
    unmatched = [why for why in expected if not any(why in line for line in found)]
    if unmatched or len(found) != len(expected):
        sys.exit(f"self-test failed: expected one report each for {', '.join(expected)}; got:\n" + "\n".join(found))
    print(f"self-test: {len(expected)} breaks, each reported by name:\n  " + "\n  ".join(found))


def main():
    start = time.monotonic()
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
    missing, counts = check([(doc, (ROOT / doc).read_text()) for doc in DOCS], listing=sys.argv[1:] == ["--list"])
    for line in missing:
        print(f"error: {line}", file=sys.stderr)
    if missing:
        print(f"error: {len(missing)} names in the docs are not in the tree; fix the doc (or, for a name from "
              "outside the tree, see OUTSIDE in Scripts/check-doc-names.py)", file=sys.stderr)
        sys.exit(1)
    print(f"doc names: {', '.join(DOCS)} name {counts['path']} paths ({counts['anchor']} with a heading), "
          f"{counts['name']} code names ({counts['placement']} with the file declaring them), "
          f"{counts['variable']} environment variables and {counts['command']} commands, all in the tree "
          f"({time.monotonic() - start:.1f} s)")


if __name__ == "__main__":
    main()
