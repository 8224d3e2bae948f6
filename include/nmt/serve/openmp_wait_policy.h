#pragma once
// nmt-serve's HTTP threads share the cores with LibTorch's OpenMP pool. OpenMP threads
// spin while they wait for work by default, taking CPU the HTTP threads need; with
// OMP_WAIT_POLICY=PASSIVE they sleep instead (measured at 64 clients, beam 5, 2 cores:
// 124 -> 150 requests/s, bench/RESULTS.md). libgomp reads the variable once, when it
// loads, before main() runs; so it is set and the program executes itself again.
// (A library that sets it from an initializer run first, -z initfirst, does not work: its
// initializer runs before libc's, which points environ back at the original block.)
namespace nmt::serve {

/// Call first thing in main(). If OMP_WAIT_POLICY is unset, sets it to PASSIVE and
/// re-executes the program's own file (the target of /proc/self/exe, so the process keeps
/// its name) with the same arguments (returns only if that fails, or
/// if the variable was already set: the user's choice is kept).
void use_passive_openmp_waits(char** argv);

}  // namespace nmt::serve
