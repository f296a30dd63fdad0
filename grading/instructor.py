"""Instructor-only commands of tools/labs: the student release, the rubric check, the
Gradescope autograder and the grading of a whole class. Not in the student release.

docs/instructors.md is the guide; tools/grading.py holds what students run as well
(rubric, test runner, scores).

How a submission is graded (grade_submission):
  1. Only the lab files are taken (course*/src/... at the repository's paths, or by their
     unique file name); every other file is ignored and listed in the report.
  2. Only the fenced blocks of a lab file are taken: they are spliced into the pristine
     skeleton, so edits outside the fences (signatures, includes, tests) are ignored and
     reported. A file whose fences do not match the skeleton's is rejected.
  3. Each file is compiled alone, as the sandbox user (who cannot read the hidden tests or
     any solution), with the compile line of the pristine build. The object keeps global
     only the strong symbols the skeleton's object defines (objcopy), so it cannot replace
     a function of the C library, GoogleTest or the harness; an object that would run code
     before the harness starts (prioritised constructors) is rejected.
  4. It is linked into the lab's public and hidden test programs beside the prebuilt
     objects, the programs are made read-only to the sandbox user, and tools/grading.py
     runs them under limits and reads the results from the private report channel.
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import grading  # noqa: E402  (tools/grading.py)

ROOT = grading.ROOT
MAX_FILE_BYTES = 1 << 20


def labs_module():
    """tools/labs as a module (fences, pristine copies, errors)."""
    from importlib.machinery import SourceFileLoader
    import importlib.util
    loader = SourceFileLoader("labs_tool", str(ROOT / "tools" / "labs"))
    spec = importlib.util.spec_from_loader("labs_tool", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


LABS = labs_module()


def run(cmd, cwd=None, log=None, env=None, check=True):
    done = subprocess.run(cmd, cwd=cwd, env=env, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT)
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"$ {' '.join(map(str, cmd))}\n{done.stdout}\n")
    if check and done.returncode != 0:
        raise grading.GradingError(f"{' '.join(map(str, cmd))} failed (exit {done.returncode}):\n"
                                   + "\n".join(done.stdout.splitlines()[-20:]))
    return done


# ---- the grading tree: a pristine tree built once, reused by every submission ----------
# What an instructor's tree holds that no submission may see at run time, and what a
# grading tree leaves out altogether.
SECRET_DIRS = ("solutions", "grading")
NOT_IN_GRADING_TREE = ("solutions", "build", ".git", "grading/wrong", "grading/mutants",
                       "grading/class")


def copy_tree(src, dst, leave_out):
    """Copies the tracked and untracked-but-not-ignored files of src into dst, without the
    paths in leave_out (prefixes relative to src)."""
    listing = LABS.git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=src)
    if listing is None:
        names = [p.relative_to(src).as_posix() for p in Path(src).rglob("*") if p.is_file()]
    else:
        names = [n for n in listing.decode().split("\0") if n]
    for name in names:
        if any(name == p or name.startswith(p + "/") for p in leave_out):
            continue
        source = Path(src) / name
        if not source.is_file() or source.is_symlink():
            continue
        target = Path(dst) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def configure_args(build, tree):
    args = ["cmake", "-S", str(tree), "-B", str(build), "-G", "Ninja",
            "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG",
            "-DKUIPER_SOLUTIONS=OFF", "-DKUIPER_HIDDEN=ON", "-DKUIPER_LABS_ONLY=ON"]
    if shutil.which("ccache"):
        args.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
    return args


def setup_grading_tree(tree, jobs=2, log=None):
    """Builds tree (a pristine tree with grading/hidden) in tree/build/grading and writes
    the plan every submission follows: per lab, its files' compile lines, the link lines of
    its programs and the names of their tests (listed from the pristine programs, which
    hold no student code). Then hides grading/ from everyone but its owner. Returns the plan."""
    tree = Path(tree).resolve()
    build = tree / "build" / "grading"
    env = dict(os.environ, CCACHE_BASEDIR=str(tree), CCACHE_NOHASHDIR="1")
    run(configure_args(build, tree), log=log, env=env)
    labs = json.loads((build / "labs.json").read_text())
    targets = ["kuiper_core"]
    for lab in labs:
        targets.append(lab["target"])
        if (tree / "grading" / "hidden" / lab["dir"]).is_dir():
            targets.append(lab["target"] + "_hidden")
    run(["cmake", "--build", str(build), "-j", str(jobs), "--target", *targets], log=log, env=env)
    commands = json.loads((build / "compile_commands.json").read_text())
    plan = {"tree": str(tree), "build": str(build), "labs": []}
    for lab in sorted(labs, key=lambda l: l["number"]):
        entry = {"label": lab["label"], "dir": lab["dir"], "number": lab["number"],
                 "sources": [], "programs": []}
        for source in lab["sources"]:
            path = tree / lab["dir"] / source
            compile_entry = next(c for c in commands if Path(c["file"]) == path
                                 and f"/{lab['target']}_objects.dir/" in c["command"])
            argv = shlex.split(compile_entry["command"])
            obj = argv[argv.index("-o") + 1]
            keep = run(["nm", "-g", "--defined-only", "--format=posix", str(build / obj)]).stdout
            entry["sources"].append({
                "path": f"{lab['dir']}/{source}", "argv": argv, "object": obj,
                "directory": compile_entry["directory"],
                "keep_global": sorted({line.split()[0] for line in keep.splitlines() if line})})
        for target, prefix in ((lab["target"], lab["label"]),
                               (lab["target"] + "_hidden", lab["label"] + "_hidden")):
            if target not in targets:
                continue
            lines = run(["ninja", "-C", str(build), "-t", "commands", f"bin/{target}"]).stdout
            link = next(part.strip() for part in lines.strip().splitlines()[-1].split(" && ")
                        if f" -o bin/{target} " in part)
            tests = grading.list_tests(build / "bin" / target)
            entry["programs"].append({"target": target, "prefix": prefix,
                                      "link": shlex.split(link), "tests": tests})
        plan["labs"].append(entry)
    (build / "grading-plan.json").write_text(json.dumps(plan, indent=1))
    protect(tree)
    return plan


def protect(tree):
    """Makes the paths no submission may read (solutions, hidden tests, wrong solutions)
    readable by their owner alone, and the build readable by everyone (the sandbox user
    runs its programs and reads the test data)."""
    for name in SECRET_DIRS:
        path = Path(tree) / name
        if path.exists():
            os.chmod(path, 0o700)
    for path in [Path(tree), *Path(tree).parents]:
        mode = path.stat().st_mode
        if not mode & stat.S_IXOTH:
            os.chmod(path, mode | stat.S_IXOTH)  # the sandbox must reach the build and data


def load_plan(tree):
    return json.loads((Path(tree) / "build" / "grading" / "grading-plan.json").read_text())


# ---- taking a submission ------------------------------------------------------------------
@dataclass
class Taken:
    files: dict = field(default_factory=dict)   # lab path -> text
    ignored: list = field(default_factory=list)  # what was left out, and why


def read_submission(source, plan, scratch):
    """The lab files of a submission (a folder, a .zip or a git bundle) and what was
    ignored. Symbolic links are never followed; files over 1 MiB are ignored."""
    source = Path(source)
    if source.is_dir():
        root = source
    elif source.suffix == ".zip":
        root = Path(scratch) / "unpacked"
        root.mkdir(parents=True)
        with zipfile.ZipFile(source) as z:
            for info in z.infolist():
                name = info.filename
                is_link = (info.external_attr >> 16) & 0o170000 == 0o120000
                if info.is_dir() or is_link or name.startswith("/") or ".." in Path(name).parts:
                    continue
                if info.file_size > MAX_FILE_BYTES:
                    continue
                target = root / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(z.read(info))
    elif source.suffix == ".bundle":
        root = Path(scratch) / "unpacked"
        run(["git", "clone", "--quiet", "--no-checkout", str(source), str(root)])
        run(["git", "-c", "core.symlinks=false", "checkout", "--quiet", "HEAD", "--", "."],
            cwd=root, check=False)
        shutil.rmtree(root / ".git", ignore_errors=True)
    else:
        raise grading.GradingError(f"{source}: not a folder, a .zip or a git bundle (.bundle)")
    wanted = {s["path"]: lab for lab in plan["labs"] for s in lab["sources"]}
    by_name = {}
    for path in wanted:
        by_name.setdefault(Path(path).name, []).append(path)
    taken = Taken()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        for filename in sorted(filenames):
            full = Path(dirpath) / filename
            name = full.relative_to(root).as_posix()
            if full.is_symlink():
                taken.ignored.append(f"{name} (a symbolic link)")
                continue
            lab_path = name if name in wanted else None
            if lab_path is None and len(by_name.get(filename, [])) == 1:
                lab_path = by_name[filename][0]  # uploaded without its folders
            if lab_path is None:
                taken.ignored.append(f"{name} (not a lab file)")
            elif full.stat().st_size > MAX_FILE_BYTES:
                taken.ignored.append(f"{name} (over 1 MiB)")
            elif lab_path in taken.files:
                taken.ignored.append(f"{name} (a second copy of {lab_path})")
            else:
                taken.files[lab_path] = full.read_bytes().decode("utf-8", "replace")
    return taken


def splice(skeleton, submitted, path):
    """The skeleton with the submitted file's fenced blocks in place of its own, and the
    notes on what was ignored. Raises GradingError when the fences differ."""
    ours = LABS.fenced_blocks(skeleton)
    theirs = LABS.fenced_blocks(submitted)
    markers = [l.strip() for l in submitted.split("\n") if l.strip() in (LABS.BEGIN, LABS.END)]
    if markers != [LABS.BEGIN, LABS.END] * len(ours):
        raise grading.GradingError(f"{path}: the fence lines were changed ({len(theirs)} "
                                   f"fenced blocks, the skeleton has {len(ours)})")
    lines = skeleton.split("\n")
    out, last = [], 0
    for (begins, body), (_, new_body) in zip(ours, theirs):
        end = body[-1][0] if body else begins  # last body line (1-based) or the begins line
        out += lines[last:begins]
        out += [text for _, text in new_body]
        last = end if body else begins
    out += lines[last:]
    notes = []
    try:
        outside_same = _outside(skeleton) == _outside(submitted)
    except Exception:  # noqa: BLE001  (malformed fences were caught above)
        outside_same = False
    if not outside_same:
        notes.append(f"{path}: edits outside the fenced blocks were ignored")
    return "\n".join(out), notes


def _outside(text):
    kept, inside = [], False
    for line in text.split("\n"):
        marker = line.strip()
        if marker == LABS.BEGIN:
            inside = True
        elif marker == LABS.END:
            inside = False
        elif not inside:
            kept.append(line.rstrip())
    return kept


# ---- grading one submission -----------------------------------------------------------------
@dataclass
class LabReport:
    label: str
    title: str
    scores: list
    problem: str | None = None  # why the lab earned nothing without running (missing, compile)
    notes: list = field(default_factory=list)


@dataclass
class Report:
    student: str
    labs: list
    ignored: list
    seconds: float = 0.0

    def points(self, label):
        lab = next(l for l in self.labs if l.label == label)
        return grading.lab_points(lab.scores)[0]

    @property
    def total(self):
        return round(sum(self.points(l.label) for l in self.labs), 2)


FORBIDDEN_SECTIONS = re.compile(r"\.(init_array|fini_array|ctors|dtors)\.\d+|\.preinit_array")


def _as_sandbox(sandbox, cmd, cwd, timeout, log):
    """Runs a build command as the sandbox user, under limits; returns (status, output)."""
    user = {} if sandbox.uid is None else {"user": sandbox.uid, "group": sandbox.gid,
                                            "extra_groups": []}
    wrapped = ["prlimit", "--as=" + str(4 << 30), "--fsize=" + str(256 << 20), "--core=0",
               "--", *cmd]
    try:
        done = subprocess.run(wrapped, cwd=cwd, text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=timeout, start_new_session=True,
                              env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}, **user)
        status, output = done.returncode, done.stdout
    except subprocess.TimeoutExpired as e:
        status, output = -9, (e.stdout or "") + f"\n(over the {timeout} s limit)"
        if sandbox.uid is not None:
            grading.kill_uid(sandbox.uid)
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"$ {' '.join(cmd)}\n{output}\n")
    return status, output


def _first_error(output):
    for line in output.splitlines():
        m = LABS.COMPILER_ERROR.match(line)
        if m:
            return f"{Path(m['file']).name}:{m['line']}: {m['message']}"
    for line in output.splitlines():
        if "error" in line.lower() or "undefined reference" in line:
            return line.strip()[:300]
    return output.strip().splitlines()[-1][:300] if output.strip() else "unknown error"


def _chown_tree(path, uid, gid):
    for dirpath, dirnames, filenames in os.walk(path):
        os.chown(dirpath, uid, gid)
        for name in filenames:
            os.chown(os.path.join(dirpath, name), uid, gid, follow_symlinks=False)


def grade_submission(plan, rubric, student, source, work, slot=0, labels=None, build_jobs=1):
    """Grades one submission; returns a Report. work: a scratch folder of its own.
    build_jobs: labs compiled at once (the tests then run one program at a time)."""
    started = time.monotonic()
    work = Path(work)
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    os.chmod(work, 0o711)
    inbox = work / "inbox"
    inbox.mkdir()
    os.chmod(inbox, 0o700)
    try:
        taken = read_submission(source, plan, inbox)
    except (grading.GradingError, zipfile.BadZipFile, OSError) as e:
        taken = Taken(ignored=[f"the submission could not be read: {e}"])
    shutil.rmtree(inbox, ignore_errors=True)
    sandbox = grading.sandbox_for(slot, work / "sandbox")
    build = Path(plan["build"])
    tree = Path(plan["tree"])
    log = work / "build.log"
    for d in ("src", "obj", "bin"):
        (work / d).mkdir()
        if sandbox.uid is not None:
            os.chown(work / d, sandbox.uid, sandbox.gid)
    chosen = [lab for lab in plan["labs"] if not labels or lab["label"] in labels]
    reports = [LabReport(lab["label"], rubric.labs.get(lab["label"], {}).get("title", lab["dir"]),
                         []) for lab in chosen]

    def build_one(lab, report):
        if not any(s["path"] in taken.files for s in lab["sources"]):
            return "no files submitted for this lab"
        return _build_lab(lab, taken, tree, build, sandbox, work, report,
                          work / f"build-{lab['label']}.log")

    with ThreadPoolExecutor(max_workers=build_jobs) as pool:
        problems = list(pool.map(build_one, chosen, reports))
    if os.geteuid() == 0:  # no new program can be put beside the built ones
        os.chown(work / "bin", 0, 0)
        os.chmod(work / "bin", 0o755)
    for lab, report, problem in zip(chosen, reports, problems):
        report.problem = problem
        expected = {f"{p['prefix']}.{t}": None for p in lab["programs"] for t in p["tests"]}
        failed = {name: grading.Result(False) for name in expected}
        if report.problem:
            report.scores = grading.score_lab(rubric, lab["label"], failed, report.problem)
            continue
        results = {}
        for program in lab["programs"]:
            exe = work / "bin" / program["target"]
            run_dir = sandbox.run_dir / program["target"]
            run_dir.mkdir(exist_ok=True)
            if sandbox.uid is not None:
                os.chown(run_dir, sandbox.uid, sandbox.gid)
            one = grading.Sandbox(run_dir, sandbox.uid, sandbox.gid)
            got = grading.run_program(exe, program["tests"], limits=rubric.limits, sandbox=one,
                                      log=work / f"{program['target']}.log")
            results.update({f"{program['prefix']}.{t}": r for t, r in got.items()})
        report.scores = grading.score_lab(rubric, lab["label"], results)
    if sandbox.uid is not None:
        grading.kill_uid(sandbox.uid)
    return Report(student, reports, taken.ignored, round(time.monotonic() - started, 1))


def _build_lab(lab, taken, tree, build, sandbox, work, report, log):
    """Compiles and links the lab's programs for this submission; returns None or why the
    lab earns nothing."""
    src_dir, obj_dir, bin_dir = work / "src", work / "obj", work / "bin"
    objects = {}
    for source in lab["sources"]:
        skeleton = (tree / source["path"]).read_text(encoding="utf-8")
        if source["path"] in taken.files:
            try:
                text, notes = splice(skeleton, taken.files[source["path"]], source["path"])
            except grading.GradingError as e:
                return str(e)
            report.notes += notes
        else:
            text = skeleton
            report.notes.append(f"{source['path']}: not submitted; the skeleton was used")
        target = src_dir / source["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        objects[source["object"]] = obj_dir / (source["path"].replace("/", "__") + ".o")
    if sandbox.uid is not None:
        _chown_tree(src_dir / lab["dir"], sandbox.uid, sandbox.gid)
    for source in lab["sources"]:
        argv = list(source["argv"])
        argv[argv.index("-o") + 1] = str(objects[source["object"]])
        argv[argv.index("-c") + 1] = str(src_dir / source["path"])
        status, output = _as_sandbox(sandbox, argv, source["directory"], 300, log)
        if status != 0:
            return f"does not compile: {_first_error(output)}"
        obj = objects[source["object"]]
        sections = run(["objdump", "-h", str(obj)]).stdout
        if FORBIDDEN_SECTIONS.search(sections):
            return (f"{source['path']}: rejected: it runs code before the test harness starts "
                    f"(a constructor with a priority, or an init section of its own)")
        # Strong global symbols the skeleton does not define become local. Weak and unique
        # ones (inline functions, template instances) stay: they live in COMDAT groups that
        # the linker keeps once for the whole program, and a weak definition never displaces
        # a strong one.
        strong = run(["nm", "-g", "--defined-only", "--format=posix", str(obj)]).stdout
        keep = set(source["keep_global"])
        extra = sorted({line.split()[0] for line in strong.splitlines()
                        if len(line.split()) > 1 and line.split()[1] in "TDBRGSA"
                        and line.split()[0] not in keep})
        if extra:
            localize = obj.with_suffix(".localize")
            localize.write_text("\n".join(extra) + "\n")
            run(["objcopy", f"--localize-symbols={localize}", str(obj)])
    for program in lab["programs"]:
        argv = [str(objects.get(a, a)) for a in program["link"]]
        argv[argv.index("-o") + 1] = str(bin_dir / program["target"])
        status, output = _as_sandbox(sandbox, argv, str(build), 300, log)
        if status != 0:
            return f"does not link: {_first_error(output)}"
    for program in lab["programs"]:  # the tested code cannot rewrite a program
        path = bin_dir / program["target"]
        if os.geteuid() == 0:
            os.chown(path, 0, 0)
        os.chmod(path, 0o755)
    return None



# ---- reports ---------------------------------------------------------------------------------
def report_text(report, rubric):
    out = io.StringIO()
    print(f"student: {report.student}", file=out)
    print(f"total: {report.total:g} / {100 * len(report.labs)}  ({report.seconds:g} s)", file=out)
    for lab in report.labs:
        grading.print_lab(lab.label, lab.title, lab.scores, lab.problem, out=out)
        for note in lab.notes:
            print(f"  note: {note}", file=out)
    if report.ignored:
        print("ignored files:", file=out)
        for name in report.ignored:
            print(f"  {name}", file=out)
    return out.getvalue()


def gradescope_results(report, rubric):
    """Gradescope's results.json: one entry per behaviour; hidden behaviours are shown
    after the grades are published, without their tests."""
    tests = []
    for lab in report.labs:
        for s in lab.scores:
            b = s.behaviour
            if lab.problem:
                output = f"{lab.label}: {lab.problem}"
            elif b.hidden:
                output = f"hidden: {s.passed} of {s.total} passed, worth {b.points:g} points"
            else:
                output = f"{s.passed} of {s.total} tests passed."
                for test, why in s.failing[:5]:
                    output += f"\n{test}: {grading.describe_failure(why)}"
            entry = {"name": f"{lab.label} {b.name}" + (" (hidden)" if b.hidden else ""),
                     "score": s.points, "max_score": 0 if b.bonus else b.points,
                     "output": output,
                     "visibility": "after_published" if b.hidden else "visible"}
            if lab.notes and s is lab.scores[0]:
                entry["output"] += "\n" + "\n".join(lab.notes)
            tests.append(entry)
    results = {"score": report.total, "tests": tests, "visibility": "visible",
               "stdout_visibility": "hidden", "execution_time": int(report.seconds)}
    if report.ignored:
        results["output"] = "Ignored files: " + ", ".join(report.ignored[:50])
    return results


def grade_folder(plan, rubric, submissions, work, jobs, labels=None):
    """Grades every entry of the folder `submissions` (folders, .zip, .bundle), `jobs` at a
    time, each in a sandbox slot of its own. Returns [Report] sorted by student."""
    from queue import Queue
    entries = sorted(p for p in Path(submissions).iterdir()
                     if p.is_dir() or p.suffix in (".zip", ".bundle"))
    slots = Queue()
    for slot in range(jobs):
        slots.put(slot)

    def one(entry):
        slot = slots.get()
        try:
            student = entry.stem if entry.is_file() else entry.name
            return grade_submission(plan, rubric, student, entry, Path(work) / "students" / student,
                                    slot=slot, labels=labels)
        finally:
            slots.put(slot)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        reports = list(pool.map(one, entries))
    return sorted(reports, key=lambda r: r.student)


def write_csv(reports, path):
    labels = [lab.label for lab in reports[0].labs] if reports else []
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["student", *labels, "total"])
        for r in reports:
            out.writerow([r.student, *(f"{r.points(l):g}" for l in labels), f"{r.total:g}"])


def grading_tree_for_class(work, jobs, log):
    """A grading tree of this instructor tree at work/tree, built (incrementally) and
    planned. The instructor tree itself becomes reachable by its owner alone, since the
    sandbox user must not read solutions/, grading/ or the git history."""
    tree = Path(work) / "tree"
    tree.mkdir(parents=True, exist_ok=True)
    copy_tree(ROOT, tree, NOT_IN_GRADING_TREE)
    return setup_grading_tree(tree, jobs=jobs, log=log)


def hide_instructor_tree(*outside):
    """The graded code runs as a user of its own, which must not read this instructor tree
    (solutions/, grading/, the git history): the tree becomes reachable by its owner alone.
    The grading tree and the scratch folders must therefore lie outside it."""
    if os.geteuid() != 0:
        print("(not root: the graded code runs as this user, with limits but without a user "
              "of its own; docs/instructors.md)", file=sys.stderr)
        return
    for path in outside:
        resolved = Path(path).resolve()
        if resolved == ROOT or ROOT in resolved.parents:
            raise grading.GradingError(f"{path} is inside {ROOT}, which the graded code may "
                                       f"not reach: choose a folder outside it")
    mode = ROOT.stat().st_mode
    if mode & 0o077:
        os.chmod(ROOT, mode & ~0o077)
        print(f"(made {ROOT} reachable by its owner only: the graded code must not read the "
              f"solutions)", file=sys.stderr)


def cmd_grade_class(args):
    rubric = grading.load_rubric()
    if args.test_seconds:
        rubric.limits.test_seconds = args.test_seconds
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    os.chmod(work, 0o711)
    started = time.monotonic()
    hide_instructor_tree(work, *([args.tree] if args.tree else []))
    if args.tree:
        plan = load_plan(args.tree)
    else:
        print(f"building the grading tree in {work / 'tree'} ...", flush=True)
        plan = grading_tree_for_class(work, args.jobs, work / "setup.log")
    built = time.monotonic()
    reports = grade_folder(plan, rubric, args.submissions, work, args.jobs)
    out = Path(args.out)
    write_csv(reports, out)
    report_dir = out.with_name(out.stem + "-reports")
    report_dir.mkdir(parents=True, exist_ok=True)
    for r in reports:
        (report_dir / f"{r.student}.txt").write_text(report_text(r, rubric), encoding="utf-8")
    graded = time.monotonic()
    print(f"graded {len(reports)} submissions in {graded - built:.0f} s "
          f"({(graded - built) / max(len(reports), 1):.1f} s each, {args.jobs} at a time; "
          f"grading tree {built - started:.0f} s); {out}, reports in {report_dir}")
    return 0


def cmd_setup(args):
    """Gradescope's setup.sh: builds the grading tree in place."""
    setup_grading_tree(Path(args.tree), jobs=args.jobs, log=Path(args.tree) / "setup.log")
    print(f"grading tree ready: {args.tree}/build/grading")
    return 0


