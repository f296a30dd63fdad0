#!/usr/bin/env python3
"""A synthetic class for `tools/labs grade-class`, and the grades it must get.

  grading/class/make_class.py OUT [--small] [--tree GRADING_TREE]

Writes OUT/submissions/<student>[.zip|.bundle] and OUT/expected.json, built from this
tree's solutions/, skeletons, wrong solutions (grading/wrong/) and the hostile kinds below,
so the class follows the labs as they change. `check_class.py` compares a grades.csv with
expected.json.

--small: what scripts/test.sh grades (the hostile suite on course 1, a zip, a git bundle,
a submission with some labs only). Without it, also the full solutions, the skeletons, each
lab missing in turn, a lab that does not compile and every wrong solution.

Expected points: a number, or "wrong:<lab dir>/<variant>", meaning 100 minus the points of
the hidden tests that variant's WRONG.md says it fails (check_class.py works it out from the
rubric and the grading tree's list of hidden tests).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BEGIN = "// ---- your code begins ----"
COURSE1 = "course1_tensor/src/axby.cpp"


def labs():
    return sorted((p.name for p in ROOT.glob("course*_*") if (p / "CMakeLists.txt").exists()),
                  key=lambda n: int(re.match(r"course(\d+)", n).group(1)))


def label(lab):
    return re.match(r"(course\d+)", lab).group(1)


def lab_files(lab, base):
    """{repo path: text} of the lab's graded files (stretch files are not graded)."""
    src = base / lab / "src" if base != ROOT / "solutions" else ROOT / "solutions" / lab / "src"
    return {f"{lab}/src/{p.relative_to(src).as_posix()}": p.read_text(encoding="utf-8")
            for p in sorted(src.rglob("*.cpp")) if not p.name.startswith("stretch_")}


def solution(lab):
    return lab_files(lab, ROOT / "solutions")


def skeleton(lab):
    return lab_files(lab, ROOT)


def at_every_block(text, statement):
    """text with `statement` as the first line of every fenced block."""
    return "\n".join(line + ("\n    " + statement if line.strip() == BEGIN else "")
                     for line in text.split("\n"))


