#!/usr/bin/env python3
"""Fails when code in ui/ or app/ writes a number itself instead of through core/text_format.h.

Every number on screen, in an export or on the command line reads by one set of rules (the top of
core/text_format.h), so the same value reads the same in a cell, a hover, a sentence, a tick and a report. A printf
in a panel or a command would write its own variant. Flagged, outside comments:
- the printf family (printf, fprintf, snprintf, sprintf, vsnprintf), std::format, std::to_chars, and the stream
  manipulators that format reals (setprecision, std::fixed, std::scientific);
- a real conversion (%f, %.3g, %e, ...) in a string literal, except as the format of an ImGui editing field
  (InputFloat, InputDouble, SliderFloat, DragFloat and their kin, or an options struct's `format` member that is
  one), which ImGui parses back as the user types.

Usage: check_number_text.py [ROOT]   (ROOT: the repository, default this script's parent's parent)
Prints each finding as "path:line: what" and exits 1 if there is any.
"""
import re
import sys
from pathlib import Path

CALL_NAMES = {"printf", "sprintf", "snprintf", "vsnprintf", "fprintf", "vsprintf"}
REAL_CONVERSION = re.compile(r"%[-+ #0]*(\d+|\*)?(\.(\d+|\*))?[fFgGeEaA]")
EDIT_FIELD = re.compile(r"ImGui::(Input|Slider|Drag)(Float|Double|Scalar)\w*\s*\(|^\s*const char\*\s+format\s*=")
STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def code_lines(text):
    """(line number, code) with comments blanked, so a comment may quote a format."""
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group()), text, flags=re.S)
    for number, line in enumerate(text.split("\n"), 1):
        # A // outside a string starts a comment.
        cut, in_string, i = len(line), False, 0
        while i < len(line):
            c = line[i]
            if c == "\\" and in_string:
                i += 2
                continue
            if c == '"':
                in_string = not in_string
            elif not in_string and line.startswith("//", i):
                cut = i
                break
            i += 1
        yield number, line[:cut]


def findings(path, shown):
    for number, code in code_lines(path.read_text(errors="replace")):
        strings = STRING.findall(code)
        bare = STRING.sub('""', code)
        for m in re.finditer(r"\b(?:std::)?(\w+)\s*\(", bare):
            if m.group(1) in CALL_NAMES:
                yield f"{shown}:{number}: {m.group(1)} writes a number outside core/text_format.h"
        for name in ("std::format", "std::to_chars", "std::setprecision", "std::fixed", "std::scientific"):
            if re.search(re.escape(name) + r"\b", bare):
                yield f"{shown}:{number}: {name} writes a number outside core/text_format.h"
        if any(REAL_CONVERSION.search(s) for s in strings) and not EDIT_FIELD.search(code):
            yield f"{shown}:{number}: a real number's printf conversion outside core/text_format.h"


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)
    found = []
    for folder in ("ui", "app"):
        for path in sorted((root / folder).rglob("*")):
            if path.suffix in (".cpp", ".h"):
                found += findings(path, path.relative_to(root).as_posix())
    for line in found:
        print(line)
    print(f"numbers written outside core/text_format.h: {len(found)}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