def cmd_run(args):
    """Gradescope's run_autograder: grades ROOT/submission into ROOT/results/results.json."""
    root = Path(args.root)
    rubric = grading.load_rubric(root / "source" / "grading" / "rubric.toml")
    plan = load_plan(root / "source")
    report = grade_submission(plan, rubric, "submission", root / "submission",
                              Path(args.work or (root / "work")), build_jobs=os.cpu_count() or 2)
    results = root / "results"
    results.mkdir(parents=True, exist_ok=True)
    (results / "results.json").write_text(json.dumps(gradescope_results(report, rubric), indent=1))
    print(report_text(report, rubric))
    return 0


GRADESCOPE_PACKAGES = ("cmake ninja-build g++ pkg-config binutils util-linux python3 git "
                       "libarmadillo-dev libopenblas-dev libgoogle-glog-dev libgtest-dev "
                       "libgmock-dev libdnnl-dev libzip-dev libfmt-dev")

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image; the zip's
# files are in $AUTOGRADER_ROOT/source. Installs the packages by name (tested on Debian 12;
# docs/instructors.md says what was not tested) and builds the core, the lab skeletons and
# the public and hidden test programs once (grading/instructor.py setup).
set -euo pipefail
AUTOGRADER_ROOT=${AUTOGRADER_ROOT:-/autograder}
packages=(%s)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# Python 3.10 (Ubuntu 22.04) has no tomllib: the rubric is read with tomli there.
python3 -c 'import tomllib' 2>/dev/null || python3 -c 'import tomli' 2>/dev/null ||
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-tomli
cmake_version=$(cmake --version | sed -n '1s/[^0-9]*\\([0-9]*\\.[0-9]*\\).*/\\1/p')
if ! printf '3.25\\n%%s\\n' "$cmake_version" | sort -V -C; then
  echo "setup.sh: CMake $cmake_version is older than 3.25, which the project needs" >&2
  exit 1
