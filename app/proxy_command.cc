#include <fmt/format.h>
#include <malloc.h>

#include <cstdio>
#include <memory>

#include "app/commands.h"
#include "proxy/log.h"
#include "proxy/server.h"
#include "settings/server_config.h"
#include "web/web_server.h"

namespace kanon::app {
namespace {

struct ProxyOptions {
  std::string config = "config/kanon.yaml";
  std::string listen;
  std::string backend;
  std::string log_level;
};

}  // namespace

void add_proxy_command(CLI::App& app) {
  auto opts = std::make_shared<ProxyOptions>();
  CLI::App* cmd = app.add_subcommand("proxy", "Run the PostgreSQL wire-protocol proxy");
  cmd->add_option("-c,--config", opts->config, "Server configuration file (YAML)")
      ->capture_default_str();
  cmd->add_option("--listen", opts->listen, "HOST:PORT to accept clients on (overrides listen:)");
  cmd->add_option("--backend", opts->backend,
                  "HOST:PORT of the PostgreSQL server (overrides backend:)");
  cmd->add_option("--log-level", opts->log_level, "debug, info, warning or error")
      ->check(CLI::IsMember({"debug", "info", "warning", "error"}));
  cmd->callback([opts] {
    try {
      settings::ServerConfig config = settings::load_server_config(opts->config);
      auto& line = config.command_line;
      if (!opts->listen.empty()) line.listen = settings::parse_endpoint(opts->listen, "--listen");
      if (!opts->backend.empty())
        line.backend = settings::parse_endpoint(opts->backend, "--backend");
      line.log_level = settings::log_level_from_string(opts->log_level);
      settings::apply_command_line(config);
      proxy::set_log_level(config.log_level);
      // The rewriter's parser allocates and frees a few hundred KB per
      // statement; without these glibc hands that memory back to the kernel
      // on every statement (measured in bench/rewriter: it dominates p99).
      mallopt(M_TRIM_THRESHOLD, 64 << 20);
      mallopt(M_MMAP_THRESHOLD, 32 << 20);
      const settings::WebConfig web = config.web;
      proxy::Server server(std::move(config));
      if (web.enabled())
        server.attach(std::make_unique<web::WebServer>(server.io(), server.context(), web));
      server.run();
    } catch (const std::exception& e) {
      fmt::print(stderr, "kanon proxy: {}\n", e.what());
      throw CLI::RuntimeError(1);
    }
  });
}

}  // namespace kanon::app
