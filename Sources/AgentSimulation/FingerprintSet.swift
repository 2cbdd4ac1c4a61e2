/// The ledger's set of message fingerprints: open addressing over a power-of-two table of `UInt64`, probed
/// linearly. A fingerprint is already a hash (FNV-1a), so it needs only a cheap mix to spread its low bits, not
/// the SipHash `Set` runs over every element; a schedule inserts some tens of thousands of them.
struct FingerprintSet {
    /// 0 marks an empty slot; the fingerprint 0 itself is kept aside in `holdsZero`.
    private var slots: [UInt64]
    private var holdsZero = false
    private(set) var count = 0

    init(capacity: Int = 1024) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        slots = Array(repeating: 0, count: size)
    }

    /// Inserts `value`; false when it was there already.
    @discardableResult
    mutating func insert(_ value: UInt64) -> Bool {
        if value == 0 {
            defer { holdsZero = true }
            if holdsZero { return false }
            count += 1
            return true
        }
        if (count + 1) * 4 > slots.count * 3 { grow() }
        let inserted = slots.withUnsafeMutableBufferPointer { Self.place(value, in: $0) }
        if inserted { count += 1 }
        return inserted
    }

    func contains(_ value: UInt64) -> Bool {
        if value == 0 { return holdsZero }
        return slots.withUnsafeBufferPointer { table in
            let mask = table.count - 1
            var index = Self.slot(value, mask: mask)
            while true {
                let held = table[index]
                if held == value { return true }
                if held == 0 { return false }
                index = (index + 1) & mask
            }
        }
    }

    private static func slot(_ value: UInt64, mask: Int) -> Int {
        // The finaliser of SplitMix64: every bit of the fingerprint reaches the low bits the mask keeps.
        var x = value
        x = (x ^ (x >> 30)) &* 0xbf58_476d_1ce4_e5b9
        x = (x ^ (x >> 27)) &* 0x94d0_49bb_1331_11eb
        x ^= x >> 31
        return Int(truncatingIfNeeded: x) & mask
    }

    private static func place(_ value: UInt64, in table: UnsafeMutableBufferPointer<UInt64>) -> Bool {
        let mask = table.count - 1
        var index = slot(value, mask: mask)
        while true {
            let held = table[index]
            if held == value { return false }
            if held == 0 {
                table[index] = value
                return true
            }
            index = (index + 1) & mask
        }
    }

    private mutating func grow() {
        let old = slots
        slots = Array(repeating: 0, count: old.count * 2)
        slots.withUnsafeMutableBufferPointer { table in
            for value in old where value != 0 { _ = Self.place(value, in: table) }
        }
    }
}