fi
python3 "$AUTOGRADER_ROOT/source/grading/instructor.py" setup --tree "$AUTOGRADER_ROOT/source"
""" % GRADESCOPE_PACKAGES

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this once per submission, as root: the student's files are in
# $AUTOGRADER_ROOT/submission; the grade goes to $AUTOGRADER_ROOT/results/results.json.
set -euo pipefail
AUTOGRADER_ROOT=${AUTOGRADER_ROOT:-/autograder}
exec python3 "$AUTOGRADER_ROOT/source/grading/instructor.py" run --root "$AUTOGRADER_ROOT"
"""


def cmd_autograder(args):
    out = Path(args.out).resolve()
    staging = out / "autograder"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    copy_tree(ROOT, staging, NOT_IN_GRADING_TREE + ("docs", "onnx", "fuzz", "bench"))
    for name, text in (("setup.sh", SETUP_SH), ("run_autograder", RUN_AUTOGRADER)):
        (staging / name).write_text(text)
        os.chmod(staging / name, 0o755)
    archive = out / "autograder.zip"
    archive.unlink(missing_ok=True)
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(staging.rglob("*")):
            if path.is_file():
                info = zipfile.ZipInfo(path.relative_to(staging).as_posix(), (2026, 1, 1, 0, 0, 0))
                info.external_attr = (path.stat().st_mode & 0o777) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                z.writestr(info, path.read_bytes())
    shutil.rmtree(staging)
    print(f"wrote {archive} ({archive.stat().st_size // 1024} KiB): upload it as the "
          f"assignment's autograder (docs/instructors.md)")
    return 0


