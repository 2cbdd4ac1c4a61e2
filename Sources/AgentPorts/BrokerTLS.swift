/// TLS settings; `nil` paths mean "not used". TLS 1.2 is the minimum version offered.
package struct BrokerTLS: Sendable, Hashable {
    package var caFile: String?
    package var certFile: String?
    package var keyFile: String?

    package init(caFile: String? = nil, certFile: String? = nil, keyFile: String? = nil) {
        self.caFile = caFile
        self.certFile = certFile
        self.keyFile = keyFile
    }
}
