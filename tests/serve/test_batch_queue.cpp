// BatchQueue: answers in order, batches only equal options, respects the token limit,
// batches concurrent requests, drains on stop and refuses after it.
#include "support/catch.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "nmt/serve/batch_queue.h"

using namespace nmt::serve;

namespace {

// Echoes each line with its beam, and records every batch it was given.
struct FakeBackend {
  struct Batch {
    std::vector<std::string> lines;
    JobOptions options;
    std::vector<LineGuide> guides;
  };
  std::mutex mutex;
  std::vector<Batch> batches;
  std::chrono::milliseconds delay{0};

  BatchBackend backend() {
    return {[this](const std::vector<std::string>& lines, const std::vector<LineGuide>& guides,
                   const std::vector<const AdmittedLine*>& admitted, const JobOptions& options) {
              std::this_thread::sleep_for(delay);
              if (std::find(lines.begin(), lines.end(), "fail") != lines.end()) throw nmt::Error("backend failed");
              // Each line comes with what admit made of it.
              for (size_t i = 0; i < lines.size(); ++i)
                if (std::any_cast<std::string>(admitted.at(i)->prepared) != "admitted " + lines[i])
                  throw nmt::Error("line " + lines[i] + " came without its admitted form");
              {
                std::lock_guard<std::mutex> lock(mutex);
                batches.push_back({lines, options, guides});
              }
              std::vector<LineResult> results;
              for (const auto& line : lines) {
                LineResult r;
                r.hypotheses.push_back({line + "|" + std::to_string(options.search.beam), 0, 0, {}, nullptr});
                results.push_back(r);
              }
              return results;
            },
            [](const std::string& line, const LineGuide& guide) {
              if (guide.prefix == "too long") throw RequestError(413, "prefix too long");
              return AdmittedLine{static_cast<int64_t>(line.size()), std::string("admitted " + line)};
            }};
  }
};

JobOptions with_beam(int beam) {
  JobOptions options;
  options.search.beam = beam;
  return options;
}

std::vector<std::string> texts(const std::vector<LineResult>& results) {
  std::vector<std::string> out;
  for (const auto& r : results) out.push_back(r.hypotheses.front().text);
  return out;
}

}  // namespace

TEST_CASE("each request gets its own lines back in order", "[serve]") {
  FakeBackend fake;
  BatchQueue queue(fake.backend(), {1000, std::chrono::milliseconds(200)});
  auto a = queue.submit({"a1", "a2", "a3"}, with_beam(2));
  auto b = queue.submit({"b1"}, with_beam(2));
  CHECK(texts(a.get()) == std::vector<std::string>{"a1|2", "a2|2", "a3|2"});
  CHECK(texts(b.get()) == std::vector<std::string>{"b1|2"});
  queue.stop();
  REQUIRE(fake.batches.size() == 1);  // queued within max_wait: one batch
  CHECK(fake.batches[0].lines.size() == 4);
}

