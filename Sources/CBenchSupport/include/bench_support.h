#ifndef BENCH_SUPPORT_H
#define BENCH_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

// Heap allocation counters: this target replaces malloc, calloc, realloc and the aligned allocators of the
// motion-bench process (forwarding to glibc's __libc_* entry points) and counts every call.

/// Allocation calls by every thread since the process started.
uint64_t bench_alloc_total(void);
/// Allocation calls by the calling thread since it started.
uint64_t bench_alloc_thread(void);
/// While on, every allocation by the calling thread prints its stack (module+offset lines) to stderr.
void bench_alloc_trace(int on);

/// CLOCK_MONOTONIC in nanoseconds (the clock the agent stamps samples with).
uint64_t bench_monotonic_ns(void);

#endif
