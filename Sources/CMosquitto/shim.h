#ifndef MOTIONAGENT_CMOSQUITTO_SHIM_H
#define MOTIONAGENT_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#include <mqtt_protocol.h>
#endif
