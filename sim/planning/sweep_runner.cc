#include "sim/planning/sweep_runner.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

extern char** environ;

namespace hived::sim {
namespace {

// The last `n` non-empty lines of a file, joined with "\n  ".
std::string LogTail(const std::string& path, size_t n) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::vector<std::string> lines = absl::StrSplit(ss.str(), '\n', absl::SkipWhitespace());
  if (lines.size() > n) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(n));
  return absl::StrJoin(lines, "\n  ");
}

class Progress {
 public:
  Progress(std::string label, size_t total)
      : label_(std::move(label)), total_(total), enabled_(isatty(STDERR_FILENO) != 0) {}
  ~Progress() {
    if (shown_) std::fprintf(stderr, "\r%60s\r", "");
  }
  void Update(size_t done, size_t running) {
    if (!enabled_ || total_ == 0) return;
    const int width = 30;
    const int filled =
        static_cast<int>(static_cast<double>(done) / static_cast<double>(total_) * width);
    std::fprintf(stderr, "\r%s [%s%s] %zu/%zu (%zu running)", label_.c_str(),
                 std::string(static_cast<size_t>(filled), '#').c_str(),
                 std::string(static_cast<size_t>(width - filled), ' ').c_str(), done, total_,
                 running);
    std::fflush(stderr);
    shown_ = true;
  }

 private:
  std::string label_;
  size_t total_;
  bool enabled_;
  bool shown_ = false;
};

absl::StatusOr<pid_t> Spawn(const std::string& exe, const ChildRun& run) {
  std::error_code ec;
  std::filesystem::create_directories(run.dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", run.dir, ": ", ec.message()));
  const std::string log = (std::filesystem::path(run.dir) / "log.txt").string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<std::string> argv_strings{exe};
  argv_strings.insert(argv_strings.end(), run.args.begin(), run.args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return absl::InternalError(
        absl::StrCat("cannot start ", exe, " for ", run.label, ": ", std::strerror(rc)));
  }
  return pid;
}

}  // namespace

std::string SelfExe() {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("/proc/self/exe") : p.string();
}

int DefaultJobs() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

absl::Status RunChildren(const std::string& exe, const std::vector<ChildRun>& runs, int jobs,
                         const std::string& progress_label,
                         const std::function<absl::Status(size_t)>& on_success) {
  jobs = std::max(jobs, 1);
  Progress progress(progress_label, runs.size());
  std::map<pid_t, size_t> running;
  size_t next = 0, done = 0;
  absl::Status failure;
  while (running.size() > 0 || (next < runs.size() && failure.ok())) {
    while (failure.ok() && next < runs.size() && running.size() < static_cast<size_t>(jobs)) {
      absl::StatusOr<pid_t> pid = Spawn(exe, runs[next]);
      if (!pid.ok()) {
        failure = pid.status();
        break;
      }
      running[*pid] = next++;
    }
    progress.Update(done, running.size());
    if (running.empty()) break;
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrCat("waitpid: ", std::strerror(errno)));
    }
    auto it = running.find(pid);
    if (it == running.end()) continue;  // not ours
    const size_t index = it->second;
    const ChildRun& run = runs[index];
    running.erase(it);
    ++done;
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok && failure.ok()) {
      const std::string log = (std::filesystem::path(run.dir) / "log.txt").string();
      const std::string how = WIFEXITED(status) ? absl::StrCat("exit code ", WEXITSTATUS(status))
                                                : absl::StrCat("signal ", WTERMSIG(status));
      failure = absl::AbortedError(absl::StrCat(run.label, " failed (", how, "):\n  ",
                                                LogTail(log, 6), "\n(full log: ", log, ")"));
    } else if (ok && on_success && failure.ok()) {
      if (absl::Status s = on_success(index); !s.ok()) {
        failure = absl::Status(s.code(), absl::StrCat(run.label, ": ", s.message()));
      }
    }
  }
  progress.Update(done, 0);
  return failure;
}

std::string GnuplotQuote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += c == '"' ? '\'' : c;
  return out + "\"";
}

absl::Status RenderGnuplot(const std::string& dir, const std::string& name, const std::string& data,
                           const std::string& script) {
  if (std::system("gnuplot --version >/dev/null 2>&1") != 0) {
    return absl::FailedPreconditionError("charts need gnuplot, which is not installed");
  }
  const std::filesystem::path d(dir);
  for (absl::Status s : {WriteFileAtomically((d / (name + ".dat")).string(), data),
                         WriteFileAtomically((d / (name + ".gp")).string(), script)}) {
    if (!s.ok()) return s;
  }
  // Single-quoted for the shell: a quote inside becomes '\''.
  auto sh = [](const std::string& text) {
    std::string out = "'";
    for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
  };
  const std::string cmd =
      absl::StrCat("cd ", sh(dir), " && gnuplot ", sh(name + ".gp"), " 2>", sh(name + ".log"));
  if (std::system(cmd.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("gnuplot failed on ", (d / (name + ".gp")).string(),
                                            "; see ", (d / (name + ".log")).string()));
  }
  std::error_code ec;
  std::filesystem::remove(d / (name + ".log"), ec);
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = absl::StrCat(path, ".tmp.", getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    out.close();
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", tmp));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot write ", path, ": ", ec.message()));
  return absl::OkStatus();
}

}  // namespace hived::sim
