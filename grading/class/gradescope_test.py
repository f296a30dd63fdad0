#!/usr/bin/env python3
"""scripts/test.sh's Gradescope check: the autograder zip in a Gradescope-shaped folder.

Writes autograder.zip (tools/labs autograder gradescope), unpacks it into
$KUIPER_GRADING_SCRATCH/gradescope/source (default /tmp/kuiper-grading) as Gradescope
does, runs its setup.sh and then its run_autograder (AUTOGRADER_ROOT set there) for three
submissions:
the instructor's solutions (100 a lab), the skeletons (0) and the solutions with course 6
broken (100 a lab but course 6). Each results.json is checked against Gradescope's
documented format. The built root is reused by grade-class (class_test.sh).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "build" / "gradescope"
# Outside the instructor tree, which the graded code may not reach (grade-class reuses it).
AG = Path(os.environ.get("KUIPER_GRADING_SCRATCH", "/tmp/kuiper-grading")) / "gradescope"
BEGIN = "// ---- your code begins ----"
VISIBILITY = {"hidden", "after_due_date", "after_published", "visible"}


sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_class import labs as lab_dirs, skeleton, solution  # noqa: E402  (the same lab files)


def submission(kind):
    """{repo path: text} of every graded lab file: the solutions, the skeletons, or the
    solutions with course 6 broken."""
    files = {}
    for lab in lab_dirs():
        files.update(skeleton(lab) if kind == "skeleton" else solution(lab))
    if kind == "course6_broken":
        path = next(p for p in files if p.startswith("course6_") and BEGIN in files[p])
        files[path] = files[path].replace(BEGIN, BEGIN + "\n  this is not C++;", 1)
    return files


def validate(results, problems, where):
    """Gradescope's results.json: score, tests[] with name, score, max_score, output,
    visibility; the sum of the tests' scores is the score."""
    if not isinstance(results.get("score"), (int, float)):
        problems.append(f"{where}: no numeric score")
    tests = results.get("tests")
    if not isinstance(tests, list) or not tests:
        problems.append(f"{where}: no tests[]")
        return
    for t in tests:
        for key, kind in (("name", str), ("score", (int, float)), ("max_score", (int, float)),
                          ("output", str), ("visibility", str)):
            if not isinstance(t.get(key), kind):
                problems.append(f"{where}: test {t.get('name')!r}: {key} missing or not {kind}")
        if t.get("visibility") not in VISIBILITY:
            problems.append(f"{where}: test {t.get('name')!r}: visibility {t.get('visibility')!r}")
        if "(hidden)" in t.get("name", "") and t.get("visibility") != "after_published":
            problems.append(f"{where}: hidden test {t['name']!r} is not after_published")
    total = sum(t.get("score", 0) for t in tests)
    if abs(total - results.get("score", -1)) > 0.05:
        problems.append(f"{where}: tests sum to {total}, score is {results.get('score')}")


def main():
    for folder in (OUT, AG):
        if folder.exists():
            shutil.rmtree(folder)
    OUT.mkdir(parents=True)
    subprocess.run([sys.executable, str(ROOT / "tools" / "labs"), "autograder", "gradescope",
                    "--out", str(OUT)], check=True)
    source = AG / "source"
    source.mkdir(parents=True)
    with zipfile.ZipFile(OUT / "autograder.zip") as z:
        z.extractall(source)
        for info in z.infolist():
            os.chmod(source / info.filename, (info.external_attr >> 16) & 0o777 or 0o644)
    # Gradescope copies run_autograder to the root of the image.
    shutil.copy2(source / "run_autograder", AG / "run_autograder")
    env = dict(os.environ, AUTOGRADER_ROOT=str(AG))
    subprocess.run(["bash", str(source / "setup.sh")], check=True, env=env)
    labs = lab_dirs()
    expectations = {"solutions": 100 * len(labs), "skeleton": 0,
                    "course6_broken": 100 * (len(labs) - 1)}
    problems = []
    for kind, want in expectations.items():
        sub = AG / "submission"
        if sub.exists():
            shutil.rmtree(sub)
        for name, text in submission(kind).items():
            (sub / name).parent.mkdir(parents=True, exist_ok=True)
            (sub / name).write_text(text, encoding="utf-8")
        results_file = AG / "results" / "results.json"
        results_file.unlink(missing_ok=True)
        done = subprocess.run([str(AG / "run_autograder")], env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        (OUT / f"{kind}.log").write_text(done.stdout)
        if done.returncode != 0 or not results_file.exists():
            problems.append(f"{kind}: run_autograder failed (exit {done.returncode}); see "
                            f"{OUT / (kind + '.log')}")
            continue
        results = json.loads(results_file.read_text())
        shutil.copy2(results_file, OUT / f"{kind}.results.json")
        validate(results, problems, kind)
        score = results.get("score")
        if kind == "course6_broken":
            broken = [t for t in results["tests"] if t["name"].startswith("course6 ")]
            if not broken or not all("does not compile" in t["output"] for t in broken):
                problems.append(f"{kind}: course 6's entries do not say it does not compile")
        print(f"{kind}: {score} points (expected {want}), {results.get('execution_time')} s")
        if score is None or abs(score - want) > 0.01:
            problems.append(f"{kind}: {score} points, expected {want}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
