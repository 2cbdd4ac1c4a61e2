// A HID sensor hub emulated through /dev/uhid, so that the kernel's own drivers (hid-sensor-hub,
// hid-sensor-accel-3d, -gyro-3d, -magn-3d, -press) serve an IMU inside the system-test VM. Test helper only.
//
//   uhid-sensor-hub REPLAY.txt [--once]
//
// REPLAY.txt: one sample per line, ten integers in the descriptor's raw units (see the unit exponents below):
// accel x y z, gyro x y z, magn x y z, pressure. Each sensor, while the kernel has its reporting switched on,
// sends the next line's values every report interval the driver set (sampling_frequency), cycling through the
// file. SIGUSR1 destroys the HID device (the sensors disappear), SIGUSR2 creates it again. SIGTERM exits.
// Every line written to stdout says what happened, for the test's log.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/uhid.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

// Usage page 0x20 (sensors). Every axis is its own Input item of report count 1: the hub matches a field by
// its first usage. Report IDs 1-4 are accel, gyro, compass, barometer; each has one feature report
// (reporting state, power state, report interval in ms) and one input report.
// The reporting and power states are named arrays (a logical collection of selector usages): the drivers look
// up the selector's index (hid_sensor_get_usage_index) and write index + 1, so a plain variable is never set.
#define FEATURES                                                                                              \
    0x0A, 0x16, 0x03, 0x15, 0x00, 0x25, 0x05, 0x75, 0x08, 0x95, 0x01, 0xA1, 0x02, /* reporting state */       \
        0x0A, 0x40, 0x08, 0x0A, 0x41, 0x08, 0x0A, 0x42, 0x08, 0x0A, 0x43, 0x08, 0x0A, 0x44, 0x08, 0x0A, 0x45,  \
        0x08, 0xB1, 0x00, 0xC0, 0x0A, 0x19, 0x03, 0x15, 0x00, 0x25, 0x05, 0x75, 0x08, 0x95, 0x01, 0xA1, 0x02, \
        /* power state */ 0x0A, 0x50, 0x08, 0x0A, 0x51, 0x08, 0x0A, 0x52, 0x08, 0x0A, 0x53, 0x08, 0x0A, 0x54,   \
        0x08, 0x0A, 0x55, 0x08, 0xB1, 0x00, 0xC0, 0x0A, 0x0E, 0x03, 0x15, 0x00, 0x27, 0xFF, 0xFF, 0x00, 0x00,  \
        0x75, 0x20, 0x95, 0x01, 0x55, 0x00, 0xB1, 0x02 /* report interval, ms */
#define AXIS16(usage, exponent) \
    0x0A, (usage), 0x04, 0x16, 0x01, 0x80, 0x26, 0xFF, 0x7F, 0x75, 0x10, 0x95, 0x01, 0x55, (exponent), 0x81, 0x02

static const uint8_t descriptor[] = {
    // Accelerometer 3D: unit g (the driver's default), exponent -3 (0x0D): 1 LSB = 0.001 g.
    0x05, 0x20, 0x09, 0x73, 0xA1, 0x00, 0x85, 0x01, FEATURES,
    AXIS16(0x53, 0x0D), AXIS16(0x54, 0x0D), AXIS16(0x55, 0x0D), 0xC0,
    // Gyrometer 3D: unit the driver's default (degrees/s), exponent -2: 1 LSB = 0.01 °/s (±327 °/s).
    0x05, 0x20, 0x09, 0x76, 0xA1, 0x00, 0x85, 0x02, FEATURES,
    AXIS16(0x57, 0x0E), AXIS16(0x58, 0x0E), AXIS16(0x59, 0x0E), 0xC0,
    // Compass 3D: magnetic flux, unit the driver's default (milligauss), exponent 0: 1 LSB = 0.1 µT.
    0x05, 0x20, 0x09, 0x83, 0xA1, 0x00, 0x85, 0x03, FEATURES,
    AXIS16(0x85, 0x00), AXIS16(0x86, 0x00), AXIS16(0x87, 0x00), 0xC0,
    // Barometer: atmospheric pressure, 32 bits, unit the driver's default (bar: scale 1 kPa at exponent -2),
    // exponent -7: 1 LSB = 0.01 Pa.
    0x05, 0x20, 0x09, 0x31, 0xA1, 0x00, 0x85, 0x04, FEATURES,
    0x0A, 0x31, 0x04, 0x17, 0x00, 0x00, 0x00, 0x80, 0x27, 0xFF, 0xFF, 0xFF, 0x7F, 0x75, 0x20, 0x95, 0x01, 0x55,
    0x09, 0x81, 0x02, 0xC0,
};