TEST_CASE("a request of no lines is answered at once, with no lines", "[serve]") {
  FakeBackend fake;
  BatchQueue queue(fake.backend(), {1000, std::chrono::milliseconds(0)});
  auto empty = queue.submit({}, with_beam(2));
  REQUIRE(empty.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  CHECK(empty.get().empty());
  CHECK(texts(queue.submit({"a"}, with_beam(2)).get()) == std::vector<std::string>{"a|2"});
  queue.stop();
}

TEST_CASE("prefixes and constraints travel with their lines through a shared batch", "[serve]") {
  FakeBackend fake;
  BatchQueue queue(fake.backend(), {1000, std::chrono::milliseconds(200)});
  auto a = queue.submit({"a1", "a2"}, with_beam(2), {LineGuide{}, LineGuide{"start", {"word", "two words"}}});
  auto b = queue.submit({"b1"}, with_beam(2));
  a.get();
  b.get();
  CHECK_THROWS_WITH(queue.submit({"c1"}, with_beam(2), {LineGuide{}, LineGuide{}}), HasSubstring("2 line guides for 1 lines"));
  queue.stop();
  REQUIRE(fake.batches.size() == 1);
  const auto& batch = fake.batches[0];
  REQUIRE(batch.guides.size() == 3);
  const auto guide_of = [&](const std::string& line) {  // the batch orders lines by length
    const auto at = std::find(batch.lines.begin(), batch.lines.end(), line);
    REQUIRE(at != batch.lines.end());
    return batch.guides[static_cast<size_t>(at - batch.lines.begin())];
  };
  CHECK((guide_of("a1").prefix.empty() && guide_of("a1").constraints.empty()));
  CHECK(guide_of("a2").prefix == "start");
  CHECK(guide_of("a2").constraints == std::vector<std::string>{"word", "two words"});
  CHECK((guide_of("b1").prefix.empty() && guide_of("b1").constraints.empty()));
}

TEST_CASE("requests with different options are never batched together", "[serve]") {
  FakeBackend fake;
  BatchQueue queue(fake.backend(), {1000, std::chrono::milliseconds(200)});
  JobOptions attention = with_beam(2);
  attention.attention = true;
  auto a = queue.submit({"a"}, with_beam(2));
  auto b = queue.submit({"b"}, with_beam(3));
  auto c = queue.submit({"c"}, with_beam(2));
  auto d = queue.submit({"d"}, attention);
  CHECK(texts(a.get()) == std::vector<std::string>{"a|2"});
  CHECK(texts(b.get()) == std::vector<std::string>{"b|3"});
  CHECK(texts(c.get()) == std::vector<std::string>{"c|2"});
  CHECK(texts(d.get()) == std::vector<std::string>{"d|2"});
  queue.stop();
  REQUIRE(fake.batches.size() == 3);
  for (const auto& batch : fake.batches) {
    if (batch.options == with_beam(2)) CHECK(batch.lines == std::vector<std::string>{"a", "c"});
    else if (batch.options == with_beam(3)) CHECK(batch.lines == std::vector<std::string>{"b"});
    else CHECK(batch.lines == std::vector<std::string>{"d"});
  }
}

TEST_CASE("a batch stays within max_batch_tokens, a bigger request goes alone", "[serve]") {
  FakeBackend fake;
  BatchQueue queue(fake.backend(), {10, std::chrono::milliseconds(30)});
  auto a = queue.submit({"aaaa"}, with_beam(1));          // 4 tokens
  auto b = queue.submit({"bbbb"}, with_beam(1));          // 8 in all
  auto c = queue.submit({"cccc"}, with_beam(1));          // would be 12: next batch
  auto d = queue.submit({"dddddddddddd"}, with_beam(1));  // 12 alone
  for (auto* f : {&a, &b, &c, &d}) f->get();
  queue.stop();
  int64_t largest = 0;
  for (const auto& batch : fake.batches) {
    int64_t tokens = 0;
    for (const auto& line : batch.lines) tokens += static_cast<int64_t>(line.size());
    if (batch.lines.size() > 1) CHECK(tokens <= 10);
    largest = std::max(largest, static_cast<int64_t>(batch.lines.size()));
  }
  CHECK(largest == 2);
}

TEST_CASE("concurrent clients are translated in shared batches", "[serve]") {
  FakeBackend fake;
  fake.delay = std::chrono::milliseconds(20);
  BatchQueue queue(fake.backend(), {100000, std::chrono::milliseconds(20)});
  std::vector<std::thread> clients;
  std::atomic<int> wrong{0};
  for (int c = 0; c < 16; ++c) {
    clients.emplace_back([&, c] {
      for (int r = 0; r < 5; ++r) {
        const std::string line = "c" + std::to_string(c) + "r" + std::to_string(r);
        if (texts(queue.submit({line, line + "b"}, with_beam(4)).get()) != std::vector<std::string>{line + "|4", line + "b|4"})
          ++wrong;
      }
    });
  }
  for (auto& t : clients) t.join();
  queue.stop();
  CHECK(wrong == 0);
  const auto stats = queue.stats();
  CHECK(stats.jobs == 80);
  CHECK(stats.lines == 160);
  CHECK(stats.batches < stats.jobs);
  CHECK(stats.largest_batch_jobs > 1);
}

TEST_CASE("stop answers what is queued, then refuses new requests", "[serve]") {
  FakeBackend fake;
  fake.delay = std::chrono::milliseconds(30);
  BatchQueue queue(fake.backend(), {4, std::chrono::milliseconds(1000)});
  std::vector<std::future<std::vector<LineResult>>> futures;
  for (int i = 0; i < 5; ++i) futures.push_back(queue.submit({"abc" + std::to_string(i)}, with_beam(1)));
  queue.stop();  // does not wait out max_wait, and drops nothing
  for (int i = 0; i < 5; ++i) CHECK(texts(futures[i].get()) == std::vector<std::string>{"abc" + std::to_string(i) + "|1"});
  try {
    queue.submit({"late"}, with_beam(1));
    FAIL("submit after stop was accepted");
  } catch (const RequestError& e) {
    CHECK(e.status() == 503);
  }
}

TEST_CASE("a failing batch fails its requests, not the queue", "[serve]") {
  FakeBackend fake;
  BatchQueue queue(fake.backend(), {1000, std::chrono::milliseconds(0)});
  auto bad = queue.submit({"fail"}, with_beam(1));
  CHECK_THROWS_WITH(bad.get(), "backend failed");
  CHECK(texts(queue.submit({"ok"}, with_beam(1)).get()) == std::vector<std::string>{"ok|1"});
}

TEST_CASE("a request that fails its batch fails alone: the others are answered", "[serve]") {
  FakeBackend fake;
  BatchQueue queue(fake.backend(), {1000, std::chrono::milliseconds(200)});
  auto a = queue.submit({"a1", "a2"}, with_beam(1));
  auto bad = queue.submit({"fail"}, with_beam(1));
  auto b = queue.submit({"b1"}, with_beam(1));
  CHECK(texts(a.get()) == std::vector<std::string>{"a1|1", "a2|1"});
  CHECK_THROWS_WITH(bad.get(), "backend failed");
  CHECK(texts(b.get()) == std::vector<std::string>{"b1|1"});
  queue.stop();
  CHECK(queue.stats().jobs == 3);
  CHECK(queue.stats().lines == 4);
}

TEST_CASE("a line the model cannot take fails its request before batching, naming the line", "[serve]") {
  FakeBackend fake;
  BatchQueue queue(fake.backend(), {1000, std::chrono::milliseconds(200)});
  auto a = queue.submit({"a1"}, with_beam(1));
  auto bad = queue.submit({"b1", "b2"}, with_beam(1), {LineGuide{}, LineGuide{"too long", {}}});
  auto c = queue.submit({"c1"}, with_beam(1));
  CHECK(texts(a.get()) == std::vector<std::string>{"a1|1"});
  try {
    bad.get();
    FAIL("the refused line was translated");
  } catch (const RequestError& e) {
    CHECK(e.status() == 413);
    CHECK(std::string(e.what()) == "line 2 of the request: prefix too long");
  }
  CHECK(texts(c.get()) == std::vector<std::string>{"c1|1"});
  queue.stop();
  REQUIRE(fake.batches.size() == 1);  // a and c together, never b
  CHECK(fake.batches.front().lines == std::vector<std::string>{"a1", "c1"});
}

TEST_CASE("the worker is started once, on its own thread, before its first job", "[serve]") {
  FakeBackend fake;
  auto backend = fake.backend();
  std::atomic<int> starts{0};
  std::thread::id started_on, translated_on;
  auto translate = backend.translate;
  backend.translate = [&](const std::vector<std::string>& lines, const std::vector<LineGuide>& guides,
                          const std::vector<const AdmittedLine*>& admitted, const JobOptions& options) {
    translated_on = std::this_thread::get_id();
    CHECK(starts.load() == 1);
    return translate(lines, guides, admitted, options);
  };
  backend.start_worker = [&] {
    started_on = std::this_thread::get_id();
    ++starts;
  };
  BatchQueue queue(backend, {1000, std::chrono::milliseconds(0)});
  queue.submit({"a"}, with_beam(1)).get();
  queue.submit({"b"}, with_beam(1)).get();
  queue.stop();
  CHECK(starts.load() == 1);
  CHECK(started_on == translated_on);
  CHECK(started_on != std::this_thread::get_id());
}

namespace {

// A backend whose first batch waits until the test opens the gate, so that the test can
// queue jobs behind it; records the lines of every batch in order.
struct GatedBackend {
  std::promise<void> gate;
  std::shared_future<void> opened = gate.get_future().share();
  std::mutex mutex;
  std::vector<std::vector<std::string>> batches;
  std::atomic<int> started{0};

  BatchBackend backend() {
    return {[this](const std::vector<std::string>& lines, const std::vector<LineGuide>&,
                   const std::vector<const AdmittedLine*>&, const JobOptions&) {
              if (started++ == 0) opened.wait();
              {
                std::lock_guard<std::mutex> lock(mutex);
                batches.push_back(lines);
              }
              std::vector<LineResult> results(lines.size());
              for (size_t i = 0; i < lines.size(); ++i) results[i].hypotheses.push_back({lines[i], 0, 0, {}, nullptr});
              return results;
            },
            [](const std::string& line, const LineGuide&) { return AdmittedLine{static_cast<int64_t>(line.size()), {}}; }};
  }
  // The index of the batch that held `line`, or -1.
  int batch_of(const std::string& line) {
    std::lock_guard<std::mutex> lock(mutex);
    for (size_t b = 0; b < batches.size(); ++b)
      if (std::find(batches[b].begin(), batches[b].end(), line) != batches[b].end()) return static_cast<int>(b);
    return -1;
  }
};

RequestOrigin from(const std::string& client, uint64_t connection) { return RequestOrigin{client, connection, nullptr}; }

void wait_until_started(GatedBackend& gated) {
  while (gated.started.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace

TEST_CASE("a client sending one line is served next, however many jobs others keep queued", "[serve]") {
  for (const bool same_address : {false, true}) {
    GatedBackend gated;
    BatchQueue queue(gated.backend(), {4, std::chrono::milliseconds(0)});  // one 4-token line per batch
    std::vector<std::future<std::vector<LineResult>>> answers;
    answers.push_back(queue.submit({"g000"}, with_beam(5), {}, from("10.0.0.1", 1)));
    wait_until_started(gated);  // the worker is in the greedy connection's first batch
    for (int i = 1; i <= 12; ++i) {
      const auto line = "g" + std::string(i < 10 ? "00" : "0") + std::to_string(i);
      answers.push_back(queue.submit({line}, with_beam(5), {}, from("10.0.0.1", 1 + i % 3)));
    }
    answers.push_back(queue.submit({"pol1"}, with_beam(5), {}, from(same_address ? "10.0.0.1" : "10.0.0.2", 9)));
    gated.gate.set_value();
    for (auto& answer : answers) answer.get();
    queue.stop();
    INFO((same_address ? "the polite client shares the greedy ones' address" : "another address"));
    // First come, first served would put it last (batch 13); fairly, it comes after at
    // most a job or two of each of the three greedy connections.
    CHECK(gated.batch_of("pol1") >= 1);
    CHECK(gated.batch_of("pol1") <= 5);
  }
}

TEST_CASE("a job whose client went away is dropped before it is translated", "[serve]") {
  GatedBackend gated;
  BatchQueue queue(gated.backend(), {4, std::chrono::milliseconds(0)});
  auto first = queue.submit({"aaaa"}, with_beam(1), {}, from("10.0.0.1", 1));
  wait_until_started(gated);
  auto gone = std::make_shared<std::atomic<bool>>(false);
  auto left = queue.submit({"left"}, with_beam(1), {}, RequestOrigin{"10.0.0.2", 2, gone});
  auto stays = queue.submit({"stay"}, with_beam(1), {}, from("10.0.0.3", 3));
  gone->store(true);  // its connection closed while it waited
  gated.gate.set_value();
  CHECK(texts(first.get()) == std::vector<std::string>{"aaaa"});
  CHECK(texts(stays.get()) == std::vector<std::string>{"stay"});
  CHECK_THROWS_WITH(left.get(), HasSubstring("went away"));
  queue.stop();
  CHECK(gated.batch_of("left") == -1);
  CHECK(queue.stats().abandoned == 1);
  CHECK(queue.stats().jobs == 2);
}

TEST_CASE("one client address may queue at most max_client_queued_lines lines", "[serve]") {
  GatedBackend gated;
  BatchSettings settings{1000, std::chrono::milliseconds(0)};
  settings.max_client_queued_lines = 3;
  BatchQueue queue(gated.backend(), settings);
  auto a = queue.submit({"a1", "a2"}, with_beam(1), {}, from("10.0.0.1", 1));
  wait_until_started(gated);
  auto b = queue.submit({"b1"}, with_beam(1), {}, from("10.0.0.1", 2));  // 3 lines: at the limit
  try {
    queue.submit({"c1"}, with_beam(1), {}, from("10.0.0.1", 3));
    FAIL("a fourth line was queued");
  } catch (const RequestError& e) {
    CHECK(e.status() == 429);
    CHECK_THAT(std::string(e.what()), HasSubstring("--max-client-queued-lines"));
  }
  auto other = queue.submit({"d1", "d2", "d3"}, with_beam(1), {}, from("10.0.0.2", 4));  // another address
  gated.gate.set_value();
  a.get();
  b.get();
  other.get();
  // Answered lines leave the budget.
  CHECK(texts(queue.submit({"e1", "e2", "e3"}, with_beam(1), {}, from("10.0.0.1", 1)).get()).size() == 3);
}

TEST_CASE("the worker's idle hook runs once it has answered everything queued and nothing came for a while", "[serve]") {
  FakeBackend fake;
  auto backend = fake.backend();
  std::atomic<int> idles{0};
  backend.idle = [&] { ++idles; };
  BatchSettings settings{1000, std::chrono::milliseconds(0)};
  settings.idle_delay = std::chrono::seconds(2);  // only later than this, however loaded the machine
  BatchQueue queue(backend, settings);
  CHECK(idles.load() == 0);  // not before any work
  queue.submit({"a"}, with_beam(1)).get();
  CHECK(idles.load() == 0);  // not between the batches of a busy server
  queue.submit({"b"}, with_beam(1)).get();
  CHECK(idles.load() == 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (idles.load() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  CHECK(idles.load() == 1);
  queue.stop();
  CHECK(idles.load() == 1);  // not again without work
}

TEST_CASE("a request is answered once its own lines are done: it joins the next pass, not the next batch", "[serve]") {
  // Passes of 8 padded tokens from a pool of 4 passes' worth. The first job's short lines
  // are in the first pass; a one-line request that comes meanwhile shares the next pass
  // with the first job's long lines, and is answered before that job is.
  GatedBackend gated;
  BatchSettings settings{8, std::chrono::milliseconds(0)};
  settings.maxi_batch = 4;
  BatchQueue queue(gated.backend(), settings);
  std::vector<std::string> lines{"aa", "ab", "ac", "ad", "aaaa", "aaab", "aaac", "aaad", "aaae", "aaaf"};
  std::atomic<int> order{0};
  int first_answered = -1, polite_answered = -1;
  std::promise<void> both;
  std::atomic<int> left{2};
  queue.submit(lines, with_beam(1), {}, [&](std::vector<LineResult> results, std::exception_ptr) {
    CHECK(texts(results) == lines);
    first_answered = order++;
    if (--left == 0) both.set_value();
  }, from("10.0.0.1", 1));
  wait_until_started(gated);  // the pass of the four 2-token lines
  queue.submit({"pppp"}, with_beam(1), {}, [&](std::vector<LineResult> results, std::exception_ptr) {
    CHECK(texts(results) == std::vector<std::string>{"pppp"});
    polite_answered = order++;
    if (--left == 0) both.set_value();
  }, from("10.0.0.2", 2));
  gated.gate.set_value();
  both.get_future().get();
  queue.stop();
  CHECK(gated.batch_of("pppp") == 1);
  CHECK(polite_answered == 0);
  CHECK(first_answered == 1);
  for (const auto& pass : gated.batches) {
    int64_t longest = 0;
    for (const auto& line : pass) longest = std::max(longest, static_cast<int64_t>(line.size()));
    CHECK(longest * static_cast<int64_t>(pass.size()) <= 8);
  }
  CHECK(queue.stats().jobs == 2);
}
