// Register-level emulation of I2C motion chips on the kernel's i2c-stub, so that the kernel's own IIO drivers
// (bmi160_i2c, st_lsm6dsx_i2c, inv-mpu6050-i2c, bmp280-i2c, ak8975) serve a recording inside the system-test
// VM. Test helper only; the uhid-sensor-hub.c of the I2C world.
//
//   i2c-imu-emulator REPLAY.si CHIP@ADDR[/MOUNT] ...
//
// i2c-stub (modprobe i2c-stub chip_addr=...) gives each address a plain 256-register file and nothing else. This
// program finds the stub's adapter, opens /dev/i2c-N, presets every chip's identity, configuration and
// calibration registers, prints "ready i2c-N", and from then on:
// - writes each chip's data registers from the recording at the recording's rate (one I2C block write per
//   chip per sample, so a driver's multi-byte read never sees half of two samples), in the chip's own format
//   (endianness, bit width) and at the scale its range register selects, as the kernel driver reads it back;
// - every 2 ms plays the chip's side of what a register file cannot do: self-clearing reset and boot
//   bits (restoring the power-on registers), command registers (bmi160's CMD), power-down modes (no new data
//   while the chip sleeps), and on-demand measurements (ak8975: a single measurement is latched into the data
//   registers with DRDY set, then the chip powers down again).
// What it cannot see: reads (so a status bit cannot clear on read) and writes that follow each other within one
// service period (only the last is seen): level-like registers (ODR, sleep bits) are followed, and command
// registers only for the log.
// REPLAY.si: one sample per line, "t ax ay az gx gy gz mx my mz p": seconds, specific force in m/s² (+9.81 up
// at rest, the kernel's convention), rad/s, µT, Pa, in the board's frame; the file is cycled.
// MOUNT (optional): nine numbers "m00,m01,...,m22", the chip's mount matrix as the kernel would report it
// (board = M · chip); the chip is fed M^T · board, as a chip soldered that way would measure.
// Prints one line per event (reset, command, measurement count every 10 s) for the test's log; SIGTERM exits.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/i2c-dev.h>
#include <linux/i2c.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

struct sample {
    double t, acc[3], gyr[3], mag[3], pressure;
};

static struct sample *samples;
static size_t sample_count;
static volatile sig_atomic_t want_exit;

static void on_signal(int sig) {
    (void)sig;
    want_exit = 1;
}

// ---- SMBus through /dev/i2c-N (what i2c-stub answers: byte data and I2C block transfers up to 32 bytes) ----

static int smbus(int fd, char rw, uint8_t command, int size, union i2c_smbus_data *data) {
    struct i2c_smbus_ioctl_data args = {.read_write = rw, .command = command, .size = size, .data = data};
    return ioctl(fd, I2C_SMBUS, &args);
}

static int read_reg(int fd, uint8_t reg) {
    union i2c_smbus_data d;
    if (smbus(fd, I2C_SMBUS_READ, reg, I2C_SMBUS_BYTE_DATA, &d) < 0) return -1;
    return d.byte;
}

static void write_reg(int fd, uint8_t reg, uint8_t value) {
    union i2c_smbus_data d = {.byte = value};
    if (smbus(fd, I2C_SMBUS_WRITE, reg, I2C_SMBUS_BYTE_DATA, &d) < 0)
        fprintf(stderr, "i2c-imu-emulator: write 0x%02x to register 0x%02x failed: %s\n", value, reg, strerror(errno));
}

static void write_block(int fd, uint8_t reg, const uint8_t *bytes, int len) {
    union i2c_smbus_data d;
    d.block[0] = (uint8_t)len;
    memcpy(d.block + 1, bytes, (size_t)len);
    if (smbus(fd, I2C_SMBUS_WRITE, reg, I2C_SMBUS_I2C_BLOCK_DATA, &d) < 0)
        fprintf(stderr, "i2c-imu-emulator: block write at 0x%02x failed: %s\n", reg, strerror(errno));
}

