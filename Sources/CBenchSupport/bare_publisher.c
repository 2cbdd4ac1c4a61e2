// The bare libmosquitto publisher: what the library does with no agent code around it. Threaded mode
// (mosquitto_loop_start) like the agent's client, MQTT 5, the same in-flight window.
#include <mosquitto.h>
#include <mqtt_protocol.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_support.h"

struct bench_pub {
    struct mosquitto *mosq;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int connected;
    int connect_result;
    long pending;
    // The publisher waits for room with the agent's rule (OutboxPublisher): once the limit is reached it sleeps
    // until an eighth of it is free, so a burst of acknowledgements costs one wake-up, not one per message.
    long resume_at;
    int waiting;
};

static void on_connect(struct mosquitto *mosq, void *context, int rc, int flags, const mosquitto_property *props) {
    (void)mosq; (void)flags; (void)props;
    bench_pub *pub = context;
    pthread_mutex_lock(&pub->lock);
    pub->connected = rc == 0 ? 1 : -1;
    pub->connect_result = rc;
    pthread_cond_broadcast(&pub->changed);
    pthread_mutex_unlock(&pub->lock);
}

// QoS 0: the message was written to the socket; QoS 1: PUBACK arrived.
static void on_publish(struct mosquitto *mosq, void *context, int mid, int rc, const mosquitto_property *props) {
    (void)mosq; (void)mid; (void)rc; (void)props;
    bench_pub *pub = context;
    pthread_mutex_lock(&pub->lock);
    pub->pending--;
    if (pub->waiting && pub->pending <= pub->resume_at) pthread_cond_broadcast(&pub->changed);
    pthread_mutex_unlock(&pub->lock);
}

static struct timespec deadline_after(double seconds) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    long long ns = (long long)t.tv_nsec + (long long)(seconds * 1e9);
    t.tv_sec += ns / 1000000000ll;
    t.tv_nsec = ns % 1000000000ll;
    return t;
}

bench_pub *bench_pub_open(const char *host, int port, const char *client_id, int window, int v5, int nodelay,
                          double timeout_s, char *error, size_t error_size) {
    mosquitto_lib_init();
    bench_pub *pub = calloc(1, sizeof *pub);
    pthread_mutex_init(&pub->lock, NULL);
    pthread_cond_init(&pub->changed, NULL);
    pub->mosq = mosquitto_new(client_id, true, pub);
    if (pub->mosq == NULL) {
        snprintf(error, error_size, "mosquitto_new failed");
        free(pub);
        return NULL;
    }
    mosquitto_int_option(pub->mosq, MOSQ_OPT_PROTOCOL_VERSION, v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311);
    mosquitto_max_inflight_messages_set(pub->mosq, (unsigned)window);
    if (nodelay) mosquitto_int_option(pub->mosq, MOSQ_OPT_TCP_NODELAY, 1);
    mosquitto_connect_v5_callback_set(pub->mosq, on_connect);
    mosquitto_publish_v5_callback_set(pub->mosq, on_publish);
    int rc = mosquitto_connect_bind_v5(pub->mosq, host, port, 30, NULL, NULL);
    if (rc == MOSQ_ERR_SUCCESS) rc = mosquitto_loop_start(pub->mosq);
    if (rc != MOSQ_ERR_SUCCESS) {
        snprintf(error, error_size, "connect to %s:%d failed: %s", host, port, mosquitto_strerror(rc));
        mosquitto_destroy(pub->mosq);
        free(pub);
        return NULL;
    }
    struct timespec deadline = deadline_after(timeout_s);
    pthread_mutex_lock(&pub->lock);
    while (pub->connected == 0) {
        if (pthread_cond_timedwait(&pub->changed, &pub->lock, &deadline) != 0) break;
    }
    int connected = pub->connected;
    pthread_mutex_unlock(&pub->lock);
    if (connected != 1) {
        snprintf(error, error_size, "no CONNACK from %s:%d within %.1f s (result %d)", host, port, timeout_s,
                 pub->connect_result);
        bench_pub_close(pub);
        return NULL;
    }
    return pub;
}

int bench_pub_run(bench_pub *pub, const char *topic, const void *payload, int length, int qos, long count, int limit) {
    pthread_mutex_lock(&pub->lock);
    pub->resume_at = limit - (limit / 8 > 1 ? limit / 8 : 1);
    pthread_mutex_unlock(&pub->lock);
    for (long i = 0; i < count; i++) {
        pthread_mutex_lock(&pub->lock);
        if (pub->pending >= limit) {
            pub->waiting = 1;
            while (pub->pending > pub->resume_at) pthread_cond_wait(&pub->changed, &pub->lock);
            pub->waiting = 0;
        }
        pub->pending++;
        pthread_mutex_unlock(&pub->lock);
        int rc = mosquitto_publish_v5(pub->mosq, NULL, topic, length, payload, qos, false, NULL);
        if (rc != MOSQ_ERR_SUCCESS) return -rc;
    }
    pthread_mutex_lock(&pub->lock);
    pub->resume_at = 0;
    pub->waiting = 1;
    while (pub->pending > 0) pthread_cond_wait(&pub->changed, &pub->lock);
    pub->waiting = 0;
    pthread_mutex_unlock(&pub->lock);
    return 0;
}

void bench_pub_close(bench_pub *pub) {
    if (pub == NULL) return;
    mosquitto_disconnect(pub->mosq);
    mosquitto_loop_stop(pub->mosq, false);
    mosquitto_destroy(pub->mosq);
    pthread_cond_destroy(&pub->changed);
    pthread_mutex_destroy(&pub->lock);
    free(pub);
}

int bench_pub_paced(bench_pub *pub, const char *topic, int qos, double rate_hz, double seconds, int burst) {
    long count = (long)(rate_hz * seconds);
    uint64_t period = (uint64_t)(1e9 / rate_hz);
    uint64_t next = bench_monotonic_ns();
    char payload[96];
    for (long i = 0; i < count; i++) {
        next += period;
        struct timespec deadline = {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL);
        uint64_t now = bench_monotonic_ns();
        int length = snprintf(payload, sizeof payload, "{\"seq\":%ld,\"timestamp\":%.9f}", i, (double)now / 1e9);
        for (int k = 0; k < burst; k++) {
            int rc = mosquitto_publish_v5(pub->mosq, NULL, topic, length, payload, qos, false, NULL);
            if (rc != MOSQ_ERR_SUCCESS) return -rc;
        }
    }
    return 0;
}
