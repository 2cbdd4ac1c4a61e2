internal import CLibIIO

/// One channel the acquisition reads, prepared once per session so the per-sample loop only converts and
/// scales.
struct ScanSlot {
    enum Role: Equatable {
        case acceleration(Int)
        case angularVelocity(Int)
        case magneticField(Int)
        case pressure
        case temperature
        case timestamp
    }

    let channel: OpaquePointer
    let role: Role
    let scale: Double
    let offset: Double
    /// Bytes `iio_channel_convert` writes for one element (storage bits / 8).
    let bytes: Int
    let isSigned: Bool
    /// The raw counts at which the sensor clipped; nil when not checked (timestamps, 64-bit, unknown format).
    let rawLimits: ClosedRange<Int64>?
    /// For polling: whether to read `raw` (scaled here) or `input` (already scaled by the driver).
    let pollsRaw: Bool

    init?(handle: IIOChannelHandle, role: Role, forBuffer: Bool) {
        channel = handle.pointer
        self.role = role
        scale = role == .timestamp ? 1 : IIOAttribute.double(IIOAttribute.channel(handle.pointer, "scale")) ?? 1
        offset = role == .timestamp ? 0 : IIOAttribute.double(IIOAttribute.channel(handle.pointer, "offset")) ?? 0
        pollsRaw = handle.hasRaw
        let format = handle.isScanElement ? iio_channel_get_data_format(handle.pointer)?.pointee : nil
        if forBuffer {
            // The kernel's invariant (realbits + shift ≤ storagebits, iio_chan_spec.scan_type) checked, not
            // assumed: iio_channel_convert shifts and sign-extends by these numbers with memmove and memset,
            // and a type that breaks it (a buggy driver, a remote iiod) made it write out of bounds
            // (FuzzIIOScan found it: le:u6/8>>16).
            guard let format, [8, 16, 32, 64].contains(format.length),
                Int(format.length / 8) * Int(max(format.repeat, 1)) <= ScanSlot.scratchBytes,
                format.bits >= 1, UInt64(format.bits) + UInt64(format.shift) <= UInt64(format.length)
            else { return nil }
            bytes = Int(format.length / 8)
            isSigned = format.is_signed
        } else {
            guard pollsRaw || handle.hasProcessed else { return nil }
            bytes = 8
            isSigned = true
        }
        // A polled `_raw` count has the same range as the channel's scan type, when the driver gives one.
        if let format, role != .timestamp, forBuffer || pollsRaw, format.bits >= 2, format.bits < 63 {
            let bits = Int64(format.bits)
            if format.is_signed {
                rawLimits = (-(Int64(1) << (bits - 1)))...((Int64(1) << (bits - 1)) - 1)
            } else {
                // An unsigned count of 0 is a legitimate reading for many sensors; only the top clips.
                rawLimits = Int64.min...((Int64(1) << bits) - 1)
            }
        } else {
            rawLimits = nil
        }
    }

    /// Room for one converted element (repeat included).
    static let scratchBytes = 64

    /// The scale discovery read for this channel when the channel now has none, else nil. Without `in_*_scale`
    /// the ABI makes the counts the unit (scale 1), so a device that comes back only partly registered (its
    /// directory there, its scale not yet) would have its counts published as g, rad/s or µT — the sanitizer
    /// run of the suite saw 208 g from a fake device that reappeared file by file. The session refuses such a
    /// device and retries instead.
    static func missingScale(of handle: IIOChannelHandle, discovered: [IIOChannelInfo]) -> Double? {
        guard handle.hasRaw || handle.isScanElement, iio_channel_find_attr(handle.pointer, "scale") == nil,
            let known = discovered.first(where: { $0.id == handle.id }), !known.isProcessed, known.scale != 1
        else { return nil }
        return known.scale
    }

    /// Demultiplexes one element at `source` (le/be, sign, bits, shift: `iio_channel_convert`) into a count.
    @inline(__always)
    func raw(at source: UnsafeRawPointer, scratch: UnsafeMutableRawPointer) -> Int64 {
        iio_channel_convert(channel, scratch, source)
        switch (bytes, isSigned) {
        case (1, true): return Int64(scratch.load(as: Int8.self))
        case (1, false): return Int64(scratch.load(as: UInt8.self))
        case (2, true): return Int64(scratch.load(as: Int16.self))
        case (2, false): return Int64(scratch.load(as: UInt16.self))
        case (4, true): return Int64(scratch.load(as: Int32.self))
        case (4, false): return Int64(scratch.load(as: UInt32.self))
        default: return scratch.load(as: Int64.self)
        }
    }

    /// (raw + offset) × scale, in the kernel's unit.
    @inline(__always)
    func value(raw: Int64) -> Double {
        (Double(raw) + offset) * scale
    }
}
