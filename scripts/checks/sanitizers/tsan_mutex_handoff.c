// Preloaded (LD_PRELOAD) into every process of the ThreadSanitizer run by scripts/checks/sanitizers.sh.
//
// Why: Synchronization.Mutex on Linux is a priority-inheritance futex. Its uncontended path is an atomic
// compare-exchange inlined into the (instrumented) caller, which ThreadSanitizer sees; its contended path is
// FUTEX_LOCK_PI / FUTEX_UNLOCK_PI in the uninstrumented libswiftSynchronization.so, where the kernel hands the lock
// to the waiter without any user-space atomic. ThreadSanitizer then misses the happens-before edge and reports every
// access under a contended Mutex as a race (a two-thread counter under Mutex reproduces it). This wraps the two
// exported slow paths and tells ThreadSanitizer what they do — acquire after the lock, release before the unlock —
// on the lock word's address, the same address the inlined fast path's atomics use. Nothing is suppressed: a race
// outside the lock is still reported.
//
// The symbols are Swift's (swiftcall, `self` in the context register): _MutexHandle._lockSlow(_: UInt32),
// _MutexHandle._unlockSlow(), _MutexHandle._tryLockSlow() -> Bool. Processes without ThreadSanitizer (mosquitto,
// Python, the swift driver) load this too: the annotations are weak and skipped there.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>

extern void __tsan_acquire(void *address) __attribute__((weak));
extern void __tsan_release(void *address) __attribute__((weak));

#define SWIFTCALL __attribute__((swiftcall))
#define SELF __attribute__((swift_context))

typedef SWIFTCALL void (*LockSlow)(uint32_t, SELF void *);
typedef SWIFTCALL void (*UnlockSlow)(SELF void *);
typedef SWIFTCALL bool (*TryLockSlow)(SELF void *);

SWIFTCALL void lockSlow(uint32_t owner, SELF void *handle) __asm__("$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF");
SWIFTCALL void unlockSlow(SELF void *handle) __asm__("$s15Synchronization12_MutexHandleV11_unlockSlowyyF");
SWIFTCALL bool tryLockSlow(SELF void *handle) __asm__("$s15Synchronization12_MutexHandleV12_tryLockSlowSbyF");

static void *next(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) __builtin_trap();  // preloaded into a Swift process without libswiftSynchronization: cannot happen
    return f;
}

SWIFTCALL void lockSlow(uint32_t owner, SELF void *handle) {
    static LockSlow real;
    if (!real) real = (LockSlow)next("$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF");
    real(owner, handle);
    if (__tsan_acquire) __tsan_acquire(handle);
}

SWIFTCALL void unlockSlow(SELF void *handle) {
    static UnlockSlow real;
    if (!real) real = (UnlockSlow)next("$s15Synchronization12_MutexHandleV11_unlockSlowyyF");
    if (__tsan_release) __tsan_release(handle);
    real(handle);
}

SWIFTCALL bool tryLockSlow(SELF void *handle) {
    static TryLockSlow real;
    if (!real) real = (TryLockSlow)next("$s15Synchronization12_MutexHandleV12_tryLockSlowSbyF");
    bool locked = real(handle);
    if (locked && __tsan_acquire) __tsan_acquire(handle);
    return locked;
}
