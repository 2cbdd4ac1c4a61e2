// Counts heap allocations in the motion-bench process. The executable defines the allocator's entry points,
// so every library in the process (the Swift runtime, Foundation, libmosquitto) resolves to these; each one
// counts and forwards to glibc's own implementation (exported as __libc_*, glibc 2.36), which avoids the
// dlsym(RTLD_NEXT) bootstrap problem (dlsym itself allocates).
#define _GNU_SOURCE  // dladdr
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <stdio.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "bench_support.h"

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void __libc_free(void *pointer);
extern void *__libc_memalign(size_t alignment, size_t size);

static _Atomic uint64_t total_allocations;
static __thread __attribute__((tls_model("initial-exec"))) uint64_t thread_allocations;

static __thread __attribute__((tls_model("initial-exec"))) int thread_tracing;

// Prints the calling stack as "module+offset" lines (for addr2line -e module offset) to stderr, without
// allocating: backtrace() was primed when tracing was switched on, dladdr and snprintf into a stack
// buffer do not allocate.
static void trace_allocation(size_t size) {
    thread_tracing = 0;
    void *frames[32];
    int n = backtrace(frames, 32);
    char line[512];
    int length = snprintf(line, sizeof line, "allocation of %zu bytes on the traced thread:\n", size);
    write(2, line, (size_t)length);
    for (int i = 2; i < n; i++) {
        Dl_info info;
        if (dladdr(frames[i], &info) && info.dli_fname != NULL) {
            length = snprintf(line, sizeof line, "  %s+0x%lx %s\n", info.dli_fname,
                              (unsigned long)((char *)frames[i] - (char *)info.dli_fbase),
                              info.dli_sname != NULL ? info.dli_sname : "?");
        } else {
            length = snprintf(line, sizeof line, "  %p\n", frames[i]);
        }
        write(2, line, (size_t)(length < (int)sizeof line ? length : (int)sizeof line - 1));
    }
    thread_tracing = 1;
}

static inline void count_allocation_sized(size_t size) {
    atomic_fetch_add_explicit(&total_allocations, 1, memory_order_relaxed);
    thread_allocations++;
    if (thread_tracing) trace_allocation(size);
}
#define count_allocation() count_allocation_sized(0)

void *malloc(size_t size) {
    count_allocation_sized(size);
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    count_allocation();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    count_allocation();
    return __libc_realloc(pointer, size);
}

void free(void *pointer) { __libc_free(pointer); }

void *memalign(size_t alignment, size_t size) {
    count_allocation();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count_allocation();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    count_allocation();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *out = pointer;
    return 0;
}

uint64_t bench_alloc_total(void) { return atomic_load_explicit(&total_allocations, memory_order_relaxed); }

uint64_t bench_alloc_thread(void) { return thread_allocations; }

void bench_alloc_trace(int on) {
    if (on) {
        void *prime[2];
        backtrace(prime, 2);  // loads libgcc's unwinder now, not inside an allocation
    }
    thread_tracing = on;
}

uint64_t bench_monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}
