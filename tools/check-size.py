#!/usr/bin/env python3
"""Size limits of the library: no lib/ file over 500 lines, no function body over 80 lines.

Usage: tools/check-size.py [--root DIR] [--allowlist FILE] [--max-file N] [--max-function N]
Exit status: 0 when every offender is allowlisted, 1 otherwise (each offender printed as
"path: N lines (max M)" or "path:LINE: function NAME: N lines (max M)"), 2 for usage errors.
Allowlisted offenders that are no longer over the limit are reported too ("stale"), so the
list only shrinks.

Heuristic (no compiler, python3 only):
  - Files: every *.cc and *.h under lib/; a file's size is its number of lines.
  - Functions: comments, string and character literals (raw strings included) and
    preprocessor lines are blanked first; then braces are matched. A '{' opened at file,
    namespace or class scope is a function body when the text since the previous ';', '{'
    or '}' at that scope ends like a function header: a ')' followed only by qualifiers
    (const, override, final, noexcept, mutable, &, &&) or by a trailing return type
    ('-> T'), or a constructor's member-initializer list. 'namespace', 'extern "C"',
    class/struct/union/enum bodies are scopes searched further; anything else (an
    initializer '= {', an array) is skipped. Braces of a member-initializer list
    ('x_{1}') are skipped. Function bodies nested in other function bodies (lambdas, local
    classes) count towards their enclosing function only.
  - A function's length is the number of lines from its opening '{' to its closing '}',
    both included. Its name is the last identifier (with '::' qualifiers) before the '('
    of its header.
Allowlist (tools/size-allowlist.txt): one entry a line, "PATH" (a file) or "PATH:NAME" (a
function), then " # reason" (required); blank lines and lines starting with '#' ignored.
"""

import argparse
import os
import re
import sys

QUALIFIERS = r"(?:\s*(?:const|override|final|noexcept(?:\s*\([^()]*\))?|mutable|&&|&))*"
FUNCTION_END = re.compile(r"\)" + QUALIFIERS + r"(?:\s*->\s*[\w:<>,\s\*&]+)?\s*$")
SCOPE_KEYWORD = re.compile(r"\b(namespace|class|struct|union|enum)\b")
NAME = re.compile(r"((?:[A-Za-z_~][\w]*\s*::\s*)*(?:operator\s*[^\s(]+|~?[A-Za-z_]\w*))\s*$")


def blank(text):
    """Comments, literals and preprocessor lines replaced by spaces; newlines kept."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":  # preprocessor line, with continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        line_start = c == "\n"
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i)
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                out.append(" ")  # digit separator: 1'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """(name, first line, line count) of every function body at file/namespace/class scope."""
    code = blank(text)
    found = []
    # Each scope: (kind, header-start index, opening line, name)
    stack = [("file", 0, 0, "")]
    header_start = 0
    line = 1
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
            continue
        kind = stack[-1][0]
        if c == ";" and kind in ("file", "namespace", "class"):
            header_start = i + 1
        elif c == "{":
            if kind not in ("file", "namespace", "class"):
                stack.append(("inner", i, line, ""))
                continue
            header = " ".join(code[header_start:i].split())
            if re.search(r"\)\s*:", header) and re.search(r"[\w>]$", header) \
                    and not FUNCTION_END.search(header) and "->" not in header:
                stack.append(("init", i, line, ""))  # member initializer x_{...}
                continue
            if FUNCTION_END.search(header) or (re.search(r"\)\s*:", header) and header.endswith("}")):
                paren = header.find("(")
                m = NAME.search(header[:paren]) if paren >= 0 else None
                name = re.sub(r"\s+", "", m.group(1)) if m else "?"
                stack.append(("function", i, line, name))
            elif re.search(r'^(?:inline\s+)?namespace\b|^extern\s*$', header) or header == "":
                stack.append(("namespace", i, line, ""))
            elif SCOPE_KEYWORD.search(header) and "=" not in header and "(" not in header:
                stack.append(("class", i, line, ""))
            else:
                stack.append(("other", i, line, ""))
            header_start = i + 1
        elif c == "}":
            if len(stack) == 1:
                continue  # unbalanced: ignore
            top = stack.pop()
            if top[0] == "init":
                continue  # the header goes on
            if top[0] == "function":
                found.append((top[3], top[2], line - top[2] + 1))
            if stack[-1][0] in ("file", "namespace", "class"):
                header_start = i + 1
    return found


def read_allowlist(path):
    entries = {}
    if not os.path.exists(path):
        return entries
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            text = raw.strip()
            if not text or text.startswith("#"):
                continue
            key, _, reason = text.partition(" #")
            if not reason.strip():
                sys.exit(f"{path}:{number}: an entry needs a reason (' # why')")
            entries[key.strip()] = reason.strip()
    return entries


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--allowlist", default=None)
    ap.add_argument("--max-file", type=int, default=500)
    ap.add_argument("--max-function", type=int, default=80)
    args = ap.parse_args()
    allow = read_allowlist(args.allowlist or os.path.join(args.root, "tools", "size-allowlist.txt"))
    used = set()
    bad = []
    for directory, _, names in sorted(os.walk(os.path.join(args.root, "lib"))):
        for name in sorted(names):
            if not name.endswith((".cc", ".h")):
                continue
            full = os.path.join(directory, name)
            path = os.path.relpath(full, args.root)
            with open(full, encoding="utf-8", errors="replace") as f:
                text = f.read()
            lines = text.count("\n")
            if lines > args.max_file:
                if path in allow:
                    used.add(path)
                else:
                    bad.append(f"{path}: {lines} lines (max {args.max_file})")
            for fn, first, count in functions(text):
                if count <= args.max_function:
                    continue
                key = f"{path}:{fn}"
                if key in allow:
                    used.add(key)
                else:
                    bad.append(f"{path}:{first}: function {fn}: {count} lines "
                               f"(max {args.max_function})")
    for key in sorted(set(allow) - used):
        bad.append(f"{key}: allowlisted but within the limits now (stale): remove it")
    for b in bad:
        print(b)
    if bad:
        print(f"check-size: {len(bad)} problem(s); fix them or allowlist with a reason in "
              f"tools/size-allowlist.txt", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