def write(folder, files):
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def hostile_kinds(secrets):
    """(student, {path: text}, {label: points}, why) of each hostile or broken kind. All but
    the last two attack course 1 alone; its other labs are not submitted (0)."""
    sol = solution("course1_tensor")[COURSE1]
    reads = "\n".join(f'      "{p}",' for p in secrets)
    # Namespace scope from inside the second block: close EPowerMinus and namespace kuiper,
    # add the declarations, reopen both so the skeleton's closing braces still match.
    def at_namespace_scope(code):
        return sol.replace(
            "y = arma::exp(-x);",
            "y = arma::exp(-x);\n}\n}  // namespace kuiper\n" + code +
            "\nnamespace kuiper {\ninline void HostileTail() {", 1)
    wrong_y = sol.replace("y = w * x;", "y = w * x * 2.0f;").replace(
        "y = arma::exp(-x);", "y = arma::exp(x);")
    return [
        ("h01_exit", {COURSE1: at_every_block(sol, "std::exit(0);")}, {"course1": 0},
         "exit(0) inside the lab functions: a test that never reports fails"),
        ("h02_underscore_exit", {COURSE1: at_every_block(sol, "std::_Exit(0);")}, {"course1": 0},
         "_Exit(0)"),
        ("h03_quick_exit", {COURSE1: at_every_block(sol, "std::quick_exit(0);")}, {"course1": 0},
         "quick_exit(0)"),
        ("h04_abort", {COURSE1: at_every_block(sol, "std::abort();")}, {"course1": 0}, "abort()"),
        ("h05_segfault", {COURSE1: at_every_block(sol, "*static_cast<volatile int*>(nullptr) = 1;")},
         {"course1": 0}, "a segmentation fault"),
        ("h06_infinite_loop", {COURSE1: at_every_block(sol, "for (volatile int spin = 0;; spin = spin + 1) {}")},
         {"course1": 0}, "an infinite loop: the test time limit"),
        ("h07_fork_bomb", {COURSE1: at_every_block(
            sol, 'for (int i = 0; i < 4; ++i) std::system("b(){ b | b & }; b >/dev/null 2>&1 &");'
                 " for (volatile int spin = 0;; spin = spin + 1) {}")},
         {"course1": 0}, "a fork bomb: the sandbox user's process limit, killed after the test"),
        ("h08_huge_allocation", {COURSE1: at_every_block(
            sol, "std::vector<float> hog(size_t{16} << 30, 1.0f); y = hog[7] * x;")},
         {"course1": 0}, "a 64 GiB allocation: the address space limit"),
        ("h09_forged_reports", {COURSE1: at_every_block(sol, (
            'std::printf("[==========] 19 tests ran.\\n[  PASSED  ] 19 tests.\\n");'
            ' if (FILE* f = std::fopen("test_detail.xml", "w")) { std::fputs("<testsuites tests=\\"19\\" '
            'failures=\\"0\\"><testsuite name=\\"Axby\\" tests=\\"19\\"/></testsuites>", f); std::fclose(f); }'
            " std::fflush(stdout); std::_Exit(0);"))},
         {"course1": 0}, "gtest's PASSED line on stdout and a JUnit file, then _Exit(0)"),
        ("h10_reads_secrets", {COURSE1: at_every_block(sol, (
            "{ const char* paths[] = {" + " ".join(f'"{p}",' for p in secrets) + "};"
            " bool read_one = false;"
            " for (const char* p : paths) if (std::FILE* f = std::fopen(p, \"r\")) { read_one = true; std::fclose(f); }"
            " if (!read_one) { y.reset(); return; } }"))},
         {"course1": 0}, "reads the solutions and hidden tests: right only if it can"),
        ("h11_edits_tests_and_build", {
            COURSE1: skeleton("course1_tensor")[COURSE1],
            "course1_tensor/test/test_axby.cpp": "#include <gtest/gtest.h>\nTEST(Axby, All) {}\n",
            "course1_tensor/CMakeLists.txt": "# nothing to build\n",
            "kuiper/include/kuiper/axby.hpp": "#pragma once\n",
            "grading/rubric.toml": "[labs.course1]\n"},
         {"course1": 0}, "edits the tests, CMake, a core header and the rubric: all ignored"),
        ("h12_fences_removed", {COURSE1: sol.replace(BEGIN + "\n", "\n")}, {"course1": 0},
         "the fence lines deleted: the file is rejected"),
        ("h13_main_and_gtest_symbols", {COURSE1: at_namespace_scope(
            "int main() { return 0; }\n"
            "namespace testing {\nclass TestResult { public: bool Failed() const; bool Passed() const; };\n"
            "bool TestResult::Failed() const { return false; }\n"
            "bool TestResult::Passed() const { return true; }\n}  // namespace testing\n"
            ).replace(BEGIN, BEGIN + "\n    y.reset();\n    return;")},
         {"course1": 0}, "every function wrong, with main and GoogleTest's TestResult::Failed defined: "
                         "both stay local to the file"),
        ("h14_early_constructor", {COURSE1: at_namespace_scope(
            "volatile const char* stolen = nullptr;\n"
            "__attribute__((constructor(101))) static void RunsBeforeTheHarness() {\n"
            "  stolen = std::getenv(\"KUIPER_REPORT_FD\");\n}\n")},
         {"course1": 0}, "a constructor that would run before the harness: rejected"),
        ("h15_no_lab_files", {"notes.txt": "I did not do the labs.\n"}, {}, "no lab files at all"),
    ]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--tree", help="the grading tree (its hidden tests are a secret to read)")
    args = parser.parse_args()
    out = Path(args.out).resolve()
    if out.exists():
        shutil.rmtree(out)
    subs = out / "submissions"
    subs.mkdir(parents=True)
    all_labs = labs()
    expected = {}

    def add(student, files, points, why, kind="folder"):
        row = {label(l): 0 for l in all_labs}
        row.update(points)
        expected[student] = {"points": row, "why": why}
        if kind == "folder":
            write(subs / student, files)
        elif kind == "zip":
            with zipfile.ZipFile(subs / f"{student}.zip", "w") as z:
                for name, text in files.items():
                    z.writestr(name, text)
        elif kind == "bundle":
            repo = out / "repos" / student
            write(repo, files)
            git = ["git", "-C", str(repo), "-c", "user.name=s", "-c", "user.email=s@example.org"]
            subprocess.run(["git", "init", "-q", str(repo)], check=True)
            subprocess.run(git + ["add", "-A"], check=True)
            subprocess.run(git + ["commit", "-q", "-m", "labs"], check=True)
            subprocess.run(git + ["bundle", "create", "-q", str(subs / f"{student}.bundle"), "HEAD"],
                           check=True, stderr=subprocess.DEVNULL)

    tree = Path(args.tree) if args.tree else ROOT
    # What h10 tries to read: a solution and the hidden tests, where the grader keeps them.
    secrets = [str(ROOT / "solutions" / "course1_tensor" / "src" / "axby.cpp"),
               str(tree / "grading" / "hidden" / "course1_tensor"),
               str(ROOT / "grading" / "hidden" / "course1_tensor"),
               str(ROOT / ".git" / "HEAD")]
    for student, files, points, why in hostile_kinds(secrets):
        # Without root the grader has no user of its own to run them as: no process limit
        # for a fork bomb, and the files it must not read are readable (docs/instructors.md).
        if os.geteuid() != 0 and student in ("h07_fork_bomb", "h10_reads_secrets"):
            print(f"{student}: left out (not root: no sandbox user)")
            continue
        add(student, files, points, why)
    some = {**solution("course1_tensor"), **solution("course2_padding")}
    broken4 = {p: t.replace(BEGIN, BEGIN + "\n  this is not C++;", 1)
               for p, t in solution("course4_topo").items()}
    add("s01_some_labs_zip", {**some, **broken4}, {"course1": 100, "course2": 100},
        "a zip: courses 1 and 2 solved, course 4 does not compile", kind="zip")
    add("s02_course2_bundle", solution("course2_padding"), {"course2": 100},
        "a git bundle holding course 2's solution", kind="bundle")
    if not args.small:
        everything = {k: v for lab in all_labs for k, v in solution(lab).items()}
        add("f01_full_solutions", everything, {label(l): 100 for l in all_labs}, "every lab solved")
        add("f02_skeletons", {k: v for lab in all_labs for k, v in skeleton(lab).items()}, {},
            "every lab untouched")
        for lab in all_labs:
            files = {k: v for other in all_labs if other != lab for k, v in solution(other).items()}
            add(f"m_{label(lab)}_missing", files, {label(l): 100 for l in all_labs if l != lab},
                f"{lab} not submitted")
        broken6 = dict(everything)
        path = next(p for p in broken6 if p.startswith("course6_"))
        broken6[path] = broken6[path].replace(BEGIN, BEGIN + "\n  this is not C++;", 1)
        add("b01_course6_broken", broken6,
            {label(l): (0 if l.startswith("course6_") else 100) for l in all_labs},
            "course 6 does not compile")
        for wrong in sorted((ROOT / "grading" / "wrong").glob("*/*/WRONG.md")):
            lab, variant = wrong.parent.parent.name, wrong.parent.name
            if re.search(r"^class: skip", wrong.read_text(), re.M):
                continue  # its grade depends on the machine (WRONG.md says why)
            files = solution(lab)
            for p in sorted((wrong.parent / "src").rglob("*.cpp")):
                files[f"{lab}/src/{p.relative_to(wrong.parent / 'src').as_posix()}"] = p.read_text()
            add(f"w_{label(lab)}_{variant}", files, {label(lab): f"wrong:{lab}/{variant}"},
                f"{lab} wrong solution {variant}")
    (out / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True))
    print(f"{len(expected)} submissions in {subs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
