#!/usr/bin/env python3
"""Fails when two source files of one CMake target define the same name in their anonymous namespaces.

The build is a unity build (CMakeLists.txt: a target's sources compiled in batches of 16 as one translation unit):
two files' file-local helpers then share one scope. Equal names with equal parameters stop the build, but equal names
with different parameters silently become overloads, and a call can pick the other file's helper; which files share
a batch changes whenever a source is added. So a file-local name must be unique within its target.

Usage: check_unity_names.py [ROOT]   (ROOT: the repository, default this script's parent's parent)
Prints each clash as "target: name in a.cpp, b.cpp" and exits 1 if there is any.
"""
import re
import sys
from collections import defaultdict
from pathlib import Path

IDENT = re.compile(r"[A-Za-z_]\w*")
KEYWORDS = {"const", "constexpr", "static", "inline", "auto", "void", "struct", "class", "enum", "union", "using",
            "template", "typename", "unsigned", "signed", "operator", "noexcept", "return", "if", "for", "while"}


def targets(root):
    """{target: [source paths]} from the add_library / add_executable lists of ROOT's CMakeLists.txt and of every
    directory it adds."""
    out, todo = {}, [root]
    while todo:
        folder = todo.pop()
        text = re.sub(r"#[^\n]*", "", (folder / "CMakeLists.txt").read_text())
        todo += [folder / d for d in re.findall(r"add_subdirectory\(\s*([^)\s]+)", text)]
        for m in re.finditer(r"add_(?:library|executable)\(\s*(\S+)([^)]*)\)", text):
            sources = [folder / t for t in m.group(2).split() if t.endswith(".cpp")]
            out[m.group(1)] = [s for s in sources if s.exists()]
    return out


def code_only(text):
    """The text with comments, string and character literals blanked (same length, newlines kept)."""
    pattern = re.compile(r'//[^\n]*|/\*.*?\*/|R"([^(]*)\(.*?\)\1"|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def statement_name(statement):
    """The name a top-level statement of a namespace defines, or None (a declaration, a nested namespace)."""
    s = " ".join(statement.split())
    if not s or s.startswith(("namespace", "using namespace", "static_assert", "#")):
        return None
    kind = re.match(r"(?:template\s*<[^{;]*?>\s*)?(struct|class|enum(?:\s+class)?|union)\s+([A-Za-z_]\w*)", s)
    if kind:
        return kind.group(2)
    alias = re.match(r"using\s+([A-Za-z_]\w*)\s*=", s)
    if alias:
        return alias.group(1)
    # A function: the identifier before the first "(" outside template brackets; a variable: the one before "=",
    # "{" or "[".
    depth = 0
    for i, c in enumerate(s):
        if c == "<":
            depth += 1
        elif c == ">" and depth > 0:
            depth -= 1
        elif depth == 0 and c in "(=[{":
            names = [n for n in IDENT.findall(s[:i]) if n not in KEYWORDS]
            return names[-1] if names else None
    return None


def file_local_names(path):
    """The names defined directly in the file's anonymous namespaces."""
    text = code_only(path.read_text())
    text = re.sub(r"^\s*#[^\n]*", "", text, flags=re.M)  # preprocessor lines
    names, scopes, statement, recorded = [], [], "", False
    for c in text:
        in_anon = bool(scopes) and scopes[-1] == "anon"
        if c == "{":
            if in_anon or not scopes or scopes[-1] == "named":
                head = " ".join(statement.split())
                if re.fullmatch(r"(?:inline\s+)?namespace", head):
                    scopes.append("anon")
                elif re.fullmatch(r"(?:inline\s+)?namespace\s+[\w:]+", head) or head.startswith('extern "C'):
                    scopes.append("named")
                else:
                    if in_anon and not recorded:
                        name = statement_name(statement)
                        if name:
                            names.append(name)
                        recorded = True  # the rest of the statement (a lambda's body, an initialiser) is its own
                    scopes.append("other")
                    continue
                statement, recorded = "", False
            else:
                scopes.append("other")
            continue
        if c == "}":
            if scopes:
                closed = scopes.pop()
                if closed in ("anon", "named"):
                    statement, recorded = "", False
                elif closed == "other" and (not scopes or scopes[-1] in ("anon", "named")):
                    # A function's body ends its statement; an initialiser's "};" ends it at the ";".
                    if not re.search(r"=\s*$|=.*[\[(]", " ".join(statement.split())):
                        statement, recorded = "", False
            continue
        if not scopes or scopes[-1] in ("anon", "named"):
            if c == ";":
                if scopes and scopes[-1] == "anon" and not recorded:
                    s = " ".join(statement.split())
                    # A prototype declares a function defined later; a variable or alias is a definition.
                    if "=" in s or not re.search(r"\)\s*(const\s*)?(noexcept\s*)?$", s):
                        name = statement_name(statement)
                        if name:
                            names.append(name)
                statement, recorded = "", False
            else:
                statement += c
    return set(names)


def main():
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
    clashes = []
    for target, sources in sorted(targets(root).items()):
        where = defaultdict(list)
        for source in sources:
            for name in file_local_names(source):
                where[name].append(str(source.relative_to(root)))
        for name, files in sorted(where.items()):
            if len(files) > 1:
                clashes.append(f"{target}: {name} in {', '.join(sorted(files))}")
    for c in clashes:
        print(c)
    if clashes:
        print(f"file-local names repeated within a target: {len(clashes)}; give each a name of its own "
              "(the unity build puts the files in one scope)", file=sys.stderr)
        return 1
    print("file-local names: unique within every target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
