// libFuzzer: the config loader (JSON documents and --set assignments) on arbitrary bytes.
// Anything accepted must survive a save/load round trip unchanged.
#include <cstddef>
#include <cstdint>
#include <string>

#include "nmt/base/config.h"
#include "nmt/base/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto document = nlohmann::json::parse(text, nullptr, false);
  if (!document.is_discarded()) {
    try {
      const auto config = nmt::config_from_json(document, "<fuzz>");
      const auto saved = nmt::config_to_json(config);
      if (nmt::config_to_json(nmt::config_from_json(saved, "<saved>")) != saved) __builtin_trap();
      try {
        config.validate();
      } catch (const nmt::Error&) {
      }
    } catch (const nmt::Error&) {
    }
  }
  nmt::Config config;
  try {
    nmt::apply_override(config, text);
  } catch (const nmt::Error&) {
  }
  return 0;
}
