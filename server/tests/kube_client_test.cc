// The API-server client's configuration (kubeconfig, in-cluster, address), node readiness,
// and TLS serving of the extender port.
#include "server/kube_client.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "absl/strings/escaping.h"
#include "hived/config.h"
#include "hived/scheduler.h"
#include "httplib.h"
#include "server/http_server.h"
#include "server/tests/test_pods.h"
#include "support/catch.h"

namespace {

std::string TempPath(const std::string& name) {
  return "/tmp/hived-extender-test-" + std::to_string(getpid()) + "-" + name;
}

}  // namespace

TEST_CASE("ResolveKubeConfig: kubeconfig's current context, token and CA data", "[server][unit]") {
  unsetenv("KUBERNETES_SERVICE_HOST");
  std::string path = TempPath("kubeconfig");
  std::ofstream(path) << "apiVersion: v1\nkind: Config\ncurrent-context: prod\n"
                         "clusters:\n"
                         "- name: dev\n  cluster:\n    server: https://dev:6443\n"
                         "- name: prod\n  cluster:\n    server: https://prod:6443\n"
                         "    certificate-authority-data: " +
                             absl::Base64Escape("-----BEGIN CERTIFICATE-----\n") +
                             "\n"
                             "contexts:\n"
                             "- name: dev\n  context: {cluster: dev, user: alice}\n"
                             "- name: prod\n  context: {cluster: prod, user: bob}\n"
                             "users:\n"
                             "- name: alice\n  user: {token: a-token}\n"
                             "- name: bob\n  user: {token: b-token}\n";
  absl::StatusOr<hived::server::KubeConfig> config = hived::server::ResolveKubeConfig("", path);
  REQUIRE(config.ok());
  CHECK(config->server == "https://prod:6443");
  CHECK(config->token == "b-token");
  REQUIRE_FALSE(config->ca_file.empty());
  std::ifstream ca(config->ca_file);
  std::string first;
  std::getline(ca, first);
  CHECK(first == "-----BEGIN CERTIFICATE-----");
  std::remove(config->ca_file.c_str());
  // kubeApiServerAddress wins over the kubeconfig's server, keeping its credentials.
  config = hived::server::ResolveKubeConfig("http://10.0.0.1:8080", path);
  REQUIRE(config.ok());
  CHECK(config->server == "http://10.0.0.1:8080");
  CHECK(config->token == "b-token");
  std::remove(path.c_str());
  // A kubeconfig that names no server is an error; so is nothing configured at all.
  std::ofstream(path) << "current-context: x\ncontexts: []\n";
  CHECK_FALSE(hived::server::ResolveKubeConfig("", path).ok());
  std::remove(path.c_str());
  std::string home = getenv("HOME") != nullptr ? getenv("HOME") : "";
  setenv("HOME", "/nonexistent", 1);
  unsetenv("KUBECONFIG");
  CHECK(absl::IsNotFound(hived::server::ResolveKubeConfig("", "").status()));
  setenv("HOME", home.c_str(), 1);
}

TEST_CASE("NodeHealthy: Ready=True and schedulable", "[server][unit]") {
  nlohmann::json node = {{"metadata", {{"name", "n"}}},
                         {"status", {{"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
  CHECK(hived::server::NodeHealthy(node));
  node["spec"]["unschedulable"] = true;
  CHECK_FALSE(hived::server::NodeHealthy(node));
  node["spec"]["unschedulable"] = false;
  node["status"]["conditions"][0]["status"] = "Unknown";
  CHECK_FALSE(hived::server::NodeHealthy(node));
  CHECK_FALSE(hived::server::NodeHealthy(nlohmann::json::array()));
  // Wrong types read as absent, never throw.
  nlohmann::json odd = {{"spec", {{"unschedulable", "yes"}}},
                        {"status", {{"conditions", {{{"type", 7}, {"status", true}}}}}}};
  CHECK_FALSE(hived::server::NodeHealthy(odd));
}

TEST_CASE("HttpServer: serves HTTPS with --tls-cert and --tls-key", "[server][scenario]") {
  if (std::system("command -v openssl >/dev/null 2>&1") != 0) {
    HIVED_SKIP_TEST("no openssl command to make a test certificate");
  }
  std::string cert = TempPath("tls.crt");
  std::string key = TempPath("tls.key");
  std::string make =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 "
      "-keyout " +
      key + " -out " + cert + " >/dev/null 2>&1";
  REQUIRE(std::system(make.c_str()) == 0);
  auto spec = hived::LoadClusterSpecFile(hived::server::testing::DesignConfig());
  REQUIRE(spec.ok());
  hived::server::Extender extender(*hived::Scheduler::Create(*spec), {}, nullptr);
  extender.SetReady();
  hived::server::HttpServer https(&extender, {cert, key});
  REQUIRE(https.valid());
  int port = https.BindToPort("127.0.0.1", 0);
  REQUIRE(port > 0);
  std::thread serving([&https] { https.Listen(); });
  httplib::SSLClient client("127.0.0.1", port);
  client.set_ca_cert_path(cert.c_str());
  client.enable_server_certificate_verification(true);
  auto res = client.Get("/readyz");
  bool ok = res && res->status == 200;
  https.Stop();
  serving.join();
  std::remove(cert.c_str());
  std::remove(key.c_str());
  CHECK(ok);
  // Files that do not exist: the server is not valid and binds nothing.
  hived::server::HttpServer broken(&extender, {"/nonexistent.crt", "/nonexistent.key"});
  CHECK_FALSE(broken.valid());
  CHECK(broken.BindToPort("127.0.0.1", 0) == -1);
}
