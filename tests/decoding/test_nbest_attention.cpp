// With keep_attention, every n-best hypothesis carries its own attention (the rows the
// model produced along that hypothesis), not the best one's: nmt-serve's page switches
// between them. Checked against forced decoding of each hypothesis.
#include "support/catch.h"
#include <torch/torch.h>

#include "nmt/decoding/translator.h"
#include "nmt/text/batching.h"
#include "support/tiny_task.h"
#include "support/test_device.h"

using namespace nmt;
using nmt::test::ScratchDir;

TEST_CASE("every n-best hypothesis has the attention of its own tokens", "[translator][attention]") {
  NMT_TEST_DEVICE_OR_SKIP(device);
  ScratchDir dir;
  test::make_tiny_task(dir, 100);
  for (const auto& arch : test::families_with_attention()) {
    DYNAMIC_SECTION(arch) {
      TranslateOptions options;
      options.search.beam = 4;
      options.search.nbest = 4;
      options.search.max_length_extra = 4;
      options.search.keep_attention = true;
      Translator translator(set_up_for_inference(test::random_model(dir, arch, 5), Precision::fp32, device), options);
      const auto results = translator.translate({"seven hundred two", "forty-one thousand"});
      for (const auto& t : results) {
        REQUIRE(t.hypotheses.size() == 4);
        std::vector<const std::vector<int>*> row{&t.source_ids};
        const auto source = pad_sequences(row, -1, SpecialIds::kEos).to(device);
        for (size_t k = 0; k < t.hypotheses.size(); ++k) {
          INFO("hypothesis " << k);
          const auto& h = t.hypotheses[k];
          REQUIRE(h.attention.defined());
          REQUIRE(h.attention.size(0) == static_cast<int64_t>(h.token_log_probs.size()));
          REQUIRE(h.attention.size(1) == static_cast<int64_t>(t.source_ids.size() + 1));
          if (!h.finished) continue;  // forced decoding always ends with eos
          const auto forced = force_decode(translator.network(), source, h.tokens, true);
          CHECK(torch::allclose(h.attention, forced.attention, 1e-4, 1e-5));
          REQUIRE(h.layer_attention.size() == forced.layer_attention.size());
          for (size_t l = 0; l < h.layer_attention.size(); ++l)
            CHECK(torch::allclose(h.layer_attention[l], forced.layer_attention[l], 1e-4, 1e-5));
        }
      }
    }
  }
}
