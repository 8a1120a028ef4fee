// server/tests/extender_process.h: a `hived-extender` process for the crash tests, started
// on HiveD's config pointed at a (fake) API server and killed with SIGKILL.
//
// Start() writes the config (the given file with `kubeApiServerAddress` set), spawns the
// binary listening on 127.0.0.1:<any free port> with its stderr in a log file, reads the port
// from the log and waits until /readyz answers 200. Kill() sends SIGKILL and reaps it.
//
// Example:
//   ExtenderProcess ext(binary, config, api.Url(), "/tmp/work");
//   REQUIRE(ext.Start().empty());
//   httplib::Client c("127.0.0.1", ext.port());
//   ext.Kill();
//
// Thread safety: Kill() may be called from any thread (the fake API server's bind hook);
// the rest from one.
#ifndef HIVED_SERVER_TESTS_EXTENDER_PROCESS_H_
#define HIVED_SERVER_TESTS_EXTENDER_PROCESS_H_

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "httplib.h"

extern char** environ;

namespace hived::server::testing {

class ExtenderProcess {
 public:
  ExtenderProcess(std::string binary, const std::string& config, const std::string& api_url,
                  std::string work_dir)
      : binary_(std::move(binary)), work_dir_(std::move(work_dir)) {
    config_path_ = work_dir_ + "/hivedscheduler.yaml";
    std::ifstream in(config);
    std::ofstream out(config_path_, std::ios::trunc);
    out << "kubeApiServerAddress: " << api_url << "\n";
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("kubeApiServerAddress", 0) == 0) continue;
      out << line << "\n";
    }
  }
  ~ExtenderProcess() { Kill(); }
  ExtenderProcess(const ExtenderProcess&) = delete;
  ExtenderProcess& operator=(const ExtenderProcess&) = delete;

  // Starts the server and waits (at most 20 s) until it is ready; "" or what went wrong.
  // With `kill_when_listening`, kills it with SIGKILL as soon as it listens (recovering,
  // before ready) instead.
  std::string Start(bool kill_when_listening = false) {
    Kill();
    ++starts_;
    log_path_ = work_dir_ + "/extender-" + std::to_string(starts_) + ".log";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    std::vector<std::string> args = {binary_, "--config", config_path_, "--listen", "127.0.0.1:0"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    int rc = posix_spawn(&pid, binary_.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return "cannot spawn " + binary_;
    pid_.store(pid);
    port_ = 0;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    const std::string marker = "listening on 127.0.0.1:";
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        pid_.store(0);
        return "hived-extender exited at start: " + Log();
      }
      if (port_ == 0) {
        std::string log = Log();
        size_t at = log.find(marker);
        if (at != std::string::npos) port_ = std::atoi(log.c_str() + at + marker.size());
        if (port_ > 0 && kill_when_listening) {
          Kill();
          return "";
        }
      }
      if (port_ > 0) {
        httplib::Client c("127.0.0.1", port_);
        c.set_connection_timeout(1, 0);
        auto res = c.Get("/readyz");
        if (res && res->status == 200) return "";
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return "hived-extender did not become ready: " + Log();
  }

  // SIGKILL; reaps the process. Safe to call twice.
  void Kill() {
    pid_t pid = pid_.exchange(0);
    if (pid <= 0) return;
    ::kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
  }
  // SIGKILL without waiting (from the API server's bind hook); Kill() reaps it later.
  void KillNoWait() {
    pid_t pid = pid_.load();
    if (pid > 0) ::kill(pid, SIGKILL);
  }
  bool Alive() const {
    pid_t pid = pid_.load();
    return pid > 0 && ::kill(pid, 0) == 0 && !Zombie(pid);
  }

  int port() const { return port_; }
  int starts() const { return starts_; }
  std::string Log() const {
    std::ifstream in(log_path_);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  static bool Zombie(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    size_t paren = line.rfind(')');
    return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
  }

  std::string binary_;
  std::string work_dir_;
  std::string config_path_;
  std::string log_path_;
  std::atomic<pid_t> pid_{0};
  int port_ = 0;
  int starts_ = 0;
};

}  // namespace hived::server::testing

#endif  // HIVED_SERVER_TESTS_EXTENDER_PROCESS_H_
