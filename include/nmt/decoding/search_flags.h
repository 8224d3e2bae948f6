#pragma once
// The search options as a tool's flags, from their one description (search_option_table.h):
// nmt-translate, nmt-align and nmt-serve each add the ones the table gives them.
#include <CLI/CLI.hpp>

#include <string>

#include "nmt/decoding/search_option_table.h"

namespace nmt {

/// Adds --NAME for each option `tool` takes, bound to its field of `options` (its value
/// there is the default shown by --help), with the option's bounds as a usage check (exit 2).
/// nmt-serve's help says which a request may choose. Where sampling-only options are added,
/// the app's callback refuses them without `--search sample` (so the tool sets no callback
/// of its own).
void add_search_flags(CLI::App& app, SearchOptions& options, SearchOptionUse tool);

/// Adds --shortlist FILE (nmt-translate, nmt-serve): the vocabulary shortlist each batch's
/// candidates come from (read_shortlist in translator.h, once the model is loaded).
void add_shortlist_flag(CLI::App& app, std::string& path);

}  // namespace nmt
