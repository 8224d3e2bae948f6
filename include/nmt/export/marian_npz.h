#pragma once
// Marian's .npz model form (what OPUS-MT releases ship): a zip archive of NumPy .npy arrays,
// one per item, named as in the .bin ("Wemb.npy", "special:model.yml.npy"). The zip through
// libzip; the .npy header (a magic string, a version, a Python dict literal with 'descr',
// 'fortran_order' and 'shape') parsed here, as NumPy documents it (numpy.lib.format).
// float32 arrays ('<f4') and bytes ('|i1', '|u1', '|S1': the config text) are read; the items
// are the .bin reader's, so the importer takes either.
#include <string>
#include <string_view>
#include <vector>

#include "nmt/export/marian_format.h"

namespace nmt {

/// The items of the .npz held in `file` (named `file_name` in errors). Throws nmt::Error naming
/// the file and the array: not a zip, a damaged entry, a header NumPy would not write, a dtype
/// other than float32 or bytes, Fortran order, data shorter than the shape.
std::vector<MarianItem> read_marian_npz(std::string_view file, const std::string& file_name);

/// The items as an .npz (stored, uncompressed, as Marian's cnpy writes them), returned as bytes.
std::string marian_npz_bytes(const std::vector<MarianItem>& items);

}  // namespace nmt
