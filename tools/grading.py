"""Grading: the rubric, the test runner and the scores (stdlib only; Python 3.10+).

Used by `tools/labs grade` (a student's own build), by the autograders and by
`tools/labs grade-class` (instructors, grading/instructor.py). One runner for all of them,
so a student sees the same points locally as the course's grader gives.

What a grade believes (docs/instructors.md, "What the grader trusts"):
  - a test passes only when the program reports it through the private report channel
    (kuiper/test/report_main.cpp: a pipe and a per-run secret the tested code never sees),
    never from its exit code, its standard output or a file it could write;
  - every expected test must report; the expected names come from the caller (the
    instructor's pristine build), not from the program under test;
  - a test that crashes, exits or hangs fails alone: the program is started again for the
    tests not yet run;
  - each program runs under limits (wall time per test and per program, address space,
    processes, file size) and, when the grader is root, as an unprivileged user of its
    own, so that it cannot read what that user cannot read or outlive its limits.
"""
from __future__ import annotations

import fnmatch
import os
import secrets
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

try:
    import tomllib  # Python 3.11+
except ModuleNotFoundError:  # Python 3.10 (Ubuntu 22.04): Debian/Ubuntu package python3-tomli
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
RUBRIC = ROOT / "grading" / "rubric.toml"


class GradingError(Exception):
    pass


# ---- the rubric ---------------------------------------------------------------------
@dataclass
class Behaviour:
    name: str
    points: float
    tests: list[str]
    description: str = ""
    hidden: bool = False
    bonus: bool = False

    def matches(self, test):
        return any(fnmatch.fnmatchcase(test, pattern) for pattern in self.tests)


@dataclass
class Limits:
    test_seconds: float = 20        # wall time of one test
    program_seconds: float = 300    # wall time of one program run (all its tests)
    memory_mib: int = 4096          # address space of a test program
    processes: int = 64             # processes and threads of the sandbox user
    file_mib: int = 256             # largest file a test program may write
    timeouts_before_giving_up: int = 3  # consecutive hung tests: the rest fail unrun


@dataclass
class Rubric:
    labs: dict[str, dict]           # label -> {"title": str, "behaviours": [Behaviour]}
    limits: Limits = field(default_factory=Limits)

    def behaviours(self, label):
        return self.labs.get(label, {}).get("behaviours", [])

    def graded_points(self, label):
        return sum(b.points for b in self.behaviours(label) if not b.bonus)


def load_rubric(path=RUBRIC):
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise GradingError(f"no rubric at {path}") from None
    except tomllib.TOMLDecodeError as e:
        raise GradingError(f"{path}: {e}") from None
    limits = Limits(**data.get("limits", {}))
    labs = {}
    for label, lab in data.get("labs", {}).items():
        behaviours = []
        for raw in lab.get("behaviours", []):
            unknown = set(raw) - {"name", "points", "tests", "description", "hidden", "bonus"}
            if unknown:
                raise GradingError(f"{path}: {label} behaviour {raw.get('name')!r}: unknown "
                                   f"keys {sorted(unknown)}")
            behaviours.append(Behaviour(**raw))
        labs[label] = {"title": lab.get("title", label), "behaviours": behaviours}
    return Rubric(labs, limits)


