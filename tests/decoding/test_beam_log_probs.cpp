// Every beam hypothesis's per-token log-probs are what the model gives its own tokens:
// the searches' shortcuts (first step at batch size, rows expanded and reordered,
// attention skipped when not kept, sentences leaving the batch) must not change the
// numbers. Checked against forced decoding, which steps one sentence on one row.
#include "support/catch.h"
#include <torch/torch.h>

#include "nmt/models/registry.h"
#include "nmt/decoding/translator.h"
#include "nmt/text/batching.h"
#include "support/tiny_task.h"
#include "support/test_device.h"

using namespace nmt;
using nmt::test::ScratchDir;

TEST_CASE("beam hypotheses' token log-probs equal forced decoding", "[translator][search]") {
  NMT_TEST_DEVICE_OR_SKIP(device);
  ScratchDir dir;
  test::make_tiny_task(dir, 100);
  const std::vector<std::string> lines{"seven hundred two", "forty-one thousand", "nine",
                                       "three hundred sixty-five thousand eleven"};
  for (const auto& arch : model_family_names()) {  // every registered family
    DYNAMIC_SECTION(arch) {
      TranslateOptions options;
      options.search.beam = 4;
      options.search.nbest = 4;
      options.search.max_length_extra = 4;
      Translator translator(set_up_for_inference(test::random_model(dir, arch, 5), Precision::fp32, device), options);
      for (const auto& t : translator.translate(lines)) {
        std::vector<const std::vector<int>*> row{&t.source_ids};
        const auto source = pad_sequences(row, -1, SpecialIds::kEos).to(device);
        REQUIRE(!t.hypotheses.empty());
        for (size_t k = 0; k < t.hypotheses.size(); ++k) {
          INFO("hypothesis " << k);
          const auto& h = t.hypotheses[k];
          // Forced decoding appends eos; a cut hypothesis is compared on its own tokens.
          const auto forced = force_decode(translator.network(), source, h.tokens, false);
          REQUIRE(forced.token_log_probs.size() >= h.token_log_probs.size());
          for (size_t i = 0; i < h.token_log_probs.size(); ++i)
            CHECK(h.token_log_probs[i] == Approx(forced.token_log_probs[i]).margin(1e-5));
        }
      }
    }
  }
}
