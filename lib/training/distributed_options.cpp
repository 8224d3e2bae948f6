// Where a process sits in a distributed run: its launcher's variables (torchrun's, or
// Slurm's under srun) read and checked.
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "nmt/base/error.h"
#include "nmt/training/distributed.h"

namespace nmt {
namespace {

long parse_integer(const std::string& text, const std::string& what) {
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0) throw Error(what + " must be an integer, got '" + text + "'");
  return value;
}

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

}  // namespace

void DistributedOptions::validate() const {
  if (world_size < 1) throw Error("world size must be at least 1, got " + std::to_string(world_size));
  if (rank < 0 || rank >= world_size)
    throw Error("rank must be in [0, world size " + std::to_string(world_size) + "), got " + std::to_string(rank));
  if (master_port < 1 || master_port > 65535) throw Error("master port must be in 1..65535, got " + std::to_string(master_port));
  if (master_addr.empty()) throw Error("master address is empty");
  if (!(timeout_seconds > 0)) throw Error("distributed timeout must be positive");
}

std::string first_slurm_host(const std::string& nodelist) {
  // The first entry: up to the first comma outside brackets.
  std::string entry;
  int depth = 0;
  for (const char c : nodelist) {
    if (c == ',' && depth == 0) break;
    depth += c == '[' ? 1 : c == ']' ? -1 : 0;
    entry += c;
  }
  if (entry.empty()) throw Error("SLURM_JOB_NODELIST '" + nodelist + "' names no host");
  // Each bracket group ("[07-09,12]") stands for its first number, leading zeros kept.
  std::string host;
  for (size_t i = 0; i < entry.size(); ++i) {
    if (entry[i] != '[') {
      host += entry[i];
      continue;
    }
    const auto close = entry.find(']', i);
    size_t digits = i + 1;
    while (digits < entry.size() && std::isdigit(static_cast<unsigned char>(entry[digits]))) ++digits;
    if (close == std::string::npos || digits == i + 1)
      throw Error("SLURM_JOB_NODELIST '" + nodelist + "': cannot read the host range at '" + entry.substr(i) + "'");
    host += entry.substr(i + 1, digits - i - 1);
    i = close;
  }
  return host;
}

DistributedOptions distributed_options_from_environment(DistributedOptions options) {
  const auto integer = [](const char* name, auto& field) {
    const auto text = environment(name);
    if (!text.empty()) field = static_cast<std::remove_reference_t<decltype(field)>>(parse_integer(text, name));
  };
  // Slurm's first, so that torchrun's (or the user's own) variables override them.
  if (environment("RANK").empty() && !environment("SLURM_PROCID").empty()) {
    integer("SLURM_NTASKS", options.world_size);
    integer("SLURM_PROCID", options.rank);
    integer("SLURM_LOCALID", options.local_rank);
    if (environment("SLURM_NTASKS").empty()) throw Error("SLURM_PROCID is set but SLURM_NTASKS is not (run under srun)");
    if (environment("MASTER_ADDR").empty()) {
      const auto nodelist = environment("SLURM_JOB_NODELIST");
      if (nodelist.empty())
        throw Error("under Slurm, rank 0's address comes from SLURM_JOB_NODELIST or MASTER_ADDR: neither is set");
      options.master_addr = first_slurm_host(nodelist);
    }
  }
  integer("WORLD_SIZE", options.world_size);
  integer("RANK", options.rank);
  integer("LOCAL_RANK", options.local_rank);
  integer("MASTER_PORT", options.master_port);
  if (!environment("MASTER_ADDR").empty()) options.master_addr = environment("MASTER_ADDR");
  return options;
}

}  // namespace nmt