# ---- the student release ---------------------------------------------------------------------
# Left out of the release: the answers, the hidden tests and the grading of a class, the
# instructor's guide and the tools that need solutions/. grading/rubric.toml stays: the
# student's `tools/labs grade` prints points from it (hidden behaviours show only points).
RELEASE_LEAVES_OUT = ("solutions", "grading", "docs/instructors.md", "docs/instructors.zh-CN.md",
                      "scripts/student_walk.py", ".github/workflows/pages.yml", "build")
RELEASE_KEEPS = ("grading/rubric.toml",)
INSTRUCTOR_BLOCK = re.compile(r"\n?<!-- instructors -->.*?<!-- /instructors -->\n?", re.S)


def release(out, rubric):
    out = Path(out).resolve()
    if out.exists():
        if any(out.iterdir()):
            raise grading.GradingError(f"{out} exists and is not empty")
    out.mkdir(parents=True, exist_ok=True)
    copy_tree(ROOT, out, RELEASE_LEAVES_OUT)
    for name in RELEASE_KEEPS:
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, out / name)
    for readme in ("README.md", "README.zh-CN.md"):
        path = out / readme
        if path.exists():
            path.write_text(INSTRUCTOR_BLOCK.sub("\n", path.read_text(encoding="utf-8")),
                            encoding="utf-8")
    workflow = out / ".github" / "workflows" / "classroom.yml"
    workflow.parent.mkdir(parents=True, exist_ok=True)
    workflow.write_text(classroom_workflow(rubric), encoding="utf-8")
    env = dict(os.environ, GIT_AUTHOR_NAME="KuiperCourse", GIT_AUTHOR_EMAIL="course@example.org",
               GIT_COMMITTER_NAME="KuiperCourse", GIT_COMMITTER_EMAIL="course@example.org",
               GIT_AUTHOR_DATE="2026-01-01T00:00:00Z", GIT_COMMITTER_DATE="2026-01-01T00:00:00Z")
    run(["git", "init", "-q", "-b", "main", str(out)], env=env)
    run(["git", "add", "-A"], cwd=out, env=env)
    run(["git", "commit", "-q", "-m", "KuiperCourse: the student release"], cwd=out, env=env)
    return out