// ---- the chips -------------------------------------------------------------------------------------------

struct chip;
struct chip_type {
    const char *name;
    void (*preset)(struct chip *);
    // Every 2 ms: command and self-clearing registers, on-demand measurements (the ak8975 driver looks for its
    // result 10 ms after asking).
    void (*service)(struct chip *, const struct sample *);
    // Every recording sample: the data registers of a chip that measures continuously.
    void (*feed)(struct chip *, const struct sample *);
};

struct chip {
    const struct chip_type *type;
    uint8_t addr;
    int fd;
    double mount[3][3];
    unsigned long resets, commands, measurements;
};

// The chip's view of a board-frame vector: M^T · v.
static void to_chip(const struct chip *c, const double v[3], double out[3]) {
    for (int i = 0; i < 3; i++) out[i] = c->mount[0][i] * v[0] + c->mount[1][i] * v[1] + c->mount[2][i] * v[2];
}

static int16_t count16(double value, double scale, long limit) {
    double r = round(value / scale);
    if (r > (double)limit) r = (double)limit;
    if (r < (double)-limit - 1) r = (double)-limit - 1;
    return (int16_t)r;
}

static void put_le16(uint8_t *p, int16_t v) {
    p[0] = (uint8_t)((uint16_t)v & 0xFF);
    p[1] = (uint8_t)((uint16_t)v >> 8);
}

static void put_be16(uint8_t *p, int16_t v) {
    p[0] = (uint8_t)((uint16_t)v >> 8);
    p[1] = (uint8_t)((uint16_t)v & 0xFF);
}

static void note(const struct chip *c, const char *what) {
    printf("%s@0x%02x: %s\n", c->type->name, c->addr, what);
    fflush(stdout);
}

// Bosch BMI160 (drivers/iio/imu/bmi160/bmi160_core.c). Probe: CMD 0x7E ← 0xB6 (soft reset), CHIP_ID 0x00 must
// read 0xD1, then CMD ← 0x11 (accel normal) and 0x15 (gyro normal). Scales come from the range registers
// (bmi160_accel_scale / bmi160_gyro_scale, µ-units), rates from ACC_CONF / GYR_CONF (power-on: 100 Hz). Data:
// gyro x y z at 0x0C, accel x y z at 0x12, little-endian s16.
static const uint8_t bmi160_range_bits[] = {0x03, 0x05, 0x08, 0x0C};
static const double bmi160_accel_scale[] = {0.000598, 0.001197, 0.002394, 0.004788};
static const double bmi160_gyro_scale[] = {0.001065, 0.000532, 0.000266, 0.000133, 0.000066};

static void bmi160_power_on(struct chip *c) {
    write_reg(c->fd, 0x00, 0xD1);  // CHIP_ID
    write_reg(c->fd, 0x03, 0x00);  // PMU_STATUS: accel and gyro suspended
    write_reg(c->fd, 0x40, 0x28);  // ACC_CONF: normal filter, 100 Hz
    write_reg(c->fd, 0x41, 0x03);  // ACC_RANGE: ±2 g
    write_reg(c->fd, 0x42, 0x28);  // GYR_CONF: 100 Hz
    write_reg(c->fd, 0x43, 0x00);  // GYR_RANGE: ±2000 °/s
    write_reg(c->fd, 0x7E, 0x00);  // CMD
}

static void bmi160_service(struct chip *c, const struct sample *s) {
    (void)s;
    int cmd = read_reg(c->fd, 0x7E);
    if (cmd <= 0) return;
    if (cmd == 0xB6) {
        bmi160_power_on(c);
        c->resets++;
        note(c, "soft reset (CMD 0xB6): power-on registers restored");
        return;
    }
    int pmu = read_reg(c->fd, 0x03);
    if (pmu < 0) return;
    if (cmd >= 0x10 && cmd <= 0x12) pmu = (pmu & ~0x30) | ((cmd & 0x3) << 4);
    if (cmd >= 0x14 && cmd <= 0x17) pmu = (pmu & ~0x0C) | ((cmd & 0x3) << 2);
    write_reg(c->fd, 0x03, (uint8_t)pmu);
    write_reg(c->fd, 0x7E, 0x00);
    c->commands++;
    char text[64];
    snprintf(text, sizeof(text), "CMD 0x%02x: PMU_STATUS 0x%02x", cmd, pmu);
    note(c, text);
}

