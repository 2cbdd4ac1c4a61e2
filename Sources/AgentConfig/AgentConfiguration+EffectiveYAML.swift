import Yams

extension AgentConfiguration {
    /// The configuration in effect — file values, environment overrides and defaults — as config.yaml text
    /// with every key, for `motion-agent check-config`. Loading it again gives an equal configuration.
    package func effectiveYAML() -> String {
        let body = Self.node(for: ConfigurationSchema.root, in: self)
        let header = """
            # motion-agent effective configuration: the file's values, environment overrides and defaults.
            # null means the documented default. Paths are as resolved at load (file: its directory; environment: cwd).


            """
        do {
            return header + (try Yams.serialize(node: body, indent: 2, width: -1, allowUnicode: true))
        } catch {
            // The tree holds only mappings, lists and scalars built here, which libyaml's emitter always accepts;
            // still, a configuration dump must not crash the agent.
            return header + "# could not render the configuration: \(error)\n"
        }
    }

    private static func node(for items: [ConfigurationSchema.Item], in configuration: AgentConfiguration) -> Node {
        let pairs: [(Node, Node)] = items.map { item in
            let value: Node
            switch item.entry {
            case .section(let children):
                value = node(for: children, in: configuration)
            case .field(let field):
                switch field.value {
                case .scalar(_, let render):
                    value = node(for: render(configuration))
                case .list(_, let render):
                    // Flow style (`[]`, `["a", "b"]`): an empty list stays visible as one.
                    value = Node(render(configuration).map(node(for:)), .implicit, .flow)
                }
            }
            return (Node(item.key), value)
        }
        return Node(pairs, .implicit, .block)
    }

    private static func node(for scalar: RenderedScalar) -> Node {
        switch scalar {
        case .text(let text): Node(text, .implicit, .doubleQuoted)
        case .plain(let text): Node(text, .implicit, .plain)
        case .null: Node("null", .implicit, .plain)
        }
    }
}