def classroom_workflow(rubric):
    """GitHub Classroom's autograding workflow: one command-grader step per public behaviour
    of each lab, worth its points, all through `tools/labs grade --behaviour` (the grader
    CI runs), in a debian:12 container. Hidden behaviours are not in a student repository."""
    steps, ids = [], []
    for label, lab in rubric.labs.items():
        number = label.removeprefix("course")
        for b in lab["behaviours"]:
            if b.hidden or b.bonus or not b.points:
                continue
            step_id = re.sub(r"[^a-z0-9]+", "-", f"{label}-{b.name}".lower()).strip("-")
            ids.append(step_id)
            steps.append(f"""      - name: {label} {b.name}
        id: {step_id}
        uses: classroom-resources/autograding-command-grader@v1
        with:
          test-name: "{label}: {b.name}"
          command: tools/labs grade {number} --no-build --behaviour "{b.name}"
          timeout: 10
          max-score: {b.points:g}""")
    env = "\n".join(f"          {i.upper()}_RESULTS: \"${{{{steps.{i}.outputs.result}}}}\"" for i in ids)
    return f"""# GitHub Classroom autograding (written by the instructor's `tools/labs release`).
# Each public behaviour of the rubric (grading/rubric.toml) is one test worth its points;
# the hidden tests run only in the course's own autograder.
name: Autograding Tests
'on': [push, workflow_dispatch, repository_dispatch]
permissions:
  checks: write
  actions: read
  contents: read
jobs:
  run-autograding-tests:
    runs-on: ubuntu-latest
    if: github.actor != 'github-classroom[bot]'
    container: debian:12
    steps:
      - name: Packages for checkout
        run: apt-get update -q && apt-get install -y -q --no-install-recommends git ca-certificates nodejs
      - uses: actions/checkout@v4
      - name: Install and build the labs
        run: |
          git config --global --add safe.directory "$GITHUB_WORKSPACE"
          bash scripts/test.sh --build-labs
{chr(10).join(steps)}
      - name: Autograding Reporter
        uses: classroom-resources/autograding-grading-reporter@v1
        env:
{env}
        with:
          runners: {",".join(ids)}
"""


