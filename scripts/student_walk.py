#!/usr/bin/env python3
"""The student's walk through the course, as a test (stdlib only; any python3).

  scripts/student_walk.py [--keep] [--with-core]

Copies this tree (a git clone of it plus its uncommitted changes, every lab file
reset to its pristine version) into build/walk/tree, configures the student preset
there, and then:
  1. `tools/labs status` says every lab is "not started" and names a first TODO;
  2. `tools/labs grade N ...` over every lab of the build's labs.json: every lab fails;
  3. fills in one lab at a time from solutions/ and grades all the labs: exactly
     that lab flips to passing, every test of every other lab keeps its state;
     after course1, `tools/labs status` says course1 is "done";
  4. at the end every lab passes;
  5. puts a syntax error into course6's file: `tools/labs grade N ...` reports
     course6 "does not compile: <file:line ...>" and every other grade is unchanged.
With --release DIR, the walk starts from a clone of that student release (tools/labs
release) instead of this tree, and fills its labs from this tree's solutions/: what a
student of the release sees, lab by lab. With --with-core, steps 2 and 5 run `tools/labs grade` with no argument (core as
well): the core tests' objects cannot come from the cache (their compile line names
the tree), so this costs a few minutes more on a cold cache. --keep keeps the tree.
Uses ccache when it is installed (CMAKE_CXX_COMPILER_LAUNCHER, CCACHE_BASEDIR = this
tree, CCACHE_NOHASHDIR=1), so the student preset's objects of the main tree are reused.
Logs in build/walk/logs. Prints one line per step; exit 0 when every step holds.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WALK = ROOT / "build" / "walk"
TREE = WALK / "tree"
LOGS = WALK / "logs"
SYNTAX_ERROR = "  this is not C++;"


class WalkError(Exception):
    pass


def env():
    e = dict(os.environ)
    if shutil.which("ccache"):
        e.setdefault("CMAKE_CXX_COMPILER_LAUNCHER", "ccache")
        e.setdefault("CCACHE_BASEDIR", str(ROOT))
        e.setdefault("CCACHE_NOHASHDIR", "1")
    return e


def run(log, *cmd, cwd=TREE, check=True):
    """Runs cmd in the walk tree, output into LOGS/log.log; returns the output."""
    done = subprocess.run(cmd, cwd=cwd, env=env(), text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT)
    (LOGS / f"{log}.log").write_text(done.stdout, encoding="utf-8")
    if check and done.returncode != 0:
        raise WalkError(f"{' '.join(cmd)} failed (exit {done.returncode}); see "
                        f"{LOGS / (log + '.log')}:\n" + "\n".join(done.stdout.splitlines()[-15:]))
    return done.stdout


def git(*args, cwd=ROOT):
    return subprocess.run(["git", "-c", "user.name=student walk", "-c",
                           "user.email=walk@localhost", *args], cwd=cwd, check=True,
                          text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE).stdout


def copy_tree(release=None):
    """build/walk/tree: this tree as a fresh clone would have it, or a clone of the student
    release `release` (a repository written by tools/labs release)."""
    if TREE.exists():
        shutil.rmtree(TREE)
    TREE.parent.mkdir(parents=True, exist_ok=True)
    if release:
        git("clone", "--quiet", str(Path(release).resolve()), str(TREE))
        return
    has_git = shutil.which("git") and subprocess.run(
        ["git", "rev-parse", "--git-dir"], cwd=ROOT, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL).returncode == 0
    if has_git:
        git("clone", "--quiet", "--shared", str(ROOT), str(TREE))
        git("checkout", "--quiet", "--detach", git("rev-parse", "HEAD").strip(), cwd=TREE)
        # The uncommitted changes, so the walk tests the tree as it is now.
        changed = git("ls-files", "-z", "--modified", "--others", "--exclude-standard")
        for name in filter(None, changed.split("\0")):
            if (ROOT / name).is_file():
                (TREE / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, TREE / name)
        for name in filter(None, git("ls-files", "-z", "--deleted").split("\0")):
            (TREE / name).unlink(missing_ok=True)
    else:
        shutil.copytree(ROOT, TREE, ignore=shutil.ignore_patterns("build", ".git"))
    # Every lab file as shipped: its pristine version.
    pristine = WALK / "pristine"
    run("pristine", sys.executable, "tools/labs", "pristine", "--out", str(pristine))
    for path in pristine.rglob("*"):
        if path.is_file():
            shutil.copy2(path, TREE / path.relative_to(pristine))
    if has_git:
        git("add", "-A", cwd=TREE)
        git("commit", "--quiet", "--allow-empty", "-m", "the course as a student clones it",
            cwd=TREE)


def grade(log, *labs):
    """{label: {test name: passed?}} from `tools/labs grade`, and its output."""
    junit = WALK / "junit" / log
    if junit.exists():
        shutil.rmtree(junit)
    out = run(log, sys.executable, "tools/labs", "grade", *labs, "--junit", str(junit),
              check=False)
    out = "\n".join(l for l in out.splitlines() if " failing: " not in l)  # the table
    if "passed  status" not in out:
        raise WalkError(f"tools/labs grade printed no table; see {LOGS / (log + '.log')}:\n"
                        + "\n".join(out.splitlines()[-15:]))
    states = {}
    for xml in sorted(junit.glob("*.xml")):
        if xml.name == "all.xml":
            continue
        suite = ET.parse(xml).getroot()
        states[xml.stem] = {c.get("name"): c.get("status") == "run"
                            for c in suite.findall("testcase")}
    return states, out


def passes(state):
    return bool(state) and all(state.values())


def labs_in_build():
    """(lab directory, number) of every lab the configured student build declares, in
    number order: build/student/labs.json, which cmake/KuiperLab.cmake writes."""
    labs = json.loads((TREE / "build" / "student" / "labs.json").read_text(encoding="utf-8"))
    labs.sort(key=lambda lab: lab["number"])
    return [lab["dir"] for lab in labs], [str(lab["number"]) for lab in labs]


def status_lines(log):
    out = run(log, sys.executable, "tools/labs", "status")
    return {line.split()[0]: line for line in out.splitlines() if line.startswith("course")}, out


def main():
    keep = "--keep" in sys.argv[1:]
    with_core = "--with-core" in sys.argv[1:]
    release = sys.argv[sys.argv.index("--release") + 1] if "--release" in sys.argv[1:] else None
    LOGS.mkdir(parents=True, exist_ok=True)
    results = []

    started = time.monotonic()

    def step(name, ok, detail=""):
        took = f"[{time.monotonic() - started:5.0f} s] "
        print(f"{took}{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail and not ok else ''}",
              flush=True)
        results.append(ok)

    copy_tree(release)
    run("configure", "cmake", "--preset", "student")
    labs, numbers = labs_in_build()

    status, out = status_lines("status-fresh")
    bad = [l for l in status.values() if "not started" not in l or "next:" not in l]
    step(f"fresh tree: status says all {len(labs)} labs are not started, each with a next TODO",
         len(status) == len(labs) and not bad, "\n" + out)

    everything = [] if with_core else numbers  # tools/labs grade with no N adds core
    before, out = grade("grade-fresh", *everything)
    failing = [f"course{n}" for n in numbers if not passes(before.get(f"course{n}"))]
    step(f"fresh tree: {'core passes and ' if with_core else ''}every lab fails",
         (passes(before.get("core")) or not with_core) and len(failing) == len(labs),
         "\n" + out)

    for lab, n in zip(labs, numbers):
        solution = ROOT / "solutions" / lab / "src"  # the instructor's, also for a release
        for src in solution.rglob("*"):
            if src.is_file():  # copy, not copy2: a fresh mtime, as an editor would leave
                shutil.copy(src, TREE / lab / "src" / src.relative_to(solution))
        after, out = grade(f"grade-after-course{n}", *numbers)
        changed = [label for label in after if label != f"course{n}"
                   and after[label] != before.get(label)]
        step(f"course{n} filled from solutions/: it passes, no other lab's tests change state",
             passes(after.get(f"course{n}")) and not changed,
             f"course{n} passes: {passes(after.get(f'course{n}'))}, changed: {changed}\n{out}")
        before.update(after)
        if n == numbers[0]:
            status, out = status_lines(f"status-after-course{n}")
            step(f"status after course{n}: course{n} is done",
                 " done " in status.get(f"course{n}", "") and all(
                     "not started" in status[f"course{m}"] for m in numbers[1:]), "\n" + out)

    step("every lab passes once all are filled in",
         all(passes(before.get(f"course{n}")) for n in numbers))

    # A syntax error in course6's file: course6 alone stops compiling.
    target = next(lab for lab in labs if lab.startswith("course6_"))
    source = sorted((TREE / target / "src").glob("*.cpp"))[0]
    lines = source.read_text(encoding="utf-8").split("\n")
    at = next(i for i, line in enumerate(lines) if line.strip() == "// ---- your code begins ----")
    lines.insert(at + 1, SYNTAX_ERROR)
    source.write_text("\n".join(lines), encoding="utf-8")
    after, out = grade("grade-syntax-error", *everything)
    (WALK / "grade-syntax-error.txt").write_text(out, encoding="utf-8")
    rel = source.relative_to(TREE).as_posix()
    reported = re.search(rf"course6 .*does not compile: {re.escape(rel)}:{at + 2}: ", out)
    changed = [label for label in after if label != "course6" and after[label] != before.get(label)]
    step("syntax error in course6: course6 does not compile (file:line), other grades unchanged",
         bool(reported) and not changed
         and len(after) == len(labs) + with_core, f"changed: {changed}\n{out}")
    print(out.rstrip())

    if not keep:
        shutil.rmtree(TREE, ignore_errors=True)
    print(f"student walk: {sum(results)} passed, {len(results) - sum(results)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except WalkError as e:
        print(f"FAIL student walk: {e}")
        sys.exit(1)