// Fed whatever PMU_STATUS says: CMD is an event, and two commands written within one service period (the driver
// writes 0x11, waits 3.8 ms, writes 0x15) leave only the second to see — seen in a loaded TCG guest, where an
// accelerometer left "suspended" read zeros. The driver never reads PMU_STATUS.
static void bmi160_feed(struct chip *c, const struct sample *s) {
    int arange = read_reg(c->fd, 0x41), grange = read_reg(c->fd, 0x43);
    if (arange < 0 || grange < 0) return;
    double ascale = 0, gscale = 0;
    for (int i = 0; i < 4; i++)
        if ((arange & 0x0F) == bmi160_range_bits[i]) ascale = bmi160_accel_scale[i];
    if ((grange & 0x07) <= 4) gscale = bmi160_gyro_scale[grange & 0x07];
    uint8_t data[12];
    double a[3], g[3];
    to_chip(c, s->acc, a);
    to_chip(c, s->gyr, g);
    int accel_on = ascale > 0, gyro_on = gscale > 0;
    if (!accel_on && !gyro_on) return;
    for (int i = 0; i < 3; i++) {
        put_le16(data + 2 * i, gyro_on ? count16(g[i], gscale, 32767) : 0);
        put_le16(data + 6 + 2 * i, accel_on ? count16(a[i], ascale, 32767) : 0);
    }
    if (accel_on && gyro_on) write_block(c->fd, 0x0C, data, 12);
    else if (gyro_on) write_block(c->fd, 0x0C, data, 6);
    else write_block(c->fd, 0x12, data + 6, 6);
}

// ST LSM6DSO (drivers/iio/imu/st_lsm6dsx/st_lsm6dsx_core.c, the LSM6DSR/DSO group). Probe: WHO_AM_I 0x0F must
// read 0x6C; CTRL3_C 0x12 gets SW_RESET (bit 0) then BOOT (bit 7), both self-clearing on the chip; the sensor
// hub probe reads its output registers (zeros here: no external sensor found). Without an interrupt line the
// driver has no buffer: each in_*_raw read switches the sensor on (ODR in CTRL1_XL / CTRL2_G bits 7:4), waits
// three sample periods, reads, and switches it off again (st_lsm6dsx_read_oneshot). Full scale in bits 3:2
// (fs_table: 61/122/244/488 µg, 8.75/17.5/35/70 m°/s, through IIO_G_TO_M_S_2 and IIO_DEGREE_TO_RAD). Data: gyro
// at 0x22, accel at 0x28, little-endian s16; no new data while a sensor's ODR is 0 (power-down).
static const double lsm6dso_accel_scale[] = {0.000598205, 0.004785645, 0.001196411, 0.002392822};  // by FS bits
static const double lsm6dso_gyro_scale[] = {0.000152716, 0.000305433, 0.000610865, 0.001221730};

static void lsm6dso_power_on(struct chip *c) {
    write_reg(c->fd, 0x0F, 0x6C);  // WHO_AM_I
    write_reg(c->fd, 0x10, 0x00);  // CTRL1_XL: power-down, ±2 g
    write_reg(c->fd, 0x11, 0x00);  // CTRL2_G: power-down, ±250 °/s
    write_reg(c->fd, 0x12, 0x04);  // CTRL3_C: IF_INC
}

