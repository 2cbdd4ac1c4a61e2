#ifndef MOTIONAGENT_CFUZZERDRIVER_H
#define MOTIONAGENT_CFUZZERDRIVER_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (compiler-rt, FuzzerDriver.cpp), for a program whose main is its own: SwiftPM links an
/// executable target's entry point as `<module>_main`, so libFuzzer's own main is never the one that runs.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
#endif
