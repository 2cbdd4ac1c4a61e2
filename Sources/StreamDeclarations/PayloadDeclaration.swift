/// A payload: the MotionModel value a topic carries and its fields, in the order they are written after the
/// envelope (`seq`, `timestamp`, `time`, `clockSynchronized`).
package struct PayloadDeclaration: Sendable {
    /// The `StreamPayload` case that carries it: `pedometerEvent`.
    package var swiftCase: String
    /// The MotionModel type: `PedometerEvent`.
    package var swiftType: String
    /// Its codec in MotionWire (`Payloads/Codecs/<codec>.swift`): `PedometerEventCodec`.
    package var codec: String
    package var shape: Shape
    /// The value's initializer as the decoder calls it: argument labels in order, each a field's `swift` accessor
    /// (`timestamp`: the envelope's). Nil when the payload is a single field's value (a raw sensor's vector).
    package var initializer: [String]?
    /// One line for a terminal (`watch`): the body of a Swift function of `v`, the value, returning a `String` (one
    /// expression, or statements ending in `return`), a line of code each.
    package var summary: [String]
    /// Sparkplug metrics carry sensor values as 32-bit floats (the sensors' precision, half the bytes) and the
    /// slow streams' as doubles.
    package var sparkplugFloats: Bool
    /// Members added to the sample's JSON Schema object as they are (an `if`/`then` across fields), JSON text.
    package var schemaRules: [(key: String, json: String)]

    package init(
        swiftCase: String,
        swiftType: String,
        codec: String,
        shape: Shape,
        initializer: [String]? = nil,
        summary: [String],
        sparkplugFloats: Bool = false,
        schemaRules: [(key: String, json: String)] = []
    ) {
        self.swiftCase = swiftCase
        self.swiftType = swiftType
        self.codec = codec
        self.shape = shape
        self.initializer = initializer
        self.summary = summary
        self.sparkplugFloats = sparkplugFloats
        self.schemaRules = schemaRules
    }

    package enum Shape: Sendable {
        /// A struct's fields.
        case fields([FieldDeclaration])
        /// An enum whose cases are each a struct: `discriminator` names the case on the wire (`"kind":"fall"`),
        /// then come the case's fields.
        case variants(discriminator: FieldDeclaration, [VariantDeclaration])
    }

    /// Every field of a struct payload (empty for variants).
    package var fields: [FieldDeclaration] {
        if case .fields(let fields) = shape { return fields }
        return []
    }
}

/// One case of an enum payload (`MotionEvent.fall(FallDetectionEvent)`).
package struct VariantDeclaration: Sendable {
    /// The discriminator's value and the enum case: `fall`.
    package var name: String
    /// The case's value type: `FallDetectionEvent`.
    package var swiftType: String
    package var doc: String
    package var initializer: [String]
    package var fields: [FieldDeclaration]

    package init(
        _ name: String,
        swiftType: String,
        doc: String,
        initializer: [String],
        fields: [FieldDeclaration]
    ) {
        self.name = name
        self.swiftType = swiftType
        self.doc = doc
        self.initializer = initializer
        self.fields = fields
    }
}

/// One field of a payload: its JSON key, how it is written, its unit, its Core Motion name and one line of
/// documentation (the schema's description, the docs' table, the Sparkplug metric's description).
package struct FieldDeclaration: Sendable {
    /// The JSON key.
    package var name: String
    package var kind: Kind
    /// Shown in the docs and on the Sparkplug metric; nil for a dimensionless value.
    package var unit: String?
    /// The Core Motion property it mirrors (`CMDeviceMotion.gravity`); nil where Core Motion has none.
    package var coreMotion: String?
    package var doc: String
    /// The Swift accessor of the value, relative to the payload's value (or the group's): `pressureKPa`;
    /// `""` for the value itself. Defaults to `name`.
    package var swift: String
    package var presence: Presence
    /// Written, but never read back: computed from other fields (a rotation matrix, Euler angles).
    package var derived: Bool
    /// Carried as a Sparkplug metric (its components, for a vector); false for what Sparkplug hosts compute.
    package var sparkplug: Bool
    package var constraints: Constraints

    package init(
        _ name: String,
        _ kind: Kind,
        unit: String? = nil,
        coreMotion: String? = nil,
        doc: String,
        swift: String? = nil,
        presence: Presence = .always,
        derived: Bool = false,
        sparkplug: Bool = true,
        constraints: Constraints = Constraints()
    ) {
        self.name = name
        self.kind = kind
        self.unit = unit
        self.coreMotion = coreMotion
        self.doc = doc
        self.swift = swift ?? name
        self.presence = presence
        self.derived = derived
        self.sparkplug = sparkplug
        self.constraints = constraints
    }

    package indirect enum Kind: Sendable {
        /// A number written with `decimals` places, trailing zeros trimmed.
        case number(decimals: Int)
        case integer
        case bool
        /// Wall-clock Unix seconds, 3 decimals (the stream maps the sample clock to wall time before encoding).
        case date
        /// A Swift `String` enum written as its raw value; `schema` names its shared definition in
        /// common.schema.json (nil: listed in place).
        case choice(swiftType: String, values: [String], schema: String?)
        /// `{"x","y","z"}` (`Vector3`).
        case vector(decimals: Int)
        /// `{"x","y","z","w"}` (`Quaternion`, unit length).
        case quaternion(decimals: Int)
        /// The rotation matrix of the quaternion at `swift`, `{"m11",…,"m33"}`.
        case rotationMatrix(decimals: Int)
        /// A nested object. With a `swiftType` it is a value of its own (at `swift`, optional with `.optional`),
        /// built by `initializer`; without one its fields are the parent value's, grouped on the wire.
        case group([FieldDeclaration], swiftType: String?, initializer: [String]?)
    }

    /// Whether the field is always there.
    package enum Presence: Sendable, Equatable {
        case always
        /// Always written; `null` when the value is nil.
        case nullable
        /// Written only when the value is not nil.
        case optional
        /// Always written, but readers meet older payloads without it (binary records of an older layout), so the
        /// schema does not require it and the decoder takes `absent` (a Swift expression) then.
        case optionalInSchema(absent: String)
    }

    /// What the JSON Schema adds about the value.
    package struct Constraints: Sendable {
        package var minimum: Double?
        package var maximum: Double?
        package var exclusiveMinimum: Double?
        /// A value outside the range that means "none" (`heading`'s −1).
        package var sentinel: Double?

        package init(
            minimum: Double? = nil,
            maximum: Double? = nil,
            exclusiveMinimum: Double? = nil,
            sentinel: Double? = nil
        ) {
            self.minimum = minimum
            self.maximum = maximum
            self.exclusiveMinimum = exclusiveMinimum
            self.sentinel = sentinel
        }
    }
}
