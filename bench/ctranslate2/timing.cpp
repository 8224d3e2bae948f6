// CTranslate2's side of bench/ctranslate2_compare.sh: text in, text out, timed as nmt-translate
// times itself (model loading excluded; SentencePiece, batching, search and detokenizing
// included). Translates with CTranslate2's own file loop (Translator::translate_raw_text_file,
// the loop ct2-translator runs on pre-tokenized input) and our SentencePiece models.
// Built by bench/ctranslate2_compare.sh against a CTranslate2 install; never by the project.
// Usage: timing MODEL_DIR THREADS COMPUTE_TYPE BEAM BATCH_SIZE BATCH_TYPE LENGTH_PENALTY < in > out
// Prints on stderr: "translated N sentences, T target tokens in S s: R sentences/s".
#include <cstdlib>
#include <ctranslate2/translator.h>
#include <sentencepiece_processor.h>

#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

void load_pieces(sentencepiece::SentencePieceProcessor& processor, const std::string& path) {
  if (!processor.Load(path).ok()) throw std::runtime_error("cannot load " + path);
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc != 8) {
    std::cerr << "usage: timing MODEL_DIR THREADS COMPUTE_TYPE BEAM BATCH_SIZE BATCH_TYPE LENGTH_PENALTY\n";
    return 2;
  }
  const std::string directory = argv[1];
  ctranslate2::models::ModelLoader loader(directory);
  loader.device = ctranslate2::Device::CPU;
  loader.compute_type = ctranslate2::str_to_compute_type(argv[3]);
  loader.num_replicas_per_device = 1;  // one translator
  ctranslate2::ReplicaPoolConfig pool;
  pool.num_threads_per_replica = std::stoul(argv[2]);
  ctranslate2::Translator translator(loader, pool);

  sentencepiece::SentencePieceProcessor source, target;
  load_pieces(source, directory + "/source_spm.model");
  load_pieces(target, directory + "/target_spm.model");
  auto tokenize = [&](const std::string& line) {
    std::vector<std::string> pieces;
    source.Encode(line, &pieces);
    return pieces;
  };
  auto detokenize = [&](const std::vector<std::string>& pieces) {
    std::string text;
    target.Decode(pieces, &text);
    return text;
  };

  ctranslate2::TranslationOptions options;
  options.beam_size = std::stoul(argv[4]);
  options.length_penalty = std::stof(argv[7]);
  // Our searches never emit padding (id 0) or <s> (id 2); neither does this one.
  options.suppress_sequences = {{target.IdToPiece(0)}, {target.IdToPiece(2)}};
  // CT2_USE_VMAP=1: the model directory's vmap.txt (nmt-export --shortlist) limits the candidates.
  const char* use_vmap = std::getenv("CT2_USE_VMAP");
  options.use_vmap = use_vmap != nullptr && std::string(use_vmap) == "1";
  const auto stats = translator.translate_raw_text_file(std::cin, std::cout, tokenize, detokenize, options,
                                                        std::stoul(argv[5]), 0,
                                                        ctranslate2::str_to_batch_type(argv[6]));
  std::cout.flush();
  const double seconds = stats.total_time_in_ms / 1000.0;
  std::cerr << "translated " << stats.num_examples << " sentences, " << stats.num_tokens << " target tokens in "
            << seconds << " s: " << stats.num_examples / seconds << " sentences/s\n";
  return 0;
} catch (const std::exception& error) {
  std::cerr << "timing: error: " << error.what() << "\n";
  return 1;
}
