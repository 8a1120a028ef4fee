// HiveD's extender routes on cpp-httplib.
#include "server/http_server.h"

#include <cstdlib>
#include <exception>
#include <string>

#include "absl/strings/str_cat.h"
#include "httplib.h"

namespace hived::server {

struct HttpServer::Impl {
  std::unique_ptr<httplib::Server> server;
};

namespace {

void Send(httplib::Response& res, const HttpReply& reply) {
  res.status = reply.status;
  res.set_content(reply.body, reply.content_type.c_str());
}

}  // namespace

HttpServer::HttpServer(Extender* extender, const TlsFiles& tls, int threads) : impl_(new Impl) {
#ifdef CPPHTTPLIB_OPENSSL_SUPPORT
  if (!tls.cert_file.empty()) {
    impl_->server =
        std::make_unique<httplib::SSLServer>(tls.cert_file.c_str(), tls.key_file.c_str());
  } else {
    impl_->server = std::make_unique<httplib::Server>();
  }
#else
  if (!tls.cert_file.empty()) return;  // TLS asked for but not built in: valid() is false
  impl_->server = std::make_unique<httplib::Server>();
#endif
  httplib::Server& s = *impl_->server;
  const size_t pool = static_cast<size_t>(threads > 0 ? threads : 1);
  s.new_task_queue = [pool] { return new httplib::ThreadPool(pool); };
  s.set_keep_alive_max_count(1000);
  s.set_tcp_nodelay(true);
  s.set_payload_max_length(extender->options().max_body_bytes);
  s.set_read_timeout(10, 0);
  s.set_write_timeout(10, 0);
  // Extender calls: kube-scheduler's JSON.
  s.Post("/v1/extender/filter", [extender](const httplib::Request& req, httplib::Response& res) {
    Send(res, extender->Filter(req.body));
  });
  s.Post("/v1/extender/preempt", [extender](const httplib::Request& req, httplib::Response& res) {
    Send(res, extender->Preempt(req.body));
  });
  s.Post("/v1/extender/bind", [extender](const httplib::Request& req, httplib::Response& res) {
    Send(res, extender->Bind(req.body));
  });
  s.Get("/", [extender](const httplib::Request&, httplib::Response& res) {
    Send(res, extender->Paths());
  });
  s.Get(R"(/v1/inspect/.*)", [extender](const httplib::Request& req, httplib::Response& res) {
    Send(res, extender->Inspect(req.path));
  });
  s.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  s.Get("/readyz", [extender](const httplib::Request&, httplib::Response& res) {
    if (extender->ready()) {
      res.set_content("ok\n", "text/plain");
    } else {
      res.status = 503;
      res.set_content("recovering\n", "text/plain");
    }
  });
  s.Get("/metrics", [extender](const httplib::Request&, httplib::Response& res) {
    res.set_content(extender->Metrics(), "text/plain; version=0.0.4");
  });
  // Refusals httplib decides itself (413 body too large, 404 unknown route, 400 malformed
  // request line) get a clear message.
  s.set_error_handler([extender](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    std::string message;
    switch (res.status) {
      case 413:
        message =
            absl::StrCat("request body larger than ", extender->options().max_body_bytes, " bytes");
        break;
      case 404:
        message = absl::StrCat("no such route: ", req.method, " ", req.path);
        break;
      default:
        message = absl::StrCat("malformed request (HTTP ", res.status, ")");
    }
    HttpReply reply = extender->RefuseRequest(res.status, message);
    res.set_content(reply.body, reply.content_type.c_str());
  });
  s.set_exception_handler(
      [extender](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
        std::string what = "unknown exception";
        try {
          if (ep) std::rethrow_exception(ep);
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        extender->CountApiError("exception");
        res.status = 500;
        res.set_content(nlohmann::json{{"Error", absl::StrCat(kPlatformErrorPrefix, what)}}.dump(),
                        "application/json");
      });
}

HttpServer::~HttpServer() = default;

bool HttpServer::valid() const { return impl_->server != nullptr && impl_->server->is_valid(); }

int HttpServer::BindToPort(const std::string& host, int port) {
  if (!valid()) return -1;
  if (port == 0) return impl_->server->bind_to_any_port(host.c_str());
  return impl_->server->bind_to_port(host.c_str(), port) ? port : -1;
}

bool HttpServer::Listen() { return valid() && impl_->server->listen_after_bind(); }

void HttpServer::Stop() {
  if (impl_->server != nullptr) impl_->server->stop();
}

bool ParseListenAddress(const std::string& address, std::string* host, int* port) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos) return false;
  *host = address.substr(0, colon);
  if (host->empty()) *host = "0.0.0.0";
  std::string p = address.substr(colon + 1);
  if (p.empty() || p.size() > 5 || p.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  *port = std::atoi(p.c_str());
  return *port <= 65535;
}

}  // namespace hived::server