static void lsm6dso_service(struct chip *c, const struct sample *s) {
    (void)s;
    int ctrl3 = read_reg(c->fd, 0x12);
    if (ctrl3 < 0 || !(ctrl3 & 0x81)) return;
    if (ctrl3 & 0x01) {
        lsm6dso_power_on(c);
        c->resets++;
        note(c, "SW_RESET: power-on registers restored, bit cleared");
    } else {
        write_reg(c->fd, 0x12, (uint8_t)(ctrl3 & ~0x80));
        note(c, "BOOT: trimming reloaded, bit cleared");
    }
}

static void lsm6dso_feed(struct chip *c, const struct sample *s) {
    int ctrl1 = read_reg(c->fd, 0x10), ctrl2 = read_reg(c->fd, 0x11);
    if (ctrl1 < 0 || ctrl2 < 0) return;
    double a[3], g[3];
    uint8_t data[6];
    if (ctrl2 >> 4) {
        to_chip(c, s->gyr, g);
        for (int i = 0; i < 3; i++) put_le16(data + 2 * i, count16(g[i], lsm6dso_gyro_scale[(ctrl2 >> 2) & 3], 32767));
        write_block(c->fd, 0x22, data, 6);
    }
    if (ctrl1 >> 4) {
        to_chip(c, s->acc, a);
        for (int i = 0; i < 3; i++) put_le16(data + 2 * i, count16(a[i], lsm6dso_accel_scale[(ctrl1 >> 2) & 3], 32767));
        write_block(c->fd, 0x28, data, 6);
    }
}

// InvenSense MPU-6050 (drivers/iio/imu/inv_mpu6050/inv_mpu_core.c). Probe: WHO_AM_I 0x75 must read 0x68;
// PWR_MGMT_1 0x6B ← H_RESET (bit 7, self-clearing; the chip then sleeps, bit 6); then the driver wakes it and
// puts accel and gyro in standby (PWR_MGMT_2). Without an interrupt the driver registers no buffer and no
// trigger ("no IRQ, no trigger, no buffer"): polled only. Scales from GYRO_CONFIG 0x1B / ACCEL_CONFIG 0x1C bits
// 4:3 (gyro_scale_6050 in n-units, accel_scale in µ-units). Data: accel x y z, temperature, gyro x y z from
// 0x3B, big-endian s16, one 14-byte block; nothing new while the chip sleeps.
static const double mpu6050_accel_scale[] = {0.000598, 0.001196, 0.002392, 0.004785};
static const double mpu6050_gyro_scale[] = {0.000133090, 0.000266181, 0.000532362, 0.001064724};

static void mpu6050_power_on(struct chip *c) {
    write_reg(c->fd, 0x75, 0x68);  // WHO_AM_I
    write_reg(c->fd, 0x6B, 0x40);  // PWR_MGMT_1: SLEEP
    write_reg(c->fd, 0x6C, 0x00);  // PWR_MGMT_2
    write_reg(c->fd, 0x19, 0x00);  // SMPLRT_DIV
    write_reg(c->fd, 0x1A, 0x00);  // CONFIG
    write_reg(c->fd, 0x1B, 0x00);  // GYRO_CONFIG: ±250 °/s
    write_reg(c->fd, 0x1C, 0x00);  // ACCEL_CONFIG: ±2 g
    write_reg(c->fd, 0x68, 0x00);  // SIGNAL_PATH_RESET
    write_reg(c->fd, 0x6A, 0x00);  // USER_CTRL
}

static void mpu6050_service(struct chip *c, const struct sample *s) {
    (void)s;
    int pwr1 = read_reg(c->fd, 0x6B);
    if (pwr1 >= 0 && (pwr1 & 0x80)) {
        mpu6050_power_on(c);
        c->resets++;
        note(c, "H_RESET: power-on registers restored (sleeping), bit cleared");
    }
    int path = read_reg(c->fd, 0x68);
    if (path > 0) write_reg(c->fd, 0x68, 0x00);  // SIGNAL_PATH_RESET self-clears
    int user = read_reg(c->fd, 0x6A);
    if (user >= 0 && (user & 0x07)) write_reg(c->fd, 0x6A, (uint8_t)(user & ~0x07));  // FIFO/I2C_MST/SIG_COND_RESET
}

