// The ThreadSanitizer false positive tsan_mutex_handoff.c answers: two threads appending to one Mutex-protected
// array, which is correct, are reported as a "Swift access race" once the Mutex is contended.
//
//   swiftc -sanitize=thread -g scripts/checks/sanitizers/mutex_handoff_repro.swift -o /tmp/repro
//   /tmp/repro                                   # WARNING: ThreadSanitizer: Swift access race
//   clang -shared -fPIC -o /tmp/shim.so scripts/checks/sanitizers/tsan_mutex_handoff.c
//   LD_PRELOAD=/tmp/shim.so /tmp/repro           # no report
import Foundation
import Synchronization

final class Box: Sendable { let values = Mutex<[Int]>([]) }
let box = Box()
let threads = (0..<2).map { i in Thread { for k in 0..<2000 { box.values.withLock { $0.append(k + i) } } } }
threads.forEach { $0.start() }
while box.values.withLock({ $0.count }) < 4000 { usleep(1000) }
print("appended", box.values.withLock { $0.count })
