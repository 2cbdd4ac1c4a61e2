#include "system_clock.h"
#include <sys/timex.h>

int motion_system_clock_synchronized(void) {
    struct timex t = {0};
    t.modes = 0; /* read only */
    int state = adjtimex(&t);
    if (state < 0) return -1;
    return (state != TIME_ERROR && (t.status & STA_UNSYNC) == 0) ? 1 : 0;
}