def check_rubric(rubric, tests_of, passing_on_skeleton=()):
    """Problems (strings) of the rubric against the tests a build has: tests_of maps a lab
    label (course3) to every test name of the lab and of its hidden tests. Each lab's graded
    behaviours sum to 100; each test matches exactly one behaviour; each pattern matches a
    test; no test that passes on the skeleton earns points."""
    problems = []
    skeleton = set(passing_on_skeleton)
    for label, tests in sorted(tests_of.items()):
        behaviours = rubric.behaviours(label)
        if not behaviours:
            problems.append(f"{label}: not in the rubric")
            continue
        total = rubric.graded_points(label)
        if abs(total - 100) > 1e-9:
            problems.append(f"{label}: graded behaviours sum to {total:g} points, not 100")
        for test in sorted(tests):
            owners = [b.name for b in behaviours if b.matches(test)]
            if len(owners) != 1:
                problems.append(f"{label}: test {test} matches {len(owners)} behaviours "
                                f"({', '.join(owners) or 'none'}); it must match one")
            elif test in skeleton:
                owner = next(b for b in behaviours if b.matches(test))
                if owner.points and not owner.bonus:
                    problems.append(f"{label}: test {test} passes on the skeleton but belongs "
                                    f"to {owner.name!r}, worth {owner.points:g} points")
        for b in behaviours:
            for pattern in b.tests:
                if not any(fnmatch.fnmatchcase(t, pattern) for t in tests):
                    problems.append(f"{label}: behaviour {b.name!r}: pattern {pattern!r} "
                                    f"matches no test")
    return problems


# ---- running one test program ----------------------------------------------------------
@dataclass
class Result:
    passed: bool
    detail: str = ""  # why it failed: the first failed check, a crash, a timeout, ...


@dataclass
class Sandbox:
    """Who runs the tested code: an unprivileged uid/gid of its own (root only), in a
    scratch directory it owns. None as uid: the grader's own user (no isolation)."""
    run_dir: Path
    uid: int | None = None
    gid: int | None = None


def sandbox_for(slot, run_dir):
    """A sandbox for worker `slot`: when root, uid/gid 61000 + slot, a user of its own so
    that its process limit counts only its own processes, and so that killing every
    process of the uid ends whatever the tested code left behind."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        return Sandbox(run_dir)
    uid = 61000 + slot
    os.chown(run_dir, uid, uid)
    os.chmod(run_dir, 0o700)
    return Sandbox(run_dir, uid, uid)


def kill_uid(uid):
    """SIGKILL every process of uid (the tested code's own user) until none is left."""
    for _ in range(50):
        found = False
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                if entry.stat().st_uid == uid:
                    found = True
                    os.kill(int(entry.name), signal.SIGKILL)
            except (FileNotFoundError, ProcessLookupError, PermissionError):
                pass
        if not found:
            return
        time.sleep(0.05)


def _environment(sandbox):
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(sandbox.run_dir),
           "TMPDIR": str(sandbox.run_dir), "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2")}
    for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def _command(exe, names, limits, sandbox):
    limit_args = [f"--as={limits.memory_mib * 1024 * 1024}",
                  f"--fsize={limits.file_mib * 1024 * 1024}", "--core=0"]
    if sandbox.uid is not None:  # a process limit on the grader's own user would count its other work
        limit_args.append(f"--nproc={limits.processes}")
    return ["prlimit", *limit_args, "--", str(exe), "--gtest_filter=" + ":".join(names),
            "--gtest_color=no", "--gtest_brief=1"]


def _exit_reason(returncode, output_tail):
    if returncode is None:
        return "still running"
    if returncode < 0:
        name = signal.Signals(-returncode).name if -returncode in signal.Signals._value2member_map_ else str(-returncode)
        hint = {"SIGSEGV": "a crash (segmentation fault)", "SIGABRT": "abort() (or an uncaught "
                "exception / failed CHECK)", "SIGKILL": "killed (a limit)", "SIGXFSZ":
                "file size limit"}.get(name, name)
        return f"the program ended by signal {name}: {hint}"
    tail = f"; its last output: {output_tail}" if output_tail else ""
    return f"the program exited with code {returncode} inside this test{tail}"


