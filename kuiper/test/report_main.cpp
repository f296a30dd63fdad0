// The main of every test program: GoogleTest's own, plus a report that a grader can trust
// more than the program's exit code, its standard output or its XML file, all of which the
// code under test can write (tools/grading.py reads the report; docs/instructors.md says
// what it defends against and what it does not).
//
// Without KUIPER_REPORT_FD in the environment the program is a plain GoogleTest program.
// With KUIPER_REPORT_FD=<r>,<w> (two pipe ends the grader passes in):
//   - before any other code of the program runs (a constructor of priority 101 runs before
//     every default-priority static initialiser, the lab files' included), it reads a
//     one-line secret from fd r, closes r and removes the variable from the environment;
//   - for each test it writes "<secret> START <name>" when the test begins and
//     "<secret> PASS|FAIL|SKIP <name>[ <first failure, one line>]" when it ends, to fd w,
//     each line in one write() so that lines never interleave.
// A test that never reports its end (the process exited, crashed or was killed inside
// it) has failed; so has a test that never starts. The secret is what makes the lines
// the harness's: the code under test never sees the variable or fd r.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

// Plain arrays and ints: constant-initialised, so no later static initialiser of this file
// resets what the priority-101 constructor wrote (a std::string member could be).
constinit char report_secret[64] = {};  // empty: no grader
constinit int report_fd = -1;

__attribute__((constructor(101))) void ReadReportSecret() {
  const char* spec = std::getenv("KUIPER_REPORT_FD");
  if (spec == nullptr) return;
  int secret_fd = -1, out_fd = -1;
  if (std::sscanf(spec, "%d,%d", &secret_fd, &out_fd) != 2) std::_Exit(97);
  unsetenv("KUIPER_REPORT_FD");
  ssize_t length = read(secret_fd, report_secret, sizeof(report_secret) - 1);
  close(secret_fd);
  if (length <= 0) std::_Exit(97);
  report_secret[length] = '\0';
  report_secret[std::strcspn(report_secret, "\r\n")] = '\0';
  report_fd = out_fd;
  fcntl(report_fd, F_SETFD, FD_CLOEXEC);  // a program the test starts does not inherit it
}

// One line, in one write(): the grader reads lines, and a pipe write of at most PIPE_BUF
// bytes is atomic.
void Report(const std::string& what, const std::string& name, const std::string& detail = "") {
  std::string line = std::string(report_secret) + " " + what + " " + name;
  if (!detail.empty()) line += " " + detail;
  if (line.size() > 1000) line.resize(1000);
  line += '\n';
  [[maybe_unused]] ssize_t written = write(report_fd, line.data(), line.size());
}

class ReportListener : public ::testing::EmptyTestEventListener {
 public:
  void OnTestStart(const ::testing::TestInfo& info) override { Report("START", Name(info)); }

  void OnTestPartResult(const ::testing::TestPartResult& part) override {
    if (part.failed() && first_failure_.empty()) {
      first_failure_ = std::string(part.file_name() ? part.file_name() : "?") + ":" +
                       std::to_string(part.line_number()) + ": " + part.summary();
      for (char& c : first_failure_) {
        if (c == '\n' || c == '\r') c = ' ';
      }
    }
  }

  void OnTestEnd(const ::testing::TestInfo& info) override {
    const ::testing::TestResult& result = *info.result();
    const char* verdict = result.Failed() ? "FAIL" : (result.Skipped() ? "SKIP" : "PASS");
    Report(verdict, Name(info), result.Failed() ? first_failure_ : "");
    first_failure_.clear();
  }

 private:
  static std::string Name(const ::testing::TestInfo& info) {
    return std::string(info.test_suite_name()) + "." + info.name();
  }
  std::string first_failure_;
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (report_secret[0] != '\0') {
    // GoogleTest's listener list takes ownership of a raw pointer.
    ::testing::UnitTest::GetInstance()->listeners().Append(new ReportListener);
  }
  return RUN_ALL_TESTS();
}
