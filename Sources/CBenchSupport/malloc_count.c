// Counts heap allocations in the motion-bench process. The executable defines the allocator's entry points,
// so every library in the process (the Swift runtime, Foundation, libmosquitto) resolves to these; each one
// counts and forwards to glibc's own implementation (exported as __libc_*, glibc 2.36), which avoids the
// dlsym(RTLD_NEXT) bootstrap problem (dlsym itself allocates).
#include <errno.h>
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

static inline void count_allocation(void) {
    atomic_fetch_add_explicit(&total_allocations, 1, memory_order_relaxed);
    thread_allocations++;
}

void *malloc(size_t size) {
    count_allocation();
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

uint64_t bench_monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
}
