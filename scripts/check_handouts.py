#!/usr/bin/env python3
"""Checks the course handouts (stdlib only; any python3).

  scripts/check_handouts.py
      Every handout (README.md, courseN_*/README.md, final_project/README.md) has a
      Chinese version README.zh-CN.md beside it, and the two cannot drift apart:
        - the same sequence of Markdown heading levels (same count, same order);
        - the same fenced code blocks (``` or ~~~), byte-identical, in the same order;
        - the English first line links README.zh-CN.md, the Chinese one README.md;
        - every image referenced in one is referenced in the other.
  scripts/check_handouts.py --figures
      Every image a handout (either language) references exists, the path taken
      relative to the README (web addresses are not checked).

Prints one line per problem, "file:line: what is wrong", then a summary line.
Exit status: 0 when there is no problem, 1 otherwise, 2 on a usage error.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}(?P<hashes>#{1,6})(?:[ \t]+|$)(?P<text>.*)$")
IMAGE_MD = re.compile(r"!\[[^\]]*\]\(\s*<?(?P<path>[^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IMAGE_HTML = re.compile(r"<img\b[^>]*\bsrc\s*=\s*[\"'](?P<path>[^\"']+)[\"']", re.IGNORECASE)


def handouts():
    """The English handouts, in a stable order."""
    found = [ROOT / "README.md"]
    found += sorted(ROOT.glob("course*/README.md"))
    found.append(ROOT / "final_project" / "README.md")
    return [p for p in found if p.exists()]


def rel(path):
    return path.relative_to(ROOT).as_posix()


class Handout:
    """A Markdown file read into what the check compares."""

    def __init__(self, path):
        self.path = path
        self.lines = path.read_text(encoding="utf-8").split("\n")
        self.headings = []  # (line number, level, text)
        self.blocks = []  # (line number of the opening fence, exact text of the block)
        self.images = []  # (line number, path)
        fence, start, body = None, 0, []
        for number, line in enumerate(self.lines, 1):
            if fence:
                body.append(line)
                m = FENCE.match(line)
                if (m and m["fence"][0] == fence[0] and len(m["fence"]) >= len(fence)
                        and not line.strip().strip(fence[0])):
                    self.blocks.append((start, "\n".join(body)))
                    fence = None
                continue
            m = FENCE.match(line)
            if m:
                fence, start, body = m["fence"], number, [line]
                continue
            h = HEADING.match(line)
            if h:
                self.headings.append((number, len(h["hashes"]), h["text"].strip().rstrip("#")
                                      .strip()))
            for pattern in (IMAGE_MD, IMAGE_HTML):
                for img in pattern.finditer(line):
                    self.images.append((number, img["path"]))
        if fence:
            self.blocks.append((start, "\n".join(body)))
            self.unclosed = start
        else:
            self.unclosed = None

    def where(self, line):
        return f"{rel(self.path)}:{line}"


def first_difference(a, b):
    """Index of the first differing line of two texts, 0-based."""
    a, b = a.split("\n"), b.split("\n")
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def compare(en, zh):
    problems = []
    for doc in (en, zh):
        if doc.unclosed:
            problems.append(f"{doc.where(doc.unclosed)}: code block never closed")
    # The first lines link each other.
    if "(README.zh-CN.md)" not in en.lines[0]:
        problems.append(f"{en.where(1)}: first line does not link the Chinese version "
                        f"[中文版](README.zh-CN.md): {en.lines[0][:60]!r}")
    if "(README.md)" not in zh.lines[0]:
        problems.append(f"{zh.where(1)}: first line does not link the English version "
                        f"[English](README.md): {zh.lines[0][:60]!r}")
    # Section structure: heading levels, one by one.
    for i, ((n1, l1, t1), (n2, l2, t2)) in enumerate(zip(en.headings, zh.headings), 1):
        if l1 != l2:
            problems.append(f"{zh.where(n2)}: heading {i} is level {l2} ({'#' * l2} {t2}) "
                            f"but {en.where(n1)} is level {l1} ({'#' * l1} {t1})")
            break  # everything after is shifted: one line says where it starts
    if len(en.headings) != len(zh.headings):
        longer, shorter = ((en, zh) if len(en.headings) > len(zh.headings) else (zh, en))
        n, level, text = longer.headings[len(shorter.headings)]
        problems.append(f"{longer.where(n)}: {len(longer.headings)} headings against "
                        f"{len(shorter.headings)} in {rel(shorter.path)}; the first extra "
                        f"one is {'#' * level} {text}")
    # Code blocks: byte-identical, in order.
    for i, ((n1, b1), (n2, b2)) in enumerate(zip(en.blocks, zh.blocks), 1):
        if b1 != b2:
            k = first_difference(b1, b2)
            line1 = b1.split("\n")[k] if k < len(b1.split("\n")) else "<end of block>"
            line2 = b2.split("\n")[k] if k < len(b2.split("\n")) else "<end of block>"
            problems.append(f"{zh.where(n2 + k)}: code block {i} differs from "
                            f"{en.where(n1 + k)}: {line2[:50]!r} vs {line1[:50]!r}")
    if len(en.blocks) != len(zh.blocks):
        longer, shorter = ((en, zh) if len(en.blocks) > len(zh.blocks) else (zh, en))
        n, _ = longer.blocks[len(shorter.blocks)]
        problems.append(f"{longer.where(n)}: {len(longer.blocks)} code blocks against "
                        f"{len(shorter.blocks)} in {rel(shorter.path)}; the first extra one "
                        f"starts here")
    # Figures: the same set.
    for doc, other in ((en, zh), (zh, en)):
        theirs = {p for _, p in other.images}
        for n, path in doc.images:
            if path not in theirs:
                problems.append(f"{doc.where(n)}: image {path} is not referenced in "
                                f"{rel(other.path)}")
    return problems


def check_structure():
    problems, pairs = [], 0
    for en_path in handouts():
        zh_path = en_path.with_name("README.zh-CN.md")
        if not zh_path.exists():
            problems.append(f"{rel(en_path)}:1: no Chinese version {rel(zh_path)} beside it")
            continue
        pairs += 1
        problems += compare(Handout(en_path), Handout(zh_path))
    return problems, f"{pairs} handout pairs"


def check_figures():
    problems, count = [], 0
    for en_path in handouts():
        for path in (en_path, en_path.with_name("README.zh-CN.md")):
            if not path.exists():
                continue
            doc = Handout(path)
            for n, image in doc.images:
                if re.match(r"^[a-z]+:", image) or image.startswith("//"):
                    continue  # a web address
                count += 1
                target = path.parent / image.split("#")[0].split("?")[0]
                if not target.is_file():
                    problems.append(f"{doc.where(n)}: figure {image} does not exist "
                                    f"({rel(target.resolve()) if target.resolve().is_relative_to(ROOT) else target})")
    return problems, f"{count} figure references"


def main(argv):
    if argv not in ([], ["--figures"]):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    problems, what = check_figures() if argv else check_structure()
    for problem in problems:
        print(problem)
    name = "handout figures" if argv else "handout structure"
    print(f"{name}: {len(problems)} problem(s) in {what}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
