#ifndef MOTIONAGENT_SYSTEM_CLOCK_H
#define MOTIONAGENT_SYSTEM_CLOCK_H
/// 1 when the kernel considers the system clock synchronized (adjtimex: not TIME_ERROR, STA_UNSYNC clear),
/// 0 when not, -1 when it cannot tell. Swift's Glibc module does not export <sys/timex.h>.
int motion_system_clock_synchronized(void);
#endif
