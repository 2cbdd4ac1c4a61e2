// The measuring subscriber: counts what arrives and, for payloads with a sensor timestamp (seconds on
// CLOCK_MONOTONIC, like the agent's samples), the latency from the sample to its receipt here.
#define _GNU_SOURCE  // memmem
#include <mosquitto.h>
#include <mqtt_protocol.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_support.h"

struct bench_sub {
    struct mosquitto *mosq;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int connected;
    int subscribed;
    _Atomic uint64_t count;
    _Atomic uint64_t first_ns;
    int record;
    int64_t *latencies;
    size_t capacity;
    size_t recorded;
};

static void on_connect(struct mosquitto *mosq, void *context, int rc, int flags, const mosquitto_property *props) {
    (void)mosq; (void)flags; (void)props;
    bench_sub *sub = context;
    pthread_mutex_lock(&sub->lock);
    sub->connected = rc == 0 ? 1 : -1;
    pthread_cond_broadcast(&sub->changed);
    pthread_mutex_unlock(&sub->lock);
}

static void on_subscribe(struct mosquitto *mosq, void *context, int mid, int count, const int *granted,
                         const mosquitto_property *props) {
    (void)mosq; (void)mid; (void)count; (void)granted; (void)props;
    bench_sub *sub = context;
    pthread_mutex_lock(&sub->lock);
    sub->subscribed++;
    pthread_cond_broadcast(&sub->changed);
    pthread_mutex_unlock(&sub->lock);
}

static void on_message(struct mosquitto *mosq, void *context, const struct mosquitto_message *message,
                       const mosquitto_property *props) {
    (void)mosq; (void)props;
    uint64_t now = bench_monotonic_ns();
    bench_sub *sub = context;
    uint64_t expected = 0;
    atomic_compare_exchange_strong(&sub->first_ns, &expected, now);
    atomic_fetch_add(&sub->count, 1);
    if (!sub->record || message->payloadlen <= 0) return;
    static const char key[] = "\"timestamp\":";
    const char *found = memmem(message->payload, (size_t)message->payloadlen, key, sizeof key - 1);
    if (found == NULL) return;
    const char *start = found + sizeof key - 1;
    const char *end = (const char *)message->payload + message->payloadlen;
    char text[48];
    size_t n = 0;
    while (start + n < end && n < sizeof text - 1 && start[n] != ',' && start[n] != '}') {
        text[n] = start[n];
        n++;
    }
    text[n] = 0;
    double seconds = strtod(text, NULL);
    if (seconds <= 0) return;
    int64_t latency = (int64_t)now - (int64_t)(seconds * 1e9);
    pthread_mutex_lock(&sub->lock);
    if (sub->recorded < sub->capacity) sub->latencies[sub->recorded++] = latency;
    pthread_mutex_unlock(&sub->lock);
}

static struct timespec deadline_after(double seconds) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    long long ns = (long long)t.tv_nsec + (long long)(seconds * 1e9);
    t.tv_sec += ns / 1000000000ll;
    t.tv_nsec = ns % 1000000000ll;
    return t;
}

bench_sub *bench_sub_open(const char *host, int port, const char *client_id, size_t latency_capacity,
                          double timeout_s, char *error, size_t error_size) {
    mosquitto_lib_init();
    bench_sub *sub = calloc(1, sizeof *sub);
    pthread_mutex_init(&sub->lock, NULL);
    pthread_cond_init(&sub->changed, NULL);
    sub->capacity = latency_capacity;
    sub->latencies = calloc(latency_capacity > 0 ? latency_capacity : 1, sizeof(int64_t));
    sub->mosq = mosquitto_new(client_id, true, sub);
    if (sub->mosq == NULL) {
        snprintf(error, error_size, "mosquitto_new failed");
        free(sub->latencies);
        free(sub);
        return NULL;
    }
    mosquitto_int_option(sub->mosq, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5);
    // Receive as fast as the broker sends: a small receive window would throttle the QoS 1 runs.
    mosquitto_int_option(sub->mosq, MOSQ_OPT_RECEIVE_MAXIMUM, 65535);
    mosquitto_connect_v5_callback_set(sub->mosq, on_connect);
    mosquitto_subscribe_v5_callback_set(sub->mosq, on_subscribe);
    mosquitto_message_v5_callback_set(sub->mosq, on_message);
    int rc = mosquitto_connect_bind_v5(sub->mosq, host, port, 30, NULL, NULL);
    if (rc == MOSQ_ERR_SUCCESS) rc = mosquitto_loop_start(sub->mosq);
    if (rc != MOSQ_ERR_SUCCESS) {
        snprintf(error, error_size, "subscriber connect to %s:%d failed: %s", host, port, mosquitto_strerror(rc));
        mosquitto_destroy(sub->mosq);
        free(sub->latencies);
        free(sub);
        return NULL;
    }
    struct timespec deadline = deadline_after(timeout_s);
    pthread_mutex_lock(&sub->lock);
    while (sub->connected == 0) {
        if (pthread_cond_timedwait(&sub->changed, &sub->lock, &deadline) != 0) break;
    }
    int connected = sub->connected;
    pthread_mutex_unlock(&sub->lock);
    if (connected != 1) {
        snprintf(error, error_size, "subscriber got no CONNACK from %s:%d within %.1f s", host, port, timeout_s);
        bench_sub_close(sub);
        return NULL;
    }
    return sub;
}

int bench_sub_subscribe(bench_sub *sub, const char *filter, int qos) {
    pthread_mutex_lock(&sub->lock);
    int before = sub->subscribed;
    pthread_mutex_unlock(&sub->lock);
    int rc = mosquitto_subscribe_v5(sub->mosq, NULL, filter, qos, 0, NULL);
    if (rc != MOSQ_ERR_SUCCESS) return rc;
    struct timespec deadline = deadline_after(5);
    pthread_mutex_lock(&sub->lock);
    while (sub->subscribed == before) {
        if (pthread_cond_timedwait(&sub->changed, &sub->lock, &deadline) != 0) break;
    }
    int done = sub->subscribed > before;
    pthread_mutex_unlock(&sub->lock);
    return done ? 0 : -1;
}

uint64_t bench_sub_count(bench_sub *sub) { return atomic_load(&sub->count); }

uint64_t bench_sub_first_receipt_ns(bench_sub *sub) { return atomic_load(&sub->first_ns); }

void bench_sub_reset(bench_sub *sub, int record) {
    pthread_mutex_lock(&sub->lock);
    sub->recorded = 0;
    sub->record = record;
    atomic_store(&sub->count, 0);
    atomic_store(&sub->first_ns, 0);
    pthread_mutex_unlock(&sub->lock);
}

size_t bench_sub_latencies(bench_sub *sub, int64_t *out, size_t capacity) {
    pthread_mutex_lock(&sub->lock);
    size_t n = sub->recorded < capacity ? sub->recorded : capacity;
    memcpy(out, sub->latencies, n * sizeof(int64_t));
    pthread_mutex_unlock(&sub->lock);
    return n;
}

void bench_sub_close(bench_sub *sub) {
    if (sub == NULL) return;
    mosquitto_disconnect(sub->mosq);
    mosquitto_loop_stop(sub->mosq, false);
    mosquitto_destroy(sub->mosq);
    pthread_cond_destroy(&sub->changed);
    pthread_mutex_destroy(&sub->lock);
    free(sub->latencies);
    free(sub);
}
