#include "nmt/models/transformer/transformer_config.h"

namespace nmt {
namespace {
// At load, before any config is read.
const ConfigSectionRegistration transformer_config_section(config_section_type<TransformerConfig>());
}  // namespace
}  // namespace nmt
