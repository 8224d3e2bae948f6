// nmt-serve's command line (apps/nmt-serve.cpp calls run): a translation server (JSON API, OpenNMT-py's REST shape, a page with the
// attention heatmap) over one checkpoint; docs/serve.md describes the API.
#include "nmt/serve/serve_tool.h"

#include <ATen/Parallel.h>
#include <pthread.h>
#include <signal.h>

#include <cstring>
#include <iostream>
#include <thread>

#include "nmt/base/process_setup.h"
#include "nmt/base/cli.h"
#include "nmt/base/error.h"
#include "nmt/base/free_memory.h"
#include "nmt/decoding/search_flags.h"
#include "nmt/models/inference_flags.h"
#include "nmt/serve/batch_queue.h"
#include "nmt/serve/http_server.h"
#include "nmt/serve/translation_service.h"

namespace nmt::tools::serve_tool {
namespace {

// Freed memory the allocator may keep between requests: about what one batch of
// --max-batch-tokens takes at beam 5 (larger batches are rare, and pay a few page faults).
constexpr size_t kKeepFreeBytes = 64u << 20;

// Blocked in every thread (blocked first thing in main, before LibTorch or anything else
// starts one, so the kernel cannot hand one of them the signal), taken by one sigwait()
// thread.
sigset_t shutdown_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);   // the terminal went away: drain as for SIGTERM
  sigaddset(&set, SIGUSR1);  // main's own wake-up when serving ended without a signal
  return set;
}

// Serves until SIGINT/SIGTERM/SIGHUP, then lets the requests in flight finish.
void serve_until_signal(nmt::serve::HttpServer& server, const sigset_t& signals) {
  std::thread waiter([&] {
    int signal = 0;
    sigwait(&signals, &signal);
    if (signal == SIGUSR1) return;
    // Stop first: saying so may fail (stderr a closed pipe), and must not come before it.
    std::thread stopping([&] { server.stop(); });
    nmt::cli::print_line(std::string("nmt-serve: ") + strsignal(signal) + ": no new connections, finishing requests in flight");
    stopping.join();
  });
  // However serving ends (a throw included), the waiter is woken and joined.
  struct JoinWaiter {
    std::thread& waiter;
    ~JoinWaiter() {
      pthread_kill(waiter.native_handle(), SIGUSR1);  // ignored if it already returned
      waiter.join();
    }
  } join{waiter};
  server.serve();
}

}  // namespace