def run_program(exe, names, *, limits=Limits(), sandbox=None, log=None):
    """Runs the tests `names` ("Suite.Test", as in --gtest_filter) of the GoogleTest program
    exe; returns {name: Result} for every name. log: a file for the program's own output."""
    sandbox = sandbox or Sandbox(Path(os.environ.get("TMPDIR", "/tmp")))
    exe = Path(exe).resolve()  # the program runs in the sandbox's folder
    results, pending = {}, list(names)
    hung_in_a_row = 0
    while pending:
        if hung_in_a_row >= limits.timeouts_before_giving_up:
            for name in pending:
                results[name] = Result(False, f"not run: {hung_in_a_row} tests in a row hit "
                                              f"the {limits.test_seconds:g} s limit")
            break
        reported, last_started, how = _run_once(exe, pending, limits, sandbox, log)
        results.update(reported)
        if last_started is not None and last_started not in reported:
            results[last_started] = Result(False, how)
            hung_in_a_row = hung_in_a_row + 1 if "time limit" in how else 0
        elif reported:
            hung_in_a_row = 0
        rest = [n for n in pending if n not in results]
        if len(rest) == len(pending):  # nothing started: the program fails before any test
            for name in rest:
                results[name] = Result(False, how or "the test did not report a result")
            break
        pending = rest
    return results


def _run_once(exe, names, limits, sandbox, log):
    """One run of exe over names. Returns (reported {name: Result}, the test that started
    and did not end or None, how the run ended)."""
    secret = secrets.token_hex(16)
    secret_r, secret_w = os.pipe()
    report_r, report_w = os.pipe()
    os.write(secret_w, (secret + "\n").encode())
    os.close(secret_w)
    env = _environment(sandbox)
    env["KUIPER_REPORT_FD"] = f"{secret_r},{report_w}"
    output = open(log, "ab") if log else subprocess.DEVNULL
    user = {} if sandbox.uid is None else {"user": sandbox.uid, "group": sandbox.gid,
                                            "extra_groups": []}
    try:
        proc = subprocess.Popen(_command(exe, names, limits, sandbox), cwd=sandbox.run_dir,
                                env=env, stdin=subprocess.DEVNULL, stdout=output,
                                stderr=subprocess.STDOUT, pass_fds=(secret_r, report_w),
                                start_new_session=True, **user)
    except OSError as e:
        for fd in (secret_r, report_r, report_w):
            os.close(fd)
        return {}, None, f"cannot start {exe}: {e}"
    finally:
        if log:
            output.close()
    os.close(secret_r)
    os.close(report_w)
    reported, current, started_at, buffer = {}, None, time.monotonic(), b""
    begin, how, pipe_open = time.monotonic(), "", True
    idle_since = begin  # when the last test ended (or the program started)
    prefix = secret + " "
    while True:
        now = time.monotonic()
        if current is not None and now - started_at > limits.test_seconds:
            how = f"over the time limit ({limits.test_seconds:g} s for one test)"
            break
        if current is None and now - idle_since > limits.test_seconds:
            how = f"no test started within the time limit ({limits.test_seconds:g} s)"
            break
        if now - begin > limits.program_seconds:
            how = f"over the time limit ({limits.program_seconds:g} s for the program)"
            break
        ready, _, _ = select.select([report_r] if pipe_open else [], [], [], 0.05)
        if ready:
            chunk = os.read(report_r, 65536)
            pipe_open = bool(chunk)  # closed by every holder: wait for the exit alone
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for raw in lines:
                line = raw.decode("utf-8", "replace")
                if not line.startswith(prefix):
                    continue  # not the harness's: the tested code cannot know the secret
                verb, _, rest = line[len(prefix):].partition(" ")
                name, _, detail = rest.partition(" ")
                if name not in names:
                    continue
                if verb == "START":
                    current, started_at = name, time.monotonic()
                elif verb in ("PASS", "FAIL", "SKIP") and name == current:
                    reported[name] = Result(verb == "PASS", detail if verb == "FAIL" else
                                            ("skipped" if verb == "SKIP" else ""))
                    current, idle_since = None, time.monotonic()
            if not chunk and proc.poll() is not None:
                break
        elif proc.poll() is not None:
            # The program ended; whatever it still had to say is in the pipe unless a child
            # it started keeps the pipe open, so read without waiting for the end.
            ready, _, _ = select.select([report_r] if pipe_open else [], [], [], 0)
            if not ready:
                break
    if proc.poll() is None:
        how = how or "killed"
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    if sandbox.uid is not None:
        kill_uid(sandbox.uid)
    os.close(report_r)
    if not how:
        tail = ""
        if log and Path(log).exists():
            text = Path(log).read_bytes()[-300:].decode("utf-8", "replace").strip()
            tail = text.splitlines()[-1][:200] if text else ""
        how = _exit_reason(proc.returncode, tail)
        if current is None and proc.returncode == 0 and len(reported) < len(names):
            how = "the program exited before running this test"
    return reported, current, how


