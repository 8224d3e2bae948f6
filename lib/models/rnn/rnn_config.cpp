#include "nmt/models/rnn/rnn_config.h"

namespace nmt {
namespace {
// At load, before any config is read.
const ConfigSectionRegistration rnn_config_section(config_section_type<RnnConfig>());
}  // namespace
}  // namespace nmt
