#pragma once
// The settings of a search that many batches share: beam, n-best, penalties, length limits,
// the strategy and sampling's. Plain values, free of LibTorch, so that the server's request
// checks (and their fuzz harness) read and compare them without it. Each field a user can
// choose is described once, for every tool's flags and the server's JSON, in
// search_option_table.h.
#include <cstdint>
#include <string>

namespace nmt {

/// Random sampling (the "sample" strategy): at each step the next token is drawn from the
/// model's distribution, sharpened or flattened by the temperature and cut to the top-k
/// tokens and then to the nucleus (top-p). Each (input line, sample) has its own random
/// stream, from the seed and the line number, so the output does not depend on batching.
struct SamplingOptions {
  int top_k = 0;             // keep the k most probable tokens (ties at the k-th kept); 0 = all
  double top_p = 1.0;        // then the fewest most probable tokens whose mass reaches p; 1 = all
  double temperature = 1.0;  // log-probs divided by it before sampling; < 1 sharper, > 1 flatter
  uint64_t seed = 0;
};

struct SearchOptions {
  int beam = 5;                   // hypotheses kept open per sentence
  int nbest = 1;                  // hypotheses returned per sentence (<= beam)
  double alpha = 0.6;             // GNMT length penalty ((5+len)/6)^alpha; 0 = raw log-prob sum
  double coverage = 0.0;          // GNMT coverage penalty beta; ignored for models without attention
  double max_length_ratio = 2.0;  // max target length = ratio * source length + extra ...
  int max_length_extra = 10;      // ... counted without eos
  int min_length = 0;             // eos is forbidden before this many tokens
  bool keep_attention = false;    // hypotheses carry their attention (see Hypothesis)
  std::string strategy;           // a registered strategy (strategy.h); empty: greedy for beam 1, else beam
  SamplingOptions sampling;       // strategy "sample" only; nbest = samples per line (beam unused)
  /// Throws nmt::Error naming the first bad field.
  void validate() const;
};

}  // namespace nmt
