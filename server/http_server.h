// server/http_server.h: puts an `Extender` on HTTP (cpp-httplib): HiveD's routes, health,
// readiness and metrics.
//
// Routes: POST /v1/extender/{filter,preempt,bind}; GET / (the paths), /v1/inspect/...,
// /healthz, /readyz (503 until recovery is done), /metrics (Prometheus text). A body larger
// than `ExtenderOptions::max_body_bytes` is answered 413; an unknown route 404; a handler
// never throws past the server.
//
// Example:
//   HttpServer http(&extender);
//   int port = http.BindToPort("0.0.0.0", 9096);
//   http.Listen();  // blocks until Stop()
//
// Thread safety: Stop() may be called from any thread; the rest from one.
#ifndef HIVED_SERVER_HTTP_SERVER_H_
#define HIVED_SERVER_HTTP_SERVER_H_

#include <memory>
#include <string>

#include "server/extender.h"

namespace hived::server {

struct TlsFiles {
  std::string cert_file;  // empty: plain HTTP
  std::string key_file;
};

class HttpServer {
 public:
  // `threads`: connections served at once (each keep-alive connection holds one while open).
  explicit HttpServer(Extender* extender, const TlsFiles& tls = {}, int threads = 64);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds `host`:`port` (0: any free port); the bound port, or -1.
  int BindToPort(const std::string& host, int port);
  // Serves until Stop(). False when the socket failed.
  bool Listen();
  void Stop();
  bool valid() const;  // false when TLS files could not be loaded

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// "host:port" or ":port" (HiveD's `webServerAddress`) -> host ("0.0.0.0" when empty) and port.
bool ParseListenAddress(const std::string& address, std::string* host, int* port);

}  // namespace hived::server

#endif  // HIVED_SERVER_HTTP_SERVER_H_
