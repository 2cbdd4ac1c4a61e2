import ArgumentParser

/// How `fleet set|unset|clear` publish: how long they wait, for which devices, how they sign their document and
/// what they build on.
struct FleetEditOptions: ParsableArguments {
    @Option(help: "Seconds to wait for the broker.") var timeout: Double = 5
    @OptionGroup var reading: FleetReadOptions
    @Option(help: "Seconds to wait for the devices to report the new version (0: do not wait).") var wait: Double = 5
    @Option(help: "A file of device ids, one per line: --wait expects each (a wildcard finds no status on RabbitMQ).")
    var devices: String?
    @Option(
        help:
            "Sign the document with this operator key (motion-agent keys generate; the devices' control.trusted_keys_file)."
    )
    var signingKey: String?
    @Option(
        help:
            "A trusted keys file: the retained document may be signed by any of its keys (besides --signing-key's own)."
    )
    var trustedKeys: String?
    @Flag(
        help:
            "Start from an empty document instead of the retained one (for one that does not verify); its version is one above the highest the devices in scope report."
    )
    var replace = false
    // Not `--version`: the root command's version flag has that name, and `fleet set --help` listed both.
    @Option(
        name: .customLong("document-version"),
        help: "The version to publish (default: the retained document's + 1)."
    ) var version: Int?
}
