#ifndef MOTIONAGENT_CSQLITE_SHIM_H
#define MOTIONAGENT_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
