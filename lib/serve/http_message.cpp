#include "nmt/serve/http_message.h"

namespace nmt::serve {

std::string HttpRequest::path() const { return target.substr(0, target.find('?')); }

const std::string* HttpRequest::header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (key == name) return &value;
  return nullptr;
}

}  // namespace nmt::serve
