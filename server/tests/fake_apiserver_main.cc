// hived-fake-apiserver: the tests' fake Kubernetes API server as a program, for
// scripts/extender-demo.sh. Serves pods and nodes (list, watch, create, delete, binding) on
// 127.0.0.1:<port>, with every node of <config> Ready.
//
// Usage: hived-fake-apiserver <config.yaml> <port>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>

#include "hived/config.h"
#include "hived/scheduler.h"
#include "server/tests/fake_apiserver.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: hived-fake-apiserver <config.yaml> <port>\n";
    return 2;
  }
  auto spec = hived::LoadClusterSpecFile(argv[1]);
  if (!spec.ok()) {
    std::cerr << spec.status().message() << "\n";
    return 1;
  }
  auto scheduler = hived::Scheduler::Create(*spec);
  if (!scheduler.ok()) {
    std::cerr << scheduler.status().message() << "\n";
    return 1;
  }
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  hived::server::testing::FakeApiServer api;
  for (const hived::NodeStatus& n : (*scheduler)->Nodes()) api.AddNode(n.name, /*ready=*/true);
  if (api.Start(std::atoi(argv[2])) < 0) {
    std::cerr << "cannot listen on 127.0.0.1:" << argv[2] << "\n";
    return 1;
  }
  std::cerr << "hived-fake-apiserver: " << api.Url() << "\n";
  int sig = 0;
  sigwait(&signals, &sig);
  return 0;
}
