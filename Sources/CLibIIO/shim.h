#ifndef MOTIONAGENT_CLIBIIO_SHIM_H
#define MOTIONAGENT_CLIBIIO_SHIM_H
#include <iio.h>
#endif
