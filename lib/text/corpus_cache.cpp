#include "nmt/text/corpus_cache.h"

#include <cstdio>
#include <filesystem>

#include "nmt/base/atomic_file.h"
#include "nmt/base/directory_lock.h"
#include "nmt/base/error.h"
#include "nmt/base/new_directories.h"
#include "nmt/base/sealed_file.h"
#include "nmt/base/stable_hash.h"
#include "nmt/text/parallel_lines.h"
#include "nmt/text/tokenizer.h"

namespace nmt {
namespace {

// The cached file if it can be used as it is, else null and `why` says what is wrong.
std::shared_ptr<const PreparedCorpus> usable(const std::string& path, const CorpusCacheRequest& r,
                                             std::string& why) {
  if (!std::filesystem::exists(path)) {
    why = "not prepared yet";
    return nullptr;
  }
  try {
    auto corpus = PreparedCorpus::open(path);
    why = mismatch_reason(corpus->info(), describe_source(r.source_path), describe_source(r.target_path),
                          *r.source_tokenizer, *r.target_tokenizer);
    return why.empty() ? corpus : nullptr;
  } catch (const Error& e) {
    why = e.what();
    return nullptr;
  }
}

}  // namespace

std::string cached_corpus_path(const CorpusCacheRequest& r) {
  const auto key = describe_source(r.source_path).path + "\n" + describe_source(r.target_path).path + "\n" +
                   std::to_string(crc32_of(r.source_tokenizer->serialized())) + "\n" +
                   std::to_string(crc32_of(r.target_tokenizer->serialized()));
  char name[64];
  std::snprintf(name, sizeof name, "%s-%016llx.nmtc", r.role.c_str(), static_cast<unsigned long long>(stable_hash(key)));
  return (std::filesystem::path(r.cache_dir) / name).string();
}

std::shared_ptr<const PreparedCorpus> open_cached_corpus(const CorpusCacheRequest& r) {
  const auto path = cached_corpus_path(r);  // also checks that both sources exist
  std::string why;
  if (auto corpus = usable(path, r, why)) {
    if (r.log) r.log("using the prepared corpus " + path);
    return corpus;
  }
  const NewDirectories created(r.cache_dir);
  created.create();
  try {
    const auto lock = DirectoryLock::wait_for(r.cache_dir);
    if (auto corpus = usable(path, r, why)) {  // prepared by another process meanwhile
      if (r.log) r.log("using the prepared corpus " + path + " (prepared by another process)");
      return corpus;
    }
    for (const auto& name : remove_stale_temporaries(r.cache_dir))
      if (r.log) r.log("removed " + r.cache_dir + "/" + name + " (left by an interrupted preparation)");
    if (r.log)
      r.log("preparing " + parallel_files_name(r.source_path, r.target_path) + " into " + path + " (" + why + ") on " +
            std::to_string(r.threads) + " threads");
    PrepareOptions options;
    options.source_path = r.source_path;
    options.target_path = r.target_path;
    options.output_path = path;
    options.source_tokenizer = r.source_tokenizer;
    options.target_tokenizer = r.target_tokenizer;
    options.threads = r.threads;
    options.log = r.log;
    const auto report = prepare_corpus(options);
    if (r.log) r.log("prepared " + path + ": " + describe(report));
    return PreparedCorpus::open(path);
  } catch (...) {
    created.remove_empty();  // what another process left there stays
    throw;
  }
}

}  // namespace nmt