def list_tests(exe):
    """The "Suite.Test" names a GoogleTest program lists (--gtest_list_tests). Only for a
    program the caller trusts: the listing is the program's own output."""
    done = subprocess.run([str(exe), "--gtest_list_tests"], text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, timeout=120)
    if done.returncode != 0:
        raise GradingError(f"{exe} --gtest_list_tests failed (exit {done.returncode})")
    names, suite = [], None
    for line in done.stdout.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            suite = line.split("#")[0].strip()
        elif "DISABLED_" not in suite + line:  # gtest lists disabled tests but never runs them
            names.append(suite + line.split("#")[0].strip())
    return names


# ---- scores ---------------------------------------------------------------------------
@dataclass
class BehaviourScore:
    behaviour: Behaviour
    passed: int
    total: int
    points: float
    failing: list[tuple[str, str]]  # (test, why)


def score_lab(rubric, label, results, compile_error=None):
    """[BehaviourScore] of one lab. results: {ctest name (course3.Suite.Test): Result} of
    every test that was expected, public and hidden. A behaviour earns its points times the
    share of its tests that pass; a lab that does not compile earns nothing."""
    scores = []
    for b in rubric.behaviours(label):
        mine = sorted(t for t in results if b.matches(t))
        passed = 0 if compile_error else sum(results[t].passed for t in mine)
        failing = [] if compile_error else [(t, results[t].detail) for t in mine
                                             if not results[t].passed]
        points = round(b.points * passed / len(mine), 2) if mine else 0.0
        scores.append(BehaviourScore(b, passed, len(mine), points, failing))
    return scores


def lab_points(scores):
    """(graded points, bonus points) of a lab's [BehaviourScore]."""
    graded = sum(s.points for s in scores if not s.behaviour.bonus)
    bonus = sum(s.points for s in scores if s.behaviour.bonus)
    return round(graded, 2), round(bonus, 2)


def describe_failure(detail, limit=300):
    detail = " ".join(detail.split())
    return detail if len(detail) <= limit else detail[:limit - 3] + "..."


def print_lab(label, title, scores, compile_error=None, out=sys.stdout):
    graded, bonus = lab_points(scores)
    available = sum(s.behaviour.points for s in scores if s.total and not s.behaviour.bonus)
    head = f"{label}  {graded:g} / 100"
    if available < 100 and not compile_error:
        head += f"  ({100 - available:g} points are for tests this tree does not have)"
    if bonus:
        head += f"  + {bonus:g} bonus"
    print(f"{head}  {title}", file=out)
    if compile_error:
        print(f"  {compile_error}", file=out)
        return
    for s in scores:
        b = s.behaviour
        kind = "hidden" if b.hidden else ("bonus" if b.bonus else "")
        if not s.total:
            print(f"  {'-':>6} / {b.points:<4g}    {b.name}  (not in this tree{', ' + kind if kind else ''})",
                  file=out)
            if b.hidden and b.description:  # what they cover, never their content
                print(f"      covers: {b.description}", file=out)
            continue
        mark = "ok" if s.passed == s.total else "  "
        print(f"  {s.points:>6g} / {b.points:<4g} {mark} {b.name}  {s.passed}/{s.total} tests"
              f"{'  (' + kind + ')' if kind else ''}", file=out)
        if not b.hidden:
            for test, why in s.failing[:3]:
                print(f"      {test}: {describe_failure(why, 200)}", file=out)
            if len(s.failing) > 3:
                print(f"      ... and {len(s.failing) - 3} more", file=out)
