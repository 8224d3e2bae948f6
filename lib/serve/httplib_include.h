#pragma once
// Debian's libcpp-httplib.so is built in split mode with TLS, zlib and brotli support
// (see cpp-httplib.pc); the declarations we compile against must match it, so the same
// switches are set here, in the source, rather than as -D flags that would differ from
// the precompiled header every other target shares.
#ifndef CPPHTTPLIB_OPENSSL_SUPPORT
#define CPPHTTPLIB_OPENSSL_SUPPORT
#endif
#ifndef CPPHTTPLIB_ZLIB_SUPPORT
#define CPPHTTPLIB_ZLIB_SUPPORT
#endif
#ifndef CPPHTTPLIB_BROTLI_SUPPORT
#define CPPHTTPLIB_BROTLI_SUPPORT
#endif
#include <httplib.h>