int run(int argc, char** argv) {
  nmt::set_up_process();  // before any LibTorch operation: the NMT_CPU_ISA cap reaches oneDNN
  const sigset_t signals = shutdown_signals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // before any thread exists
  // A client or a log reader that went away is an error on that write, never the end of
  // the server (sockets are written with MSG_NOSIGNAL; this covers stdout and stderr).
  signal(SIGPIPE, SIG_IGN);
  CLI::App app{"Translation server: POST /v1/translate (JSON), POST /translator/translate (OpenNMT-py's REST shape),\n"
               "GET /health, GET /v1/model, and GET / a page with the n-best list and the attention heatmap.\n"
               "Requests are batched together on one translation thread. SIGINT/SIGTERM/SIGHUP: stop accepting,\n"
               "answer what is in flight, exit 0. API: docs/serve.md",
               "nmt-serve"};
  nmt::cli::CommonOptions common;
  nmt::cli::add_common_options(app, common);
  nmt::serve::ServerSettings settings;
  nmt::serve::BatchSettings batching;
  nmt::TranslateOptions base;
  int max_wait_ms = 5;
  auto& d = settings.defaults;
  const nmt::InferenceFlags model_flags(app, nmt::ModelFlagCount::one);
  app.add_option("--host", settings.host, "Address to listen on (loopback by default; 0.0.0.0 for all)")->capture_default_str();
  app.add_option("--port", settings.port, "Port (0 = any free one, printed at start)")->check(nmt::cli::in_range(0, 65535))->capture_default_str();
  app.add_option("--max-connections", settings.max_connections, "Open connections, all clients together (capped by ulimit -n)")
      ->check(nmt::cli::in_range(1, 1000000))->capture_default_str();
  app.add_option("--max-client-connections", settings.max_client_connections,
                 "Open connections from one client address (more: HTTP 503)")
      ->check(nmt::cli::in_range(1, 1000000))->capture_default_str();
  app.add_option("--request-timeout", settings.request_timeout_s,
                 "Seconds for a request's head and body to arrive (from its first byte; else HTTP 408), and for an answer to be taken")
      ->check(nmt::cli::in_range(0.1, 3600.0))->capture_default_str();
  app.add_option("--idle-timeout", settings.idle_timeout_s, "Seconds a keep-alive connection may wait between requests")
      ->check(nmt::cli::in_range(0.1, 3600.0))->capture_default_str();
  app.add_option("--max-batch-tokens", batching.max_batch_tokens,
                 "Padded source tokens translated in one pass, across requests; less: a request waits less for the "
                 "pass in flight, more: the cores are used better")
      ->check(nmt::cli::positive())->capture_default_str();
  app.add_option("--maxi-batch", batching.maxi_batch,
                 "Passes' worth of queued lines sorted by length together (Marian's maxi-batch): more, less padding; "
                 "a request is answered once its own lines are done")
      ->check(nmt::cli::in_range(1, 1000))->capture_default_str();
  app.add_option("--max-wait-ms", max_wait_ms, "Longest a request waits for others to batch with")
      ->check(nmt::cli::at_least(0))->capture_default_str();
  nmt::add_search_flags(app, d.search, nmt::SearchOptionUse::serve);
  std::string shortlist_path;
  nmt::add_shortlist_flag(app, shortlist_path);
  app.add_option("--max-lines", settings.limits.max_lines, "Most lines per request (more: HTTP 413)")
      ->check(nmt::cli::positive())->capture_default_str();
  app.add_option("--max-line-bytes", settings.limits.max_line_bytes, "Most bytes per line (more: HTTP 413)")
      ->check(nmt::cli::positive())->capture_default_str();
  app.add_option("--max-beam-lines", settings.limits.max_beam_lines,
                 "Most lines x beam per request, what its search costs (more: HTTP 413)")
      ->check(nmt::cli::positive())->capture_default_str();
  app.add_option("--max-attention-hypotheses", settings.limits.max_attention_hypotheses,
                 "Most lines x nbest per request with \"attention\" (more: HTTP 413)")
      ->check(nmt::cli::positive())->capture_default_str();
  app.add_option("--max-client-queued-lines", batching.max_client_queued_lines,
                 "Lines waiting to be translated from one client address (more: HTTP 429)")
      ->check(nmt::cli::positive())->capture_default_str();
  app.add_option("--max-input-tokens", base.max_input_tokens, "Longer inputs are truncated (with a warning in the answer)")
      ->check(nmt::cli::positive())->capture_default_str();
  return nmt::cli::run(app, common, argc, argv, [&] {
    if (d.search.beam > settings.limits.max_beam)
      throw nmt::Error("--beam " + std::to_string(d.search.beam) + " is more than a request may choose (" +
                       std::to_string(settings.limits.max_beam) + ")");
    if (d.search.nbest > d.search.beam)
      throw nmt::Error("--nbest " + std::to_string(d.search.nbest) + " must be <= --beam " + std::to_string(d.search.beam));
    d.search.validate();
    base.search = d.search;
    // Else a full request with the defaults (and every /translator/translate request of
    // --max-lines) would be refused.
    try {
      nmt::serve::check_request_cost(settings.limits.max_lines, d, settings.limits);
    } catch (const nmt::serve::RequestError& e) {
      throw nmt::Error(std::string("a request of --max-lines with the defaults would be refused: ") + e.what());
    }
    base.batch_tokens = batching.max_batch_tokens;
    batching.max_wait = std::chrono::milliseconds(max_wait_ms);
    const auto model = model_flags.load();
    if (!shortlist_path.empty()) {
      base.shortlist = nmt::read_shortlist(shortlist_path, model->loaded());
      if (model_flags.verbose())
        nmt::cli::print_line("nmt-serve: shortlist " + shortlist_path + ": " + describe(*base.shortlist));
    }
    nmt::serve::TranslationService service(model, base);
    const auto model_info = service.describe();  // now: afterwards only the worker touches the model
    const int threads = at::get_num_threads();
    nmt::serve::BatchBackend backend{
        [&service](const std::vector<std::string>& lines, const std::vector<nmt::serve::LineGuide>&,
                   const std::vector<const nmt::serve::AdmittedLine*>& admitted,
                   const nmt::serve::JobOptions& options) { return service.translate(lines, admitted, options); },
        [&service](const std::string& line, const nmt::serve::LineGuide& guide) { return service.admit(line, guide); },
        [threads] { at::set_num_threads(threads); },  // the worker's one OpenMP pool
        // Out of work: what a large request's peak left free goes back to the system.
        [releaser = nmt::FreeMemoryReleaser(kKeepFreeBytes)] { releaser.release_if_over(); }};
    nmt::serve::BatchQueue queue(std::move(backend), batching);
    nmt::serve::HttpServer server(queue, model_info, settings);
    server.bind();
    // The readiness line: scripts and supervisors wait for it and read the address from it.
    nmt::cli::print_line("nmt-serve: listening on http://" + settings.host + ":" + std::to_string(server.port()) + " (" +
                         model_flags.model_path() + ", " + std::to_string(threads) + " threads, at most " +
                         std::to_string(server.max_connections()) + " connections, " +
                         std::to_string(settings.max_client_connections) + " per client address)");
    serve_until_signal(server, signals);
    queue.stop();
    const auto stats = queue.stats();
    nmt::cli::print_line("nmt-serve: stopped after " + std::to_string(stats.jobs) + " translation requests in " +
                         std::to_string(stats.batches) + " batches");
    return 0;
  });
}

}  // namespace nmt::tools::serve_tool
