/* C interface of the SentencePiece plugin (libnmt_spm.so).
 *
 * Why a plugin: Debian's libsentencepiece embeds protobuf-lite 3.14 and exports its
 * symbols; LibTorch loads libprotobuf 3.21. Linked into one process they crash at
 * start-up. libnmt dlopen()s this plugin with RTLD_LOCAL | RTLD_DEEPBIND so that
 * sentencepiece binds to its own protobuf. Still so with Debian 13's SentencePiece 0.2.0
 * (its protobuf-lite embedded and exported) and LibTorch 2.6's libprotobuf 3.21.12: a
 * program linking both directly crashes at load, in DescriptorPool::InternalAddGeneratedFile.
 *
 * The cost of RTLD_DEEPBIND: the plugin's libraries take libstdc++'s own std::cerr and
 * std::cout, while a program with copy relocations of them (code built without -fPIC, such
 * as Debian 13's static Catch2 library in the test binary) constructs and uses only its
 * copies; SentencePiece's first log line would then crash on an unconstructed stream.
 * nmt_spm_standard_streams lets libnmt see that and keep SentencePiece from logging.
 *
 * Memory rule: nothing allocated on one side is freed on the other (a deep-bound
 * library may use glibc's malloc while the tools use tcmalloc). Results are handed
 * back through sink callbacks that copy the bytes into caller-owned memory. */
#ifndef NMT_SPM_BACKEND_H
#define NMT_SPM_BACKEND_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Receives bytes (text, a piece, an error message, a serialized model). */
typedef void (*nmt_spm_bytes_sink)(void* context, const char* data, size_t size);
/* Receives integer ids. */
typedef void (*nmt_spm_ids_sink)(void* context, const int* ids, size_t count);
/* Yields the next training sentence; returns 0 at the end. The pointer stays valid
 * until the next call. */
typedef int (*nmt_spm_next_sentence)(void* context, const char** data, size_t* size);

#define NMT_SPM_ABI_VERSION 2

int nmt_spm_abi_version(void);

/* The addresses of std::cout and std::cerr as the plugin's libraries bind them. */
void nmt_spm_standard_streams(const void** out, const void** err);

/* Loads a model from its serialized protobuf; NULL on error (message sent to `error`). */
void* nmt_spm_load(const char* model, size_t size, nmt_spm_bytes_sink error, void* context);
void nmt_spm_free(void* processor);

int nmt_spm_piece_count(void* processor);
/* pad, unk, bos, eos ids as stored in the model (-1 when disabled). */
void nmt_spm_special_ids(void* processor, int ids[4]);
void nmt_spm_piece(void* processor, int id, nmt_spm_bytes_sink sink, void* context);
float nmt_spm_score(void* processor, int id);

/* Return 0 on success, non-zero after sending a message to `error`. */
int nmt_spm_encode_ids(void* processor, const char* text, size_t size, nmt_spm_ids_sink sink,
                       nmt_spm_bytes_sink error, void* context);
/* Calls `sink` once per piece. */
int nmt_spm_encode_pieces(void* processor, const char* text, size_t size,
                          nmt_spm_bytes_sink sink, nmt_spm_bytes_sink error, void* context);
int nmt_spm_decode_ids(void* processor, const int* ids, size_t count, nmt_spm_bytes_sink sink,
                       nmt_spm_bytes_sink error, void* context);

/* Trains a model from sentences; `keys`/`values` are SentencePiece trainer flags
 * (without leading dashes). The serialized model goes to `model`. */
int nmt_spm_train(const char* const* keys, const char* const* values, size_t flag_count,
                  nmt_spm_next_sentence next, nmt_spm_bytes_sink model,
                  nmt_spm_bytes_sink error, void* context);

#ifdef __cplusplus
}
#endif
#endif