static void mpu6050_feed(struct chip *c, const struct sample *s) {
    int pwr1 = read_reg(c->fd, 0x6B), gcfg = read_reg(c->fd, 0x1B), acfg = read_reg(c->fd, 0x1C);
    if (pwr1 < 0 || gcfg < 0 || acfg < 0 || (pwr1 & 0x40)) return;
    double a[3], g[3];
    to_chip(c, s->acc, a);
    to_chip(c, s->gyr, g);
    uint8_t data[14];
    for (int i = 0; i < 3; i++) {
        put_be16(data + 2 * i, count16(a[i], mpu6050_accel_scale[(acfg >> 3) & 3], 32767));
        put_be16(data + 8 + 2 * i, count16(g[i], mpu6050_gyro_scale[(gcfg >> 3) & 3], 32767));
    }
    put_be16(data + 6, (int16_t)lround((25.0 - 36.53) * 340));  // 25 °C: T = raw / 340 + 36.53
    write_block(c->fd, 0x3B, data, 14);
}

// Bosch BMP280 (drivers/iio/pressure/bmp280-core.c). Probe: ID 0xD0 must read 0x58; the driver writes
// CTRL_MEAS 0xF4 (oversampling, normal mode) and CONFIG 0xF5, reads the 24 calibration bytes from 0x88 and
// compensates every reading with them (Bosch's integer formulas). The chip's side: calibration words (the
// datasheet's example part), and adc_T / adc_P found by bisection so that the driver's compensation gives 25 °C
// and the recording's pressure. Data: press MSB LSB XLSB then temp, from 0xF7, 20 bits left-aligned, big-endian;
// nothing new in sleep mode (CTRL_MEAS bits 1:0 = 0). RESET 0xE0 ← 0xB6 restores the power-on registers.
static const uint16_t bmp280_t1 = 27504;
static const int16_t bmp280_t2 = 26435, bmp280_t3 = -1000;
static const uint16_t bmp280_p1 = 36477;
static const int16_t bmp280_p[9] = {0, -10685, 3024, 2855, 140, -7, 15500, -14600, 6000};  // P2..P9 at [1..8]

static int32_t bmp280_t_fine(int32_t adc_t) {
    int32_t var1 = ((((adc_t >> 3) - ((int32_t)bmp280_t1 << 1))) * ((int32_t)bmp280_t2)) >> 11;
    int32_t var2 = (((((adc_t >> 4) - ((int32_t)bmp280_t1)) * ((adc_t >> 4) - ((int32_t)bmp280_t1))) >> 12) *
                    ((int32_t)bmp280_t3)) >> 14;
    return var1 + var2;
}

// Pressure in Pa × 256 (Q24.8), as the driver's bmp280_compensate_press returns it.
static uint32_t bmp280_pressure_q8(int32_t adc_p, int32_t t_fine) {
    int64_t var1 = (int64_t)t_fine - 128000, var2, p;
    var2 = var1 * var1 * (int64_t)bmp280_p[5];
    var2 += (var1 * (int64_t)bmp280_p[4]) << 17;
    var2 += ((int64_t)bmp280_p[3]) << 35;
    var1 = ((var1 * var1 * (int64_t)bmp280_p[2]) >> 8) + ((var1 * (int64_t)bmp280_p[1]) << 12);
    var1 = ((((int64_t)1) << 47) + var1) * ((int64_t)bmp280_p1) >> 33;
    if (var1 == 0) return 0;
    p = ((((int64_t)1048576 - adc_p) << 31) - var2) * 3125 / var1;
    var1 = (((int64_t)bmp280_p[8]) * (p >> 13) * (p >> 13)) >> 25;
    var2 = (((int64_t)bmp280_p[7]) * p) >> 19;
    p = ((p + var1 + var2) >> 8) + (((int64_t)bmp280_p[6]) << 4);
    return (uint32_t)p;
}

