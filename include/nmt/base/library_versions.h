#pragma once
// The versions of the libraries this build was compiled against and runs on, for --version
// and --verbose. The project builds against two stacks (Debian 12: LibTorch 1.13, oneDNN
// 2.6, SentencePiece 0.1.97; Debian 13: LibTorch 2.6, oneDNN 3.7, SentencePiece 0.2.0) or a
// LibTorch from PyTorch, whose loaded oneDNN may differ from the headers; a report names both.
#include <string>

namespace nmt {

/// "LibTorch 2.6.0 (C++ ABI cxx11), oneDNN 3.7.2 (headers 3.7.2), SentencePiece 0.2.0".
std::string library_versions();

/// The oneDNN that LibTorch loaded ("3.7.2"), saying when it is not used (its major version
/// is not the headers') or none is loaded.
std::string loaded_onednn_version();

/// Whether a oneDNN is loaded with the major version of the headers the project was
/// compiled with: its C API is stable within a major version, so only then may its
/// functions be called with the headers' types.
bool onednn_usable();

}  // namespace nmt
