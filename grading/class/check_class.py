#!/usr/bin/env python3
"""Compares the grades.csv of `tools/labs grade-class` with make_class.py's expected.json.

  grading/class/check_class.py EXPECTED_JSON GRADES_CSV --tree GRADING_TREE

"wrong:<lab>/<variant>" expects 100 minus the share of the lab's hidden behaviours that
the variant's WRONG.md says it fails (`catches: test, test, ...`), from the rubric and the
grading tree's list of hidden tests. Prints one line per difference; exit 1 if any.
"""
import argparse
import csv
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import grading  # noqa: E402


def wrong_points(spec, rubric, plan):
    lab_dir, variant = spec.removeprefix("wrong:").split("/")
    text = (ROOT / "grading" / "wrong" / lab_dir / variant / "WRONG.md").read_text()
    m = re.search(r"^catches:\s*(.+)$", text, re.M)
    caught = {c.strip() for c in m.group(1).split(",")} if m else set()
    lab = next(l for l in plan["labs"] if l["dir"] == lab_dir)
    label = lab["label"]
    names = [f"{p['prefix']}.{t}" for p in lab["programs"] for t in p["tests"]]
    results = {}
    for name in names:
        short = name.split(".", 1)[1]
        results[name] = grading.Result(not (name in caught or short in caught))
    return grading.lab_points(grading.score_lab(rubric, label, results))[0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("expected")
    parser.add_argument("grades")
    parser.add_argument("--tree", required=True)
    args = parser.parse_args()
    rubric = grading.load_rubric()
    plan = json.loads((Path(args.tree) / "build" / "grading" / "grading-plan.json").read_text())
    expected = json.loads(Path(args.expected).read_text())
    with open(args.grades, newline="") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    problems = []
    for student, want in sorted(expected.items()):
        row = rows.get(student)
        if row is None:
            problems.append(f"{student}: not in {args.grades}")
            continue
        total = 0.0
        for label, points in want["points"].items():
            if isinstance(points, str):
                points = wrong_points(points, rubric, plan)
            total += points
            got = float(row.get(label, "nan"))
            if abs(got - points) > 0.011:
                problems.append(f"{student} {label}: {got:g} points, expected {points:g} "
                                f"({want['why']})")
        if abs(float(row["total"]) - total) > 0.05:
            problems.append(f"{student} total: {row['total']}, expected {total:g}")
    for student in sorted(set(rows) - set(expected)):
        problems.append(f"{student}: graded but not expected")
    for p in problems:
        print(p)
    print(f"class check: {len(expected)} submissions, {len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