static void bmp280_power_on(struct chip *c) {
    uint8_t calib[24];
    int16_t words[12] = {(int16_t)bmp280_t1, bmp280_t2, bmp280_t3, (int16_t)bmp280_p1};
    for (int i = 1; i <= 8; i++) words[3 + i] = bmp280_p[i];
    for (int i = 0; i < 12; i++) put_le16(calib + 2 * i, words[i]);
    write_block(c->fd, 0x88, calib, 24);
    write_reg(c->fd, 0xD0, 0x58);  // ID
    write_reg(c->fd, 0xE0, 0x00);  // RESET
    write_reg(c->fd, 0xF3, 0x00);  // STATUS
    write_reg(c->fd, 0xF4, 0x00);  // CTRL_MEAS: sleep
    write_reg(c->fd, 0xF5, 0x00);  // CONFIG
}

static void bmp280_service(struct chip *c, const struct sample *s) {
    (void)s;
    if (read_reg(c->fd, 0xE0) == 0xB6) {
        bmp280_power_on(c);
        c->resets++;
        note(c, "RESET 0xB6: power-on registers restored");
    }
}

static void bmp280_feed(struct chip *c, const struct sample *s) {
    int ctrl = read_reg(c->fd, 0xF4);
    if (ctrl < 0 || (ctrl & 3) == 0) return;
    // adc_T for 25.00 °C: T = (t_fine * 5 + 128) >> 8 in 0.01 °C rises with adc_T.
    int32_t lo = 0, hi = (1 << 20) - 1;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (((bmp280_t_fine(mid) * 5 + 128) >> 8) < 2500) lo = mid + 1;
        else hi = mid;
    }
    int32_t adc_t = lo, t_fine = bmp280_t_fine(adc_t);
    // adc_P: pressure falls as adc_P rises; the count whose compensated pressure is nearest the recording's.
    double want = s->pressure * 256.0;
    lo = 0;
    hi = (1 << 20) - 1;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if ((double)bmp280_pressure_q8(mid, t_fine) > want) lo = mid + 1;
        else hi = mid;
    }
    int32_t adc_p = lo;
    if (lo > 0 && fabs((double)bmp280_pressure_q8(lo - 1, t_fine) - want) < fabs((double)bmp280_pressure_q8(lo, t_fine) - want))
        adc_p = lo - 1;
    if (adc_p == 0x80000) adc_p++;  // the driver reads 0x80000 as "measurement skipped"
    uint8_t data[6] = {(uint8_t)(adc_p >> 12), (uint8_t)(adc_p >> 4), (uint8_t)((adc_p & 0xF) << 4),
                       (uint8_t)(adc_t >> 12), (uint8_t)(adc_t >> 4), (uint8_t)((adc_t & 0xF) << 4)};
    write_block(c->fd, 0xF7, data, 6);
}

// AKM AK8975 (drivers/iio/magnetometer/ak8975.c). Probe: WIA 0x00 must read 0x48; CNTL 0x0A ← 0x0F (fuse ROM
// access) to read the sensitivity adjustment ASA 0x10-0x12 (0x80: 0.3 µT a count, in_magn_scale 0.003 G), then
// power-down. The chip measures on demand: for every in_magn_*_raw read the driver writes CNTL ← 0x01 (single
// measurement), polls ST1 0x02 for DRDY every 10 ms (no interrupt, no EOC GPIO), reads the axis and ST2. The
// chip's side, done here: on CNTL = 0x01, latch the current field into HX..HZ (0x03-0x08, little-endian, ±4095),
// set DRDY and return to power-down (CNTL 0), in one block write.
static void ak8975_power_on(struct chip *c) {
    write_reg(c->fd, 0x00, 0x48);  // WIA
    write_reg(c->fd, 0x01, 0x9A);  // INFO
    write_reg(c->fd, 0x02, 0x00);  // ST1
    write_reg(c->fd, 0x09, 0x00);  // ST2
    write_reg(c->fd, 0x0A, 0x00);  // CNTL: power-down
    uint8_t asa[3] = {0x80, 0x80, 0x80};
    write_block(c->fd, 0x10, asa, 3);
}

