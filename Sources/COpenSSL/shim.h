#ifndef MOTIONAGENT_COPENSSL_SHIM_H
#define MOTIONAGENT_COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#endif
