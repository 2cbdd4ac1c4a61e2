/// TLS settings; `nil` paths mean "not used". TLS 1.2 is the minimum version offered.
public struct BrokerTLS: Sendable, Hashable {
    public var caFile: String?
    public var certFile: String?
    public var keyFile: String?

    public init(caFile: String? = nil, certFile: String? = nil, keyFile: String? = nil) {
        self.caFile = caFile
        self.certFile = certFile
        self.keyFile = keyFile
    }
}