static void ak8975_service(struct chip *c, const struct sample *s) {
    int cntl = read_reg(c->fd, 0x0A);
    if (cntl < 0 || (cntl & 0x0F) != 0x01) return;
    double m[3];
    to_chip(c, s->mag, m);
    uint8_t block[9];
    block[0] = 0x01;  // ST1: DRDY
    for (int i = 0; i < 3; i++) put_le16(block + 1 + 2 * i, count16(m[i] / 100.0, 0.003, 4095));  // µT → G
    block[7] = 0x00;  // ST2: no overflow, no error
    block[8] = 0x00;  // CNTL: back to power-down
    write_block(c->fd, 0x02, block, 9);
    c->measurements++;
}

static const struct chip_type chip_types[] = {
    {"bmi160", bmi160_power_on, bmi160_service, bmi160_feed},
    {"lsm6dso", lsm6dso_power_on, lsm6dso_service, lsm6dso_feed},
    {"mpu6050", mpu6050_power_on, mpu6050_service, mpu6050_feed},
    {"bmp280", bmp280_power_on, bmp280_service, bmp280_feed},
    {"ak8975", ak8975_power_on, ak8975_service, NULL},
};

// ---- set-up ----------------------------------------------------------------------------------------------

static int find_stub_bus(void) {
    DIR *dir = opendir("/sys/bus/i2c/devices");
    if (!dir) return -1;
    struct dirent *e;
    int bus = -1;
    while ((e = readdir(dir)) && bus < 0) {
        int n;
        if (sscanf(e->d_name, "i2c-%d", &n) != 1) continue;
        char path[256], name[64] = "";
        snprintf(path, sizeof(path), "/sys/bus/i2c/devices/i2c-%d/name", n);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fgets(name, sizeof(name), f) && strncmp(name, "SMBus stub driver", 17) == 0) bus = n;
        fclose(f);
    }
    closedir(dir);
    return bus;
}

static int parse_chip(const char *arg, struct chip *c, int bus) {
    char name[32];
    unsigned addr;
    int used = 0;
    if (sscanf(arg, "%31[^@]@%x%n", name, &addr, &used) != 2) return -1;
    c->type = NULL;
    for (size_t i = 0; i < sizeof(chip_types) / sizeof(chip_types[0]); i++)
        if (strcmp(chip_types[i].name, name) == 0) c->type = &chip_types[i];
    if (!c->type) {
        fprintf(stderr, "i2c-imu-emulator: unknown chip '%s' (bmi160, lsm6dso, mpu6050, bmp280, ak8975)\n", name);
        return -1;
    }
    c->addr = (uint8_t)addr;
    memset(c->mount, 0, sizeof(c->mount));
    for (int i = 0; i < 3; i++) c->mount[i][i] = 1;
    if (arg[used] == '/') {
        double *m = &c->mount[0][0];
        if (sscanf(arg + used + 1, "%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5],
                   &m[6], &m[7], &m[8]) != 9) {
            fprintf(stderr, "i2c-imu-emulator: '%s': the mount matrix needs nine numbers\n", arg);
            return -1;
        }
    }
    char dev[32];
    snprintf(dev, sizeof(dev), "/dev/i2c-%d", bus);
    c->fd = open(dev, O_RDWR | O_CLOEXEC);
    if (c->fd < 0) {
        fprintf(stderr, "i2c-imu-emulator: cannot open %s: %s (modprobe i2c-dev)\n", dev, strerror(errno));
        return -1;
    }
    // FORCE: the address is (or will be) claimed by the chip's driver; both talk to the same stub registers.
    if (ioctl(c->fd, I2C_SLAVE_FORCE, (long)c->addr) < 0 || read_reg(c->fd, 0x00) < 0) {
        fprintf(stderr, "i2c-imu-emulator: no stub chip at 0x%02x on %s (load i2c-stub with chip_addr=0x%02x)\n",
                c->addr, dev, c->addr);
        return -1;
    }
    return 0;
}