CODE_LINE_MIN = 12


def solution_lines():
    """{stripped line: (solution file, line number)} of every fenced line of every solution
    that is code (not blank, not a comment, at least CODE_LINE_MIN characters) and that
    the skeleton of the same file does not also have."""
    found = {}
    for lab in LABS.lab_dirs():
        for name in sorted(LABS.src_files(ROOT / "solutions" / lab)):
            solution = ROOT / "solutions" / lab / "src" / name
            skeleton = ROOT / lab / "src" / name
            skeleton_lines = ({l.strip() for l in skeleton.read_text(encoding="utf-8").split("\n")}
                              if skeleton.exists() else set())
            for _, body in LABS.fenced_blocks(solution.read_text(encoding="utf-8")):
                for number, line in body:
                    text = line.strip()
                    if (len(text) < CODE_LINE_MIN or text.startswith(("//", "/*", "*"))
                            or text in skeleton_lines):
                        continue
                    found.setdefault(text, (f"solutions/{lab}/src/{name}", number))
    return found


# The engine's own sources: a solution line that is also an idiom of the engine itself (a
# layer's `return InferStatus::kInferSuccess;`, a `throw ShapeError(`) shows the student
# nothing they would not read in the core anyway, so it is not a leak there. Everywhere else
# (tests, handouts, docs, benchmarks, tools) it is.
ENGINE_SOURCES = ("kuiper/src", "kuiper/include", "onnx/src", "onnx/include", "final_project/src")


