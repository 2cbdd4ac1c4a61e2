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

// A bare libmosquitto publisher (no agent code): the reference the agent's publishing path is compared with.
typedef struct bench_pub bench_pub;

/// Connects (MQTT 5 when `v5`, else 3.1.1) and waits for CONNACK up to `timeout_s`; NULL with `error` filled
/// on failure. `window` is libmosquitto's max in-flight QoS > 0 messages, and also the publisher's own bound.
bench_pub *bench_pub_open(const char *host, int port, const char *client_id, int window, int v5, int nodelay,
                          double timeout_s, char *error, size_t error_size);
/// Publishes `count` copies of `payload` to `topic` as fast as the library takes them, keeping at most
/// `limit` messages unacknowledged (QoS > 0) or unwritten (QoS 0) — at the limit it waits until an eighth of
/// it is free, the agent's OutboxPublisher rule; returns when all are acknowledged or written, or a negative
/// libmosquitto error.
int bench_pub_run(bench_pub *pub, const char *topic, const void *payload, int length, int qos, long count, int limit);
/// Publishes `{"seq":n,"timestamp":<CLOCK_MONOTONIC s>}` at `rate_hz` for `seconds` (absolute deadlines), `burst`
/// copies back to back per tick (the agent sends one message per stream due on a sample): the bare library's
/// latency reference.
int bench_pub_paced(bench_pub *pub, const char *topic, int qos, double rate_hz, double seconds, int burst);
void bench_pub_close(bench_pub *pub);

// A subscriber that counts messages and, when a payload carries `"timestamp":<seconds on CLOCK_MONOTONIC>`,
// records the latency to its receipt.
typedef struct bench_sub bench_sub;

bench_sub *bench_sub_open(const char *host, int port, const char *client_id, size_t latency_capacity,
                          double timeout_s, char *error, size_t error_size);
/// Subscribes and waits for SUBACK (up to 5 s); 0 on success.
int bench_sub_subscribe(bench_sub *sub, const char *filter, int qos);
/// Messages received since the last reset.
uint64_t bench_sub_count(bench_sub *sub);
/// Monotonic ns of the first message since the last reset; 0 before it.
uint64_t bench_sub_first_receipt_ns(bench_sub *sub);
/// Clears counts and latencies; `record` turns latency recording on or off.
void bench_sub_reset(bench_sub *sub, int record);
/// Copies up to `capacity` recorded latencies (ns) into `out`; returns how many.
size_t bench_sub_latencies(bench_sub *sub, int64_t *out, size_t capacity);
void bench_sub_close(bench_sub *sub);

#endif
