#!/usr/bin/python3
"""Writes the Sphinx source trees of the course site from the handouts.

usage: prepare.py REPO OUT [--repo-url URL]

OUT/en and OUT/zh mirror the repository's layout, so that a handout's relative
figure paths stay valid: README.md becomes index.md, course6_conv/README.md becomes
course6_conv/index.md, docs/instructors.md stays docs/instructors.md. Pages:
  index                the top README, its student part (the sections STUDENT_SECTIONS names)
  courseN_*/index      every lab handout with a README.md, in numeric order
  final_project/index  the final project
  docs/architecture    docs/architecture.md + .zh-CN.md, when present
  docs/instructors     docs/instructors.md + .zh-CN.md, when present
  docs/operators       docs/operators.md, when present (English in both languages)
A page without its Chinese file shows the English text in the Chinese site.

Links are rewritten (code blocks and inline code are left alone):
  - to a page in the same language: a relative .md link, which MyST resolves (anchors too);
  - to a page in the other language (the handouts' first line): `site:<lang>/<page>.html`,
    which the kuiper_site extension makes relative;
  - to any other file of the repository (sources, docs not on the site): a link into the
    repository when --repo-url is given, else plain text naming the path, so nothing 404s;
  - images: copied into OUT at the same relative path.
It also writes OUT/<lang>/pages.json: the page list with titles and time estimates.
"""

import argparse
import json
import os
import posixpath
import re
import shutil
import sys

LANGS = ("en", "zh")
# The top README's sections that concern students (title prefixes, both languages).
STUDENT_SECTIONS = re.compile(
    r"^(Start here|For students|The finished engine|从这里开始|给学生|完成后的引擎)")
TIME_SECTION = re.compile(r"^##\s+2\.\s+(Time and difficulty|时间与难度)\s*$")
HOURS = re.compile(
    r"(\d+(?:\.\d+)?(?:\s*(?:–|-|to|~|～|至|到)\s*\d+(?:\.\d+)?)?)\s*(?:hours?\b|h\b|小时)")
STARS = re.compile(r"★[★☆]*")
FENCE = re.compile(r"^\s*(```+|~~~+)")
# [text](target) or ![alt](target "title"); text may hold one level of brackets.
LINK = re.compile(r'(!?)\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\(\s*<?([^)\s>]*)>?(\s+"[^"]*")?\s*\)')
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def lab_number(name):
    m = re.match(r"course(\d+)", name)
    return int(m.group(1)) if m else 10**6


def find_pages(repo):
    """[(docname, kind, {lang: repo-relative source or None})], in navigation order."""
    pages = [("index", "home", {"en": "README.md", "zh": "README.zh-CN.md"})]
    labs = sorted((d for d in os.listdir(repo)
                   if d.startswith("course") and os.path.isfile(os.path.join(repo, d, "README.md"))),
                  key=lambda d: (lab_number(d), d))
    for d in labs:
        pages.append((f"{d}/index", "lab", {"en": f"{d}/README.md", "zh": f"{d}/README.zh-CN.md"}))
    if os.path.isfile(os.path.join(repo, "final_project/README.md")):
        pages.append(("final_project/index", "final",
                      {"en": "final_project/README.md", "zh": "final_project/README.zh-CN.md"}))
    for name in ("architecture", "instructors", "operators"):
        if os.path.isfile(os.path.join(repo, f"docs/{name}.md")):
            pages.append((f"docs/{name}", "doc",
                          {"en": f"docs/{name}.md", "zh": f"docs/{name}.zh-CN.md"}))
    for _, _, srcs in pages:
        if not os.path.isfile(os.path.join(repo, srcs["zh"])):
            srcs["zh"] = None
    return pages


def student_part(text):
    """The top README without the sections for instructors and developers."""
    out, keep = [], True
    for line in text.splitlines(keepends=True):
        if line.startswith("## "):
            keep = bool(STUDENT_SECTIONS.match(line[3:].strip()))
        if keep:
            out.append(line)
    return "".join(out)


