import Foundation

/// The terminal switched to non-canonical input without echo (so `q` arrives at once); `restore()` puts back
/// what was there. Ctrl-C arrives as the byte 3 (ISIG off), so the view quits
/// through the same path as `q` and always restores the terminal.
final class TerminalMode {
    private var saved = termios()
    private let active: Bool

    init() {
        guard isatty(STDIN_FILENO) == 1, tcgetattr(STDIN_FILENO, &saved) == 0 else {
            active = false
            return
        }
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG)
        active = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0
    }

    func restore() {
        if active { tcsetattr(STDIN_FILENO, TCSANOW, &saved) }
    }
}
