#!/usr/bin/env python3
"""Checks the course handouts (stdlib only; any python3).

  scripts/check_handouts.py
      Every handout (README.md, courseN_*/README.md, final_project/README.md) has a
      Chinese version README.zh-CN.md beside it, and the two cannot drift apart:
        - the same sequence of Markdown heading levels (same count, same order);
        - the same fenced code blocks (``` or ~~~), byte-identical, in the same order;
        - the English first line links README.zh-CN.md, the Chinese one README.md;
        - every image referenced in one is referenced in the other.
      Every lab handout (courseN_*/README.md and README.zh-CN.md) has one shape:
        - the title line `# Course N — <title>` / `# 第 N 课 — <标题>`, N from the
          directory name;
        - exactly the ten level-2 sections of SECTIONS, numbered, in that order
          (`###` subsections inside are free);
        - section 2 states a time in hours (小时) and a difficulty of ★ to ★★★★.
      Every Chinese handout avoids the renderings docs/glossary.md rules out:
        - 围栏 (a fence is 标记行), 使用者 (a consumer is 消费者);
        - 输出 for "emit" (产生/发出): a section whose English says "emit" may use
          输出 no more often than its English says "output";
        - bare 通道 for a SIMD lane (向量通道): likewise against "channel";
        - a word glossed with itself, as in 注册（注册，register）.
      Labs on NOT_YET_CONVERTED are reported, and their shape and term problems
      printed as notes that do not fail the check; so are the term problems of the
      handouts that are not labs (README.md, final_project/README.md).
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


# The handout shape (helpers' COMMON.md, "Handout shape"): English and Chinese
# titles of the ten level-2 sections, in order.
SECTIONS = [
    ("Goal", "目标"),
    ("Time and difficulty", "时间与难度"),
    ("Background", "背景"),
    ("Your TODO list", "你的 TODO 清单"),
    ("Hints", "提示"),
    ("The tests", "测试"),
    ("Reading a failing test", "读懂失败的测试"),
    ("Where the engine uses this", "引擎在哪里用到它"),
    ("Questions", "思考题"),
    ("Stretch", "拓展"),
]

# Labs whose handouts are still being rewritten into the shape above. Their
# shape and term problems are printed as notes, not failures. Empty this set
# once their new handouts are merged.
NOT_YET_CONVERTED: set[str] = set()

GLOSSARY = ROOT / "docs" / "glossary.md"
# The glossary rows the term rules below rely on (English term as written in
# the first column of docs/glossary.md).
GLOSSARY_TERMS_CHECKED = ["fence", "consumer", "emit", "SIMD lane"]

TITLE_EN = re.compile(r"^# Course (?P<n>\d+) — \S")
TITLE_ZH = re.compile(r"^# 第 (?P<n>\d+) 课 — \S")
HOURS_EN = re.compile(r"\bhours?\b")
STARS = re.compile(r"(?<!★)★{1,4}(?!★)")
INLINE_CODE = re.compile(r"`[^`]*`")
CJK = "\u4e00-\u9fff"
# A parenthesised gloss starting with Chinese: （注册，register） or （注册）.
GLOSS = re.compile(rf"（(?P<word>[{CJK}]{{1,12}})(?:[，,][^）]*)?）")


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


def lab_of(path):
    """The lab directory a handout belongs to (course3_graph), or None."""
    parts = path.relative_to(ROOT).parts
    return parts[0] if len(parts) == 2 and parts[0].startswith("course") else None


def check_shape(doc, chinese, lab):
    """The title line, the ten sections in order, and section 2's time and stars."""
    problems = []
    number = re.match(r"course(\d+)", lab).group(1)
    titles = [(n, text) for n, level, text in doc.headings if level == 1]
    pattern, form = ((TITLE_ZH, f"# 第 {number} 课 — <标题>") if chinese
                     else (TITLE_EN, f"# Course {number} — <title>"))
    if not titles:
        problems.append(f"{doc.where(1)}: no title line, expected {form}")
    else:
        n, text = titles[0]
        m = pattern.match("# " + text)
        if not m or m["n"] != number:
            problems.append(f"{doc.where(n)}: title line is '# {text[:50]}', expected {form}")
    expected = [f"{i}. {zh if chinese else en}" for i, (en, zh) in enumerate(SECTIONS, 1)]
    found = [(n, text) for n, level, text in doc.headings if level == 2]
    for i, want in enumerate(expected):
        if i >= len(found):
            problems.append(f"{doc.where(len(doc.lines))}: section '## {want}' is missing "
                            f"(only {len(found)} level-2 sections)")
            break
        n, text = found[i]
        if text != want:
            problems.append(f"{doc.where(n)}: level-2 section {i + 1} is '## {text}', "
                            f"expected '## {want}'")
            break  # the rest is shifted: one line says where it starts
    else:
        for n, text in found[len(expected):]:
            problems.append(f"{doc.where(n)}: level-2 section '## {text}' after "
                            f"'## {expected[-1]}' (only ten are allowed; use ###)")
    body = section_text(doc, 2, level=2)
    if body is not None:
        start = found[1][0]
        hours = "小时" in body if chinese else HOURS_EN.search(body)
        if not hours:
            problems.append(f"{doc.where(start)}: section 2 gives no time in "
                            f"{'小时' if chinese else 'hours'}")
        if not STARS.search(body):
            problems.append(f"{doc.where(start)}: section 2 gives no difficulty of ★ to ★★★★")
    return problems


