// The harness (real mosquitto, child processes, the fake IIO tree, a capturing subscriber) is shared with
// motion-bench and lives in Sources/Harness; tests get it through this module.
@_exported import Harness

/// Test-only fixtures on top of the harness (which holds the broker clusters the bench shares): the VM, TLS files, a redirecting broker, the
/// Prometheus text parser and an acknowledgement recorder.
package enum TestSupport {}