static int load_replay(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "i2c-imu-emulator: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t capacity = 1024;
    samples = malloc(capacity * sizeof(*samples));
    struct sample s;
    while (fscanf(f, "%lf %lf %lf %lf %lf %lf %lf %lf %lf %lf %lf", &s.t, &s.acc[0], &s.acc[1], &s.acc[2], &s.gyr[0],
                  &s.gyr[1], &s.gyr[2], &s.mag[0], &s.mag[1], &s.mag[2], &s.pressure) == 11) {
        if (sample_count == capacity) samples = realloc(samples, (capacity *= 2) * sizeof(*samples));
        samples[sample_count++] = s;
    }
    fclose(f);
    if (sample_count < 2) {
        fprintf(stderr, "i2c-imu-emulator: %s has fewer than two lines of eleven numbers\n", path);
        return -1;
    }
    return 0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: i2c-imu-emulator REPLAY.si CHIP@ADDR[/m00,...,m22] ...\n");
        return 2;
    }
    if (load_replay(argv[1]) != 0) return 1;
    int bus = find_stub_bus();
    if (bus < 0) {
        fprintf(stderr, "i2c-imu-emulator: no i2c-stub adapter (modprobe i2c-stub chip_addr=...; modprobe i2c-dev)\n");
        return 1;
    }
    int count = argc - 2;
    struct chip *chips = calloc((size_t)count, sizeof(*chips));
    for (int i = 0; i < count; i++) {
        if (parse_chip(argv[i + 2], &chips[i], bus) != 0) return 1;
        chips[i].type->preset(&chips[i]);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    double period = (samples[sample_count - 1].t - samples[0].t) / (double)(sample_count - 1);
    // The recording's clock: sample k (cycling) is current from start + k * period, on CLOCK_MONOTONIC, the
    // clock the agent stamps polled samples with: a check can tell which samples a reading may come from.
    // Each is fed once, late ones skipped (after a stall the chips show the sample of now, as a real chip would).
    double start = now_s(), last_report = start;
    printf("loaded %zu samples (%.1f Hz); %d chips preset; ready i2c-%d; sample 0 at monotonic %.6f\n", sample_count,
           1 / period, count, bus, start);
    fflush(stdout);
    size_t fed = (size_t)-1, fed_total = 0;
    struct timespec tick;
    clock_gettime(CLOCK_MONOTONIC, &tick);
    while (!want_exit) {
        double t = now_s();
        size_t k = (size_t)((t - start) / period);
        const struct sample *s = &samples[k % sample_count];
        if (k != fed) {
            for (int i = 0; i < count; i++)
                if (chips[i].type->feed) chips[i].type->feed(&chips[i], s);
            fed = k;
            fed_total++;
        }
        for (int i = 0; i < count; i++) chips[i].type->service(&chips[i], s);
        if (t - last_report >= 10) {
            last_report = t;
            printf("fed %zu samples", fed_total);
            for (int i = 0; i < count; i++)
                printf("; %s resets %lu commands %lu measurements %lu", chips[i].type->name, chips[i].resets,
                       chips[i].commands, chips[i].measurements);
            printf("\n");
            fflush(stdout);
        }
        tick.tv_nsec += 2000000;
        if (tick.tv_nsec >= 1000000000) {
            tick.tv_nsec -= 1000000000;
            tick.tv_sec++;
        }
        if (now_s() > (double)tick.tv_sec + (double)tick.tv_nsec * 1e-9 + 0.05) clock_gettime(CLOCK_MONOTONIC, &tick);
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &tick, NULL);
    }
    return 0;
}
