#!/usr/bin/env python3
"""Fails on comments that carry a lab notebook instead of a reason.

A comment says why: the decision and its constant, with a pointer such as
"see docs/performance.md#column-tiles" for the measurement behind it. Dates,
machines, tracker numbers and before/after timings rot, so they go in
docs/performance.md, where each entry has its date, CPU and command.

Scanned: the comments (// and /* */ in C++, # in CMake) of *.cpp, *.cc, *.hpp,
*.h, *.cmake and CMakeLists.txt files under kuiper/, course*/, solutions/,
final_project/, onnx/, bench/, fuzz/, cmake/ and the root CMakeLists.txt.
Consecutive line comments are read as one block, so a rule also matches a
phrase that wraps onto the next line. The rules:

  issue/stop number   "issue 16", "Stop 25" (any case)
  date                "2026-12-07", "2026-12", "Dec 7", "7 December", "Dec 2026"
  machine             EPYC, Xeon, Ryzen, Zen 4, Sapphire Rapids, Skylake,
                      Ice Lake, Cascade Lake, "the Intel machine", "AMD VM", ...
  timing with arrow   "1.50 -> 1.33 ms", "14.8 -> 13.3", "0.59 → 0.73 s",
                      "130 -> 170 GFLOP/s", "269 -> 144 MB": two numbers joined
                      by -> or → with a unit (time, GFLOP/s, %, KB/MB/GB) after
                      the second, or decimals on both sides (so "128->128"
                      channels and "4 -> 8 pixels" pass)

Prints file:line: rule: the comment's text, for each finding; exits 1 if any.
Usage: scripts/lint_comments.py [FILE...]   (no FILE: the whole tree)
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DIRS = ["kuiper", "solutions", "final_project", "onnx", "bench", "fuzz", "cmake"]
SUFFIXES = {".cpp", ".cc", ".hpp", ".h", ".cmake"}

MONTH = (r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)"
         r"(?:uary|ruary|ch|il|e|y|ust|ember|tember|ober)?\.?")
NUMBER = r"\d+(?:\.\d+)?"
TIME_UNIT = r"(?:ms|s|us|µs|ns|sec|seconds?|minutes?|min)\b"
RATE_OR_SIZE = r"(?:GFLOP/s|GFLOPS|%|[KMG]i?B)(?!\w)"
RULES = [
    ("issue/stop number", re.compile(r"\b(?:issue|stop)\s*#?\d+", re.I)),
    ("date", re.compile(r"\b20\d\d-[01]\d\b|\b" + MONTH + r" (?:\d{1,2}|20\d\d)\b|\b\d{1,2} " +
                        MONTH + r"(?![a-z])")),
    ("machine", re.compile(
        r"\b(?:EPYC|Xeon|Ryzen|Threadripper|Zen ?\d|Sapphire Rapids|Ice ?Lake|"
        r"Cascade ?Lake|Skylake|Granite Rapids|Graviton)\b|"
        r"\b(?:Intel|AMD)(?:\s+[\w-]+)?\s+(?:machine|VM|box|host|server|laptop)s?\b", re.I)),
    ("timing with arrow", re.compile(
        NUMBER + r"\s*(?:" + TIME_UNIT + "|" + RATE_OR_SIZE + r")?\s*(?:->|→)\s*" + NUMBER +
        r"\s*(?:" + TIME_UNIT + "|" + RATE_OR_SIZE + r")|\d+\.\d+\s*(?:->|→)\s*\d+\.\d+")),
]


def files():
    roots = [ROOT / d for d in DIRS] + sorted(ROOT.glob("course*"))
    found = [ROOT / "CMakeLists.txt"]
    for r in roots:
        if r.is_dir():
            found += [p for p in r.rglob("*")
                      if p.is_file() and (p.suffix in SUFFIXES or p.name == "CMakeLists.txt")
                      and "build" not in p.relative_to(ROOT).parts]
    return sorted(set(found))


def cpp_comments(text):
    """Yields (line, text) for each comment line, skipping string and char literals."""
    i, line, n = 0, 1, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            yield line, text[i + 2:end]
            i = end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end
            for k, part in enumerate(text[i + 2:end].split("\n")):
                yield line + k, part
            line += text.count("\n", i, end)
            i = end + 2
            continue
        elif c == "R" and text.startswith('R"', i) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            delim = text[i + 2:text.find("(", i)]
            end = text.find(")" + delim + '"', i)
            end = n if end < 0 else end + len(delim) + 2
            line += text.count("\n", i, end)
            i = end
            continue
        elif c in "\"'":
            if c == "'" and i and text[i - 1].isalnum():  # a digit separator: 1'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        i += 1


def cmake_comments(text):
    for number, row in enumerate(text.split("\n"), 1):
        quoted = False
        for k, c in enumerate(row):
            if c == '"' and (k == 0 or row[k - 1] != "\\"):
                quoted = not quoted
            elif c == "#" and not quoted:
                yield number, row[k + 1:]
                break


def blocks(comments):
    """Groups comment lines on consecutive source lines into one block."""
    block = []
    for line, text in comments:
        if block and line != block[-1][0] + 1:
            yield block
            block = []
        block.append((line, text.strip().lstrip("*").strip()))
    if block:
        yield block


def check(path):
    text = path.read_text(encoding="utf-8", errors="replace")
    cmake = path.suffix == ".cmake" or path.name == "CMakeLists.txt"
    findings = []
    for block in blocks(cmake_comments(text) if cmake else cpp_comments(text)):
        joined, starts = "", []
        for line, part in block:
            starts.append((len(joined), line))
            joined += part + " "
        for rule, pattern in RULES:
            for m in pattern.finditer(joined):
                line = max(l for s, l in starts if s <= m.start())
                findings.append((line, rule, m.group(0)))
    return sorted(set(findings))


def main(argv):
    paths = [pathlib.Path(a).resolve() for a in argv] or files()
    bad = 0
    for path in paths:
        for line, rule, match in check(path):
            print(f"{path.relative_to(ROOT)}:{line}: {rule}: {match!r}")
            bad += 1
    if bad:
        print(f"{bad} comment(s) carry a date, a machine, an issue/stop number or a timing:"
              " state the decision and point to docs/performance.md instead")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
