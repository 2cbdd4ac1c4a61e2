import Foundation

/// A throw-away CA and a server certificate for 127.0.0.1, made with the openssl command line tool.
package struct TLSFiles: Sendable {
    package let directory: String
    package var caFile: String { directory + "/ca.crt" }
    package var serverCertificate: String { directory + "/server.crt" }
    package var serverKey: String { directory + "/server.key" }

    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// Writes `ca.crt`/`ca.key` and `server.crt`/`server.key` (subjectAltName IP:127.0.0.1) into `directory`.
    package static func make(in directory: String) async throws -> TLSFiles {
        let files = TLSFiles(directory: directory)
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: directory + "/san.ext", atomically: true, encoding: .utf8)
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try await openssl(
            ["req", "-x509"] + curve + [
                "-keyout", directory + "/ca.key", "-out", files.caFile, "-days", "2", "-subj",
                "/CN=MotionAgent test CA",
            ]
        )
        try await openssl(
            ["req"] + curve + ["-keyout", files.serverKey, "-out", directory + "/server.csr", "-subj", "/CN=127.0.0.1"]
        )
        try await openssl([
            "x509", "-req", "-in", directory + "/server.csr", "-CA", files.caFile, "-CAkey", directory + "/ca.key",
            "-CAcreateserial", "-out", files.serverCertificate, "-days", "2", "-extfile", directory + "/san.ext",
        ])
        return files
    }

    /// Runs the openssl command line tool, or says what failed and that it needs installing.
    package static func openssl(_ arguments: [String], in directory: String? = nil) async throws {
        let runner = ProcessRunner(executable: "/usr/bin/openssl", arguments: arguments, workingDirectory: directory)
        try runner.start()
        let code = await runner.waitForExit(timeout: 30)
        guard code == 0 else {
            throw Failure(
                description:
                    "openssl \(arguments.first ?? "") failed (\(code.map(String.init) ?? "timeout")): \(runner.standardError) — install openssl"
            )
        }
    }
}
