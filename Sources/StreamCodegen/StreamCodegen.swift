import StreamDeclarations

/// Everything derived from the stream declarations (Sources/StreamDeclarations), as the files and regions
/// `scripts/codegen/streams/generate.sh` writes. StreamCodegenTests fails when what is committed differs.
package enum StreamCodegen {
    package static var outputs: [GeneratedOutput] {
        AgentPortsCodegen.outputs + MotionWireCodegen.outputs + SparkplugCodegen.outputs
            + AgentPipelineCodegen.outputs + SchemasCodegen.outputs + DocsCodegen.outputs
    }
}
