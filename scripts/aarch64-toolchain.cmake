# CMake toolchain for an arm64 (aarch64) build with Debian's cross compiler
# (g++-aarch64-linux-gnu) against a sysroot of Debian's arm64 packages, given as
# -DCMAKE_SYSROOT=DIR (scripts/cross-aarch64.sh makes one). Programs built with it run
# here under qemu-aarch64 (qemu-user), which ctest uses as the emulator.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Headers, libraries and CMake packages from the sysroot only; build tools from this machine.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
if(CMAKE_SYSROOT)
  set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L ${CMAKE_SYSROOT})
endif()
# GCC notes that std::pair's parameter passing changed in GCC 10 on aarch64: nothing here
# mixes objects from older compilers.
set(CMAKE_CXX_FLAGS_INIT "-Wno-psabi")