enum { SENSORS = 4 };
struct sensor {
    const char *name;
    uint8_t reporting, power;
    uint32_t interval_ms;
    size_t cursor;
    struct timespec next;
};
static struct sensor sensors[SENSORS] = {
    {"accel", 0, 0, 10, 0, {0, 0}},
    {"gyro", 0, 0, 10, 0, {0, 0}},
    {"magn", 0, 0, 10, 0, {0, 0}},
    {"press", 0, 0, 10, 0, {0, 0}},
};
static int32_t (*samples)[10];
static size_t sample_count;
static volatile sig_atomic_t want_destroy, want_create, want_exit;
static int created;

static void on_signal(int sig) {
    if (sig == SIGUSR1) want_destroy = 1;
    if (sig == SIGUSR2) want_create = 1;
    if (sig == SIGTERM || sig == SIGINT) want_exit = 1;
}

static int send_event(int fd, struct uhid_event *ev) {
    ssize_t n = write(fd, ev, sizeof(*ev));
    if (n != (ssize_t)sizeof(*ev)) {
        fprintf(stderr, "uhid-sensor-hub: write to /dev/uhid failed: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

static int create_device(int fd) {
    struct uhid_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.type = UHID_CREATE2;
    strcpy((char *)ev.u.create2.name, "motion-agent test sensor hub");
    memcpy(ev.u.create2.rd_data, descriptor, sizeof(descriptor));
    ev.u.create2.rd_size = sizeof(descriptor);
    ev.u.create2.bus = BUS_VIRTUAL;
    ev.u.create2.vendor = 0x1d6b;
    ev.u.create2.product = 0x0117;
    if (send_event(fd, &ev) != 0) return -1;
    created = 1;
    for (int i = 0; i < SENSORS; i++) sensors[i].reporting = sensors[i].power = 0;
    printf("created the sensor hub (%zu descriptor bytes)\n", sizeof(descriptor));
    fflush(stdout);
    return 0;
}

static void destroy_device(int fd) {
    struct uhid_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.type = UHID_DESTROY;
    send_event(fd, &ev);
    created = 0;
    printf("destroyed the sensor hub\n");
    fflush(stdout);
}

// A report's bytes: [id, fields...]; returns its length.
static size_t feature_report(int id, uint8_t *out) {
    struct sensor *s = &sensors[id - 1];
    out[0] = (uint8_t)id;
    out[1] = s->reporting;
    out[2] = s->power;
    memcpy(out + 3, &s->interval_ms, 4);
    return 7;
}

static size_t input_report(int id, uint8_t *out) {
    struct sensor *s = &sensors[id - 1];
    const int32_t *row = samples[s->cursor % sample_count];
    out[0] = (uint8_t)id;
    if (id == 4) {
        memcpy(out + 1, &row[9], 4);
        return 5;
    }
    for (int axis = 0; axis < 3; axis++) {
        int16_t v = (int16_t)row[(id - 1) * 3 + axis];
        memcpy(out + 1 + 2 * axis, &v, 2);
    }
    return 7;
}

static void handle_event(int fd) {
    struct uhid_event ev, reply;
    memset(&ev, 0, sizeof(ev));
    if (read(fd, &ev, sizeof(ev)) <= 0) return;
    memset(&reply, 0, sizeof(reply));
    switch (ev.type) {
    case UHID_GET_REPORT: {
        int id = ev.u.get_report.rnum;
        reply.type = UHID_GET_REPORT_REPLY;
        reply.u.get_report_reply.id = ev.u.get_report.id;
        if (id < 1 || id > SENSORS) {
            reply.u.get_report_reply.err = EINVAL;
        } else if (ev.u.get_report.rtype == UHID_FEATURE_REPORT) {
            reply.u.get_report_reply.size = (uint16_t)feature_report(id, reply.u.get_report_reply.data);
        } else {
            reply.u.get_report_reply.size = (uint16_t)input_report(id, reply.u.get_report_reply.data);
        }
        send_event(fd, &reply);
        break;
    }
    case UHID_SET_REPORT: {
        int id = ev.u.set_report.rnum;
        reply.type = UHID_SET_REPORT_REPLY;
        reply.u.set_report_reply.id = ev.u.set_report.id;
        if (id >= 1 && id <= SENSORS && ev.u.set_report.rtype == UHID_FEATURE_REPORT && ev.u.set_report.size >= 7) {
            struct sensor *s = &sensors[id - 1];
            const uint8_t *d = ev.u.set_report.data;
            uint8_t was = s->reporting && s->power;
            s->reporting = d[1];
            s->power = d[2];
            memcpy(&s->interval_ms, d + 3, 4);
            if (s->interval_ms == 0) s->interval_ms = 1;
            uint8_t on = s->reporting && s->power;
            if (on && !was) clock_gettime(CLOCK_MONOTONIC, &s->next);
            printf("%s: reporting %u power %u interval %u ms\n", s->name, s->reporting, s->power, s->interval_ms);
            fflush(stdout);
        } else {
            reply.u.set_report_reply.err = EINVAL;
        }
        send_event(fd, &reply);
        break;
    }
    default:
        break;
    }
}

// The drivers write selector index + 1: reporting "all events" = 2, power "D0 full power" = 2.
static int streaming(const struct sensor *s) { return s->reporting == 2 && s->power == 2; }

static long ms_until(const struct timespec *t) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (t->tv_sec - now.tv_sec) * 1000 + (t->tv_nsec - now.tv_nsec) / 1000000;
}

static void advance(struct timespec *t, uint32_t ms) {
    t->tv_nsec += (long)ms * 1000000L;
    while (t->tv_nsec >= 1000000000L) {
        t->tv_nsec -= 1000000000L;
        t->tv_sec++;
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: uhid-sensor-hub REPLAY.txt (ten raw integers per line)\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (!f) {
        fprintf(stderr, "uhid-sensor-hub: cannot open %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    size_t capacity = 1024;
    samples = malloc(capacity * sizeof(*samples));
    int32_t row[10];
    while (fscanf(f, "%d %d %d %d %d %d %d %d %d %d", &row[0], &row[1], &row[2], &row[3], &row[4], &row[5],
                  &row[6], &row[7], &row[8], &row[9]) == 10) {
        if (sample_count == capacity) samples = realloc(samples, (capacity *= 2) * sizeof(*samples));
        memcpy(samples[sample_count++], row, sizeof(row));
    }
    fclose(f);
    if (sample_count == 0) {
        fprintf(stderr, "uhid-sensor-hub: %s has no line of ten integers\n", argv[1]);
        return 1;
    }
    printf("loaded %zu samples\n", sample_count);
    fflush(stdout);

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGUSR2, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    int fd = open("/dev/uhid", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "uhid-sensor-hub: cannot open /dev/uhid: %s (modprobe uhid; needs root)\n", strerror(errno));
        return 1;
    }
    if (create_device(fd) != 0) return 1;

    while (!want_exit) {
        if (want_destroy) {
            want_destroy = 0;
            if (created) destroy_device(fd);
        }
        if (want_create) {
            want_create = 0;
            if (!created && create_device(fd) != 0) return 1;
        }
        long wait = 100;
        for (int i = 0; i < SENSORS && created; i++) {
            struct sensor *s = &sensors[i];
            if (!streaming(s)) continue;
            long due = ms_until(&s->next);
            if (due <= 0) {
                struct uhid_event ev;
                memset(&ev, 0, sizeof(ev));
                ev.type = UHID_INPUT2;
                ev.u.input2.size = (uint16_t)input_report(i + 1, ev.u.input2.data);
                if (send_event(fd, &ev) != 0) return 1;
                s->cursor++;
                advance(&s->next, s->interval_ms);
                // After a stall (the VM descheduled), carry on from now instead of sending the missed reports
                // in a burst: the driver stamps each report on arrival, so a burst carries one timestamp and a
                // stream decimated by timestamp publishes one report of it (seen live: 69 reports in 0.06 s
                // under TCG, which the in-order check read as lost samples). The replay stays contiguous.
                if (ms_until(&s->next) < -2 * (long)s->interval_ms) clock_gettime(CLOCK_MONOTONIC, &s->next);
                due = ms_until(&s->next);
            }
            if (due < wait) wait = due < 0 ? 0 : due;
        }
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, (int)wait);
        if (r > 0 && (p.revents & POLLIN)) handle_event(fd);
    }
    if (created) destroy_device(fd);
    close(fd);
    return 0;
}