def time_estimate(text):
    """'3–4 h · ★★' from section 2 (Time and difficulty), or '' when it is absent."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if TIME_SECTION.match(line):
            body = []
            for more in lines[i + 1:]:
                if more.startswith("## "):
                    break
                body.append(more)
            body = "\n".join(body)
            hours, stars = HOURS.search(body), STARS.search(body)
            parts = []
            if hours:
                parts.append(re.sub(r"\s*(?:-|to|~|～|至|到)\s*", "–", hours.group(1)) + " h")
            if stars:
                parts.append(stars.group(0))
            return " · ".join(parts)
    return ""


def title_of(text):
    for line in text.splitlines():
        if line.startswith("# "):
            return line[2:].strip().replace("`", "")
    return ""


class Rewriter:
    def __init__(self, repo, out, pages, repo_url):
        self.repo, self.out, self.repo_url = repo, out, repo_url
        self.page_of = {}  # repo-relative source -> (lang, docname)
        for docname, _, srcs in pages:
            for lang in LANGS:
                if srcs[lang]:
                    self.page_of[srcs[lang]] = (lang, docname)
        self.images = set()  # repo-relative image paths to copy
        self.warnings = []

    def link(self, m, src, lang):
        bang, text, target, title = m.group(1), m.group(2), m.group(3), m.group(4) or ""
        if not target or SCHEME.match(target) or target.startswith("#"):
            return m.group(0)
        path, _, frag = target.partition("#")
        here = posixpath.dirname(src)
        repo_path = posixpath.normpath(posixpath.join(here, path))
        if repo_path.startswith(".."):
            self.warnings.append(f"{src}: link outside the repository: {target}")
            return text
        if bang:
            if os.path.isfile(os.path.join(self.repo, repo_path)):
                self.images.add(repo_path)
            else:
                self.warnings.append(f"{src}: missing image {target}")
            return m.group(0)
        if repo_path in self.page_of:
            to_lang, docname = self.page_of[repo_path]
            if to_lang == lang:
                rel = posixpath.relpath(docname + ".md", here or ".")
                return f"[{text}]({rel}{'#' + frag if frag else ''})"
            return f"[{text}](site:{to_lang}/{docname}.html)"
        if os.path.exists(os.path.join(self.repo, repo_path)):
            if self.repo_url:
                kind = "tree" if os.path.isdir(os.path.join(self.repo, repo_path)) else "blob"
                return f"[{text}]({self.repo_url}/{kind}/HEAD/{repo_path}{'#' + frag if frag else ''})"
            plain = text.replace("`", "")
            return text if repo_path in plain or posixpath.basename(repo_path) in plain \
                else f"{text} (`{repo_path}`)"
        self.warnings.append(f"{src}: link to a missing file {target}")
        return text

    def rewrite(self, text, src, lang):
        out, fence = [], None
        for line in text.splitlines(keepends=True):
            m = FENCE.match(line)
            if fence:
                if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                    fence = None
                out.append(line)
                continue
            if m:
                fence = m.group(1)
                out.append(line)
                continue
            # Inline code is masked so that a lambda's `[](int i)` is not a link.
            spans = []
            masked = CODE_SPAN.sub(lambda c: spans.append(c.group(0)) or f"\0{len(spans) - 1}\0", line)
            masked = LINK.sub(lambda l: self.link(l, src, lang), masked)
            # Links whose text was inline code: unmask inside the rewritten text too.
            out.append(re.sub(r"\0(\d+)\0", lambda c: spans[int(c.group(1))], masked))
        return "".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("out")
    ap.add_argument("--repo-url", default="")
    args = ap.parse_args()
    repo, out = os.path.abspath(args.repo), os.path.abspath(args.out)
    pages = find_pages(repo)
    rw = Rewriter(repo, out, pages, args.repo_url.rstrip("/"))
    for lang in LANGS:
        shutil.rmtree(os.path.join(out, lang), ignore_errors=True)
    listing = {lang: [] for lang in LANGS}
    for docname, kind, srcs in pages:
        for lang in LANGS:
            src = srcs[lang] or srcs["en"]
            with open(os.path.join(repo, src), encoding="utf-8") as f:
                text = f.read()
            if kind == "home":
                text = student_part(text)
            page_lang = "zh" if src.endswith(".zh-CN.md") else "en"
            text = rw.rewrite(text, src, page_lang)
            dest = os.path.join(out, lang, docname + ".md")
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "w", encoding="utf-8") as f:
                f.write(text)
            listing[lang].append({"docname": docname, "kind": kind, "source": src,
                                  "title": title_of(text), "time": time_estimate(text)})
    for lang in LANGS:
        entries = []
        for page in listing[lang][1:]:
            label = page["title"] or page["docname"]
            if page["time"]:
                label += f" ({page['time']})"
            label = label.replace("<", "‹").replace(">", "›")
            entries.append(f"{label} <{page['docname']}>")
        with open(os.path.join(out, lang, "index.md"), "a", encoding="utf-8") as f:
            f.write("\n```{toctree}\n:hidden:\n:maxdepth: 1\n\n" + "\n".join(entries) + "\n```\n")
    for img in sorted(rw.images):
        for lang in LANGS:
            dest = os.path.join(out, lang, img)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(os.path.join(repo, img), dest)
    for lang in LANGS:
        with open(os.path.join(out, lang, "pages.json"), "w", encoding="utf-8") as f:
            json.dump(listing[lang], f, ensure_ascii=False, indent=1)
    for w in rw.warnings:
        print("site: warning:", w, file=sys.stderr)


if __name__ == "__main__":
    main()
