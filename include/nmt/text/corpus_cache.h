#pragma once
// Raw parallel text in, a prepared corpus out: prepared on first use, reused after.
//
// The cache file's name says what it was made from (the two files' absolute paths and
// the two tokenizers), so runs on other data or tokenizers never collide. A cached file
// that no longer matches its sources (size or modification time) or is damaged is
// prepared again, with a line saying why. Preparing holds a lock on the cache directory:
// a second process (another run, another rank on this host) waits for it and then uses
// the same file.
#include <functional>
#include <memory>
#include <string>

#include "nmt/text/prepared_corpus.h"

namespace nmt {

struct CorpusCacheRequest {
  std::string source_path, target_path;
  const Tokenizer* source_tokenizer = nullptr;
  const Tokenizer* target_tokenizer = nullptr;
  std::string cache_dir;
  std::string role;  ///< "train" or "valid": the start of the file name
  int threads = 1;
  std::function<void(const std::string&)> log;
};

/// The cache file a request maps to (it may not exist yet).
std::string cached_corpus_path(const CorpusCacheRequest& request);

/// Opens the cached corpus, preparing it first if it is missing, stale or damaged.
/// Directories it creates are removed again if preparing fails (a failed start leaves
/// nothing behind). Throws nmt::Error.
std::shared_ptr<const PreparedCorpus> open_cached_corpus(const CorpusCacheRequest& request);

}  // namespace nmt