def section_text(doc, number, level=2):
    """The lines under the level-2 heading numbered `number`, or None."""
    found = [n for n, lvl, text in doc.headings
             if lvl == level and text.startswith(f"{number}. ")]
    if not found:
        return None
    start = found[0]
    later = [n for n, lvl, _ in doc.headings if lvl <= level and n > start]
    end = later[0] - 1 if later else len(doc.lines)
    return "\n".join(doc.lines[start:end])


def prose(doc):
    """The handout's lines outside code blocks, inline code removed."""
    inside = set()
    for start, block in doc.blocks:
        inside.update(range(start, start + block.count("\n") + 1))
    return [(n, INLINE_CODE.sub("", line)) for n, line in enumerate(doc.lines, 1)
            if n not in inside]


def sections(doc):
    """Prose split at every heading: a list of (first line, text), heading 0 = preamble."""
    starts = [1] + [n for n, _, _ in doc.headings]
    lines = prose(doc)
    out = []
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(doc.lines) + 1
        out.append((start, "\n".join(t for n, t in lines if start <= n < end)))
    return out


def read_glossary():
    """docs/glossary.md as {English term: Chinese}, and its problems."""
    if not GLOSSARY.exists():
        return {}, [f"{rel(GLOSSARY)}:1: the glossary the term rules follow does not exist"]
    terms = {}
    for line in GLOSSARY.read_text(encoding="utf-8").split("\n"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) >= 2 and not set(cells[0]) <= set("-: "):
            terms[cells[0].strip("*` ")] = cells[1]
    problems = [f"{rel(GLOSSARY)}:1: no row for '{t}', which the term rules rely on"
                for t in GLOSSARY_TERMS_CHECKED if t not in terms]
    return terms, problems


def count(pattern, text):
    return len(re.findall(pattern, text, re.IGNORECASE))


def check_terms(en, zh, glossary):
    """Known bad Chinese renderings, section by section against the English."""
    problems = []
    for n, line in prose(zh):
        for word, term in (("围栏", "fence"), ("使用者", "consumer")):
            if word in line:
                problems.append(f"{zh.where(n)}: '{word}' for '{term}': the glossary says "
                                f"{glossary.get(term, '?')}")
    # Self-glosses: the parenthesis repeats the word written just before it.
    text = "\n".join(t for _, t in prose(zh))
    flat = re.sub(r"[\s*_]", "", text)
    for m in GLOSS.finditer(flat):
        word = m["word"]
        if flat[:m.start()].endswith(word):
            line = next((n for n, t in prose(zh) if m.group(0)[:4] in re.sub(r"\s", "", t)), 1)
            problems.append(f"{zh.where(line)}: '{word}{m.group(0)}' glosses a word with "
                            f"itself: put only the English term in the parenthesis")
    # Section by section (the headings are aligned by the structure check).
    en_sections, zh_sections = sections(en), sections(zh)
    if len(en_sections) != len(zh_sections):
        return problems  # the structure check reports it
    for (_, e), (line, z) in zip(en_sections, zh_sections):
        emits, outputs = count(r"\bemit\w*", e), count(r"\boutputs?\b", e)
        if emits and z.count("输出") > outputs:
            problems.append(f"{zh.where(line)}: the English section says 'emit' {emits} times "
                            f"and 'output' {outputs} times, the Chinese has "
                            f"输出 {z.count('输出')} times: emit is "
                            f"{glossary.get('emit', '产生/发出')}, not 输出")
        lanes = count(r"\blanes?\b", e)
        bare = len(re.findall(r"(?<!向量)通道", z))
        if lanes > z.count("向量通道") and bare > count(r"\bchannels?\b", e):
            problems.append(f"{zh.where(line)}: the English section says 'lane' {lanes} times, "
                            f"the Chinese has 向量通道 {z.count('向量通道')} times and bare 通道 "
                            f"{bare} times (more than the English 'channel'): a SIMD lane is "
                            f"{glossary.get('SIMD lane', '向量通道')}, 通道 alone is a channel")
    return problems


def check_lab_handouts():
    """Shape and term rules; problems of allow-listed labs come back as notes."""
    problems, notes = [], []
    glossary, problems_glossary = read_glossary()
    problems += problems_glossary
    for en_path in handouts():
        zh_path = en_path.with_name("README.zh-CN.md")
        if not zh_path.exists():
            continue
        en, zh = Handout(en_path), Handout(zh_path)
        lab = lab_of(en_path)
        found = check_terms(en, zh, glossary)
        if lab:
            found = check_shape(en, False, lab) + check_shape(zh, True, lab) + found
        # The rules are for lab handouts; the top and final_project READMEs get notes.
        (notes if lab is None or lab in NOT_YET_CONVERTED else problems).extend(found)
    return problems, notes


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
    notes = []
    if argv:
        problems, what = check_figures()
    else:
        problems, what = check_structure()
        shape_problems, notes = check_lab_handouts()
        problems += shape_problems
        print("labs not yet in the handout shape (NOT_YET_CONVERTED, checked as notes): "
              + (", ".join(sorted(NOT_YET_CONVERTED)) or "none"))
    for note in notes:
        print(f"note: {note}")
    for problem in problems:
        print(problem)
    name = "handout figures" if argv else "handout structure"
    print(f"{name}: {len(problems)} problem(s) in {what}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
