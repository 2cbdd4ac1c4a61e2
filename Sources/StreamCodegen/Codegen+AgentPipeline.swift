import StreamDeclarations

/// AgentPipeline's view of the declarations: which stream type runs each stream.
enum AgentPipelineCodegen {
    static var outputs: [GeneratedOutput] {
        [.file("Sources/AgentPipeline/Streams/StreamCatalog+Make.swift", catalogMake)]
    }

    static var catalogMake: String {
        var s = SwiftSource()
        s.line(SwiftSource.banner)
        s.line()
        s.line("import AgentPorts")
        s.line()
        s.block("extension StreamCatalog {") { s in
            s.doc(
                "The stream object behind each name: the type its declaration names (`StreamDeclaration.streamType`) "
                    + "builds itself from this catalog (`CatalogStream.make`)."
            )
            s.block("package func make(_ name: StreamName, _ settings: StreamSettings) -> any MotionStream {") { s in
                s.line("switch name {")
                for stream in StreamDeclaration.table {
                    s.line("case .\(stream.swiftName): \(stream.streamType).make(name, settings, in: self)")
                }
                s.line("}")
            }
        }
        return s.text
    }
}
