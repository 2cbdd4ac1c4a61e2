import AgentPorts
internal import CSystemClock

/// Whether the system clock is synchronized (NTP, chrony, PTP), from the kernel's view: adjtimex(2) reports
/// TIME_ERROR, or the STA_UNSYNC status bit, until a time daemon has disciplined the clock. Embedded boards
/// without a real-time clock boot in 1970; consumers and the command age check need to know.
package enum ClockSynchronization {
    package static func isSynchronized() -> Bool {
        motion_system_clock_synchronized() == 1
    }
}