def release_check(out):
    """Problems: a line of a solution's fenced code found in a file of the release, other
    than the engine's own idioms (ENGINE_SOURCES)."""
    lines = solution_lines()
    out = Path(out)
    for prefix in ENGINE_SOURCES:
        for path in (out / prefix).rglob("*") if (out / prefix).is_dir() else []:
            if path.is_file() and path.suffix in (".cpp", ".hpp", ".h"):
                for line in path.read_text(encoding="utf-8", errors="replace").split("\n"):
                    lines.pop(line.strip(), None)
    found = {}  # solution line -> [(file, line number)]
    for path in sorted(out.rglob("*")):
        if ".git" in path.relative_to(out).parts or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        for number, line in enumerate(text.split("\n"), 1):
            if line.strip() in lines:
                found.setdefault(line.strip(), []).append((path.relative_to(out), number))
    problems = []
    for line, places in sorted(found.items()):
        # A line in two files or more is an idiom of the code (a declaration, a loop
        # header), not a copy of an answer: a pasted answer sits in one place.
        if len({path for path, _ in places}) > 1:
            continue
        hit = lines[line]
        problems += [f"{path}:{number}: solution line ({hit[0]}:{hit[1]}): {line}"
                     for path, number in places]
    return problems


def cmd_release(args):
    rubric = grading.load_rubric()
    out = release(args.out, rubric)
    problems = release_check(out)
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"tools/labs release: {len(problems)} solution lines in the release", file=sys.stderr)
        return 1
    files = run(["git", "ls-files"], cwd=out).stdout.count("\n")
    print(f"student release in {out}: {files} files, one commit; no solution line in it")
    return 0


