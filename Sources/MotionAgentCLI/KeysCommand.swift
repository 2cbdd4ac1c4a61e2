import AgentConfig
import AgentControl
import ArgumentParser
import Foundation
import Platform

/// `motion-agent keys`: the operators' signing keys (docs/security.md, "Keys").
struct KeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Make and show operator signing keys (Ed25519) for signed commands and desired documents.",
        subcommands: [Generate.self, Public.self]
    )

    struct Generate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a new private key (mode 600) and print the line for the devices' trusted keys file."
        )

        @Option(help: "Where to write the private key; keep it on the operator's machine only.") var output: String
        @Option(help: "The key id (letters, digits, . _ -); default: the first 8 bytes of its public key in hex.")
        var id: String?

        func run() throws {
            guard !FileManager.default.fileExists(atPath: output) else {
                throw ValidationError("\(output) exists: a key is never overwritten — choose another path")
            }
            var key = try OperatorSigningKey.generate(id: id ?? "pending")
            if id == nil {
                key = try key.named("op-" + key.publicKey.prefix(8).map { String(format: "%02x", $0) }.joined())
            }
            do {
                try AtomicFile.write(Array(key.fileText.utf8), to: output, mode: 0o600)
            } catch {
                throw ValidationError("cannot write \(output): \(error)")
            }
            print(key.trustLine)
            printError(
                "wrote \(output) (mode 600). Add the line above to control.trusted_keys_file on every device that should obey this key; sign with --signing-key \(output)."
            )
        }
    }

    struct Public: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the trusted keys line of a private key file."
        )

        @Argument(help: "The private key file.") var key: String

        func run() throws {
            print(try OperatorKeyFile(path: key).key.trustLine)
        }
    }
}
