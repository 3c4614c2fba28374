#!/usr/bin/env python3
"""The size rules of the source tree (docs/design.md, "Rooms"): no non-test source file over
800 lines, no function over 150 lines. Generated code and tests are exempt.

Usage: check_sizes.py ROOT  (prints every breach; exit 1 when there is one)

Functions are found by matching braces outside comments and string literals: a brace block
whose head (the text since the previous ';', '{' or '}') has a closing parenthesis, at
namespace or class scope, is a function; lambdas and blocks inside it count towards it."""
import os
import re
import sys

MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 150
FOLDERS = ("app", "core", "importers", "views")
SCOPE_KEYWORDS = re.compile(r"\b(namespace|class|struct|union|enum)\b")


def blank_comments_and_strings(src):
    """The source with comments and literals replaced by spaces (newlines kept)."""
    out, i, n = [], 0, len(src)
    while i < n:
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif src.startswith('R"', i) and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', src[i:])
            if not m:
                out.append(src[i])
                i += 1
                continue
            end = src.find(")" + m.group(1) + '"', i)
            end = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", src[i:end]))
            i = end
        elif src[i] == '"' or (src[i] == "'" and not (i > 0 and src[i - 1].isalnum())):
            quote, j = src[i], i + 1
            while j < n and src[j] != quote and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            out.append(" " * (min(j, n) + 1 - i))
            i = j + 1
        else:
            out.append(src[i])
            i += 1
    return "".join(out)


def long_functions(text):
    """(line, length, head) of every function longer than the limit."""
    stack, found, line, last = [], [], 1, 0
    for i, c in enumerate(text):
        if c == "\n":
            line += 1
        elif c == "{":
            head = text[last:i]
            if any(kind == "function" for kind, _, _ in stack):
                kind = "block"
            elif SCOPE_KEYWORDS.search(head.split("(")[0]):
                kind = "scope"
            elif ")" in head:
                kind = "function"
            else:
                kind = "block"
            stack.append((kind, line, " ".join(head.split())[-80:]))
            last = i + 1
        elif c == "}":
            if stack:
                kind, start, head = stack.pop()
                length = line - start + 1
                if kind == "function" and length > MAX_FUNCTION_LINES:
                    found.append((start, length, head))
            last = i + 1
        elif c == ";":
            last = i + 1
    return found


def main(root):
    breaches = []
    for folder in FOLDERS:
        for directory, _, files in os.walk(os.path.join(root, folder)):
            for name in sorted(files):
                if not name.endswith((".cpp", ".h")):
                    continue
                path = os.path.join(directory, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as f:
                    src = f.read()
                lines = src.count("\n")
                if lines > MAX_FILE_LINES:
                    breaches.append(f"{rel}: {lines} lines (at most {MAX_FILE_LINES})")
                for start, length, head in long_functions(blank_comments_and_strings(src)):
                    breaches.append(f"{rel}:{start}: a function of {length} lines (at most "
                                    f"{MAX_FUNCTION_LINES}): {head}")
    for b in breaches:
        print(b)
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