def cmd_release_check(args):
    problems = release_check(Path(args.dir))
    for p in problems:
        print(p)
    print(f"release check: {len(problems)} solution lines found in {args.dir}")
    return 1 if problems else 0


def cmd_rubric_check(args):
    """Checks the rubric against a built tree: every lab and hidden test in one behaviour,
    100 points a lab, no points for a test that passes on the skeleton."""
    rubric = grading.load_rubric()
    build = Path(args.build)
    labs = json.loads((build / "labs.json").read_text())
    tests_of, on_skeleton, problems_early = {}, set(), []
    for lab in labs:
        names = []
        for target, prefix in ((lab["target"], lab["label"]),
                               (lab["target"] + "_hidden", lab["label"] + "_hidden")):
            exe = build / "bin" / target
            if exe.exists():
                names += [f"{prefix}.{t}" for t in grading.list_tests(exe)]
        tests_of[lab["label"]] = names
    if args.skeleton_build:
        skeleton = Path(args.skeleton_build)
        for lab in labs:
            for target, prefix in ((lab["target"], lab["label"]),
                                   (lab["target"] + "_hidden", lab["label"] + "_hidden")):
                exe = skeleton / "bin" / target
                if not exe.exists():
                    continue
                tests = grading.list_tests(exe)
                got = grading.run_program(exe, tests, limits=rubric.limits)
                on_skeleton |= {f"{prefix}.{t}" for t, r in got.items() if r.passed}
                # A skeleton's tests fail by reporting NotImplemented, not by never running:
                # a program that did not run would make this check pass for nothing.
                if not any(r.passed or "NotImplemented" in r.detail for r in got.values()):
                    problems_early.append(f"{exe}: no test of the skeleton ran to a result")
    problems = problems_early + grading.check_rubric(rubric, tests_of, on_skeleton)
    extra = sorted(set(rubric.labs) - set(tests_of))
    problems += [f"{label}: in the rubric but not a lab of {build}" for label in extra]
    for p in problems:
        print(p)
    total = sum(len(v) for v in tests_of.values())
    print(f"rubric check: {len(problems)} problems; {total} tests in {len(tests_of)} labs, "
          f"{len(on_skeleton)} pass on the skeleton")
    return 1 if problems else 0


def add_commands(sub):
    """The instructor's subcommands of tools/labs."""
    p = sub.add_parser("release", help="write the student release (a fresh repository) to OUT")
    p.add_argument("out", metavar="OUT")
    p.set_defaults(func=cmd_release)
    p = sub.add_parser("release-check", help="no solution line in a release folder")
    p.add_argument("dir", metavar="DIR")
    p.set_defaults(func=cmd_release_check)
    p = sub.add_parser("rubric-check", help="the rubric covers every lab test of a build")
    p.add_argument("--build", default=str(ROOT / "build" / "solutions"))
    p.add_argument("--skeleton-build", help="a student build: tests passing there earn nothing")
    p.set_defaults(func=cmd_rubric_check)
    p = sub.add_parser("autograder", help="write an autograder package")
    p.add_argument("kind", choices=["gradescope"])
    p.add_argument("--out", required=True, metavar="DIR")
    p.set_defaults(func=cmd_autograder)
    p = sub.add_parser("grade-class", help="grade every submission of a folder into a CSV")
    p.add_argument("submissions", metavar="SUBMISSIONS")
    p.add_argument("--out", required=True, metavar="CSV")
    p.add_argument("--work", default="/tmp/kuiper-grade-class", metavar="DIR",
                   help="scratch folder, outside the instructor tree (default %(default)s)")
    p.add_argument("--tree", metavar="DIR", help="an already built grading tree to reuse")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    p.add_argument("--test-seconds", type=float, help="wall time limit of one test")
    p.set_defaults(func=cmd_grade_class)


def main():
    import argparse
    parser = argparse.ArgumentParser(prog="grading/instructor.py")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("setup", help="(Gradescope setup.sh) build a grading tree in place")
    p.add_argument("--tree", required=True)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    p.set_defaults(func=cmd_setup)
    p = sub.add_parser("run", help="(Gradescope run_autograder) grade ROOT/submission")
    p.add_argument("--root", required=True)
    p.add_argument("--work")
    p.set_defaults(func=cmd_run)
    add_commands(sub)
    args = parser.parse_args()
    try:
        return args.func(args)
    except grading.GradingError as e:
        print(f"{parser.prog} {args.command}: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
