/// Step truth from two foot switches, cleaned by one rule applied identically to every walk.
///
/// The raw truth is every rising edge (0→1) of either switch. On some walks a switch chatters (it opens for a
/// sample or two inside one stance and closes again, so one footfall gives two edges) and on others a switch
/// misses footfalls (a light contact never closes it while the other foot keeps stepping). The rule rests on
/// one fact of walking: feet alternate. Two consecutive contacts of the same foot, with no contact of the
/// other foot between them,
/// - less than `chatterInterval` apart are one contact (the shortest stride considered, 3.5 steps/s, is
///   0.57 s; the chatter seen in the Oxford set is 0.18–0.45 s apart): the second is dropped;
/// - up to `strideInterval` apart are one stride whose other-foot contact was not registered: one step is
///   added (the slowest walk in the set has 1.5 s strides);
/// - further apart are a pause (standing, shuffling at the end of a walk): nothing is added.
/// The counts moved each way are reported beside the raw truth, never hidden in it.
struct FootSwitchTruth {
    static let chatterInterval = 0.5
    static let strideInterval = 1.6

    /// Rising edges of either switch, s.
    private(set) var raw: [Double] = []
    /// The contacts after the rule, s (an added contact sits midway between the two same-foot contacts).
    private(set) var cleaned: [Double] = []
    private(set) var dropped = 0
    private(set) var added = 0

    private var previous: (a: Int, b: Int)?
    private var lastContact: (time: Double, foot: Int)?

    /// Offers one row of the foot-switch file (time in s, each switch 0 or 1), in time order.
    mutating func add(time: Double, a: Int, b: Int) {
        defer { previous = (a, b) }
        guard let p = previous else { return }
        if p.a == 0, a == 1 { contact(time, foot: 0) }
        if p.b == 0, b == 1 { contact(time, foot: 1) }
    }

    private mutating func contact(_ time: Double, foot: Int) {
        raw.append(time)
        if let last = lastContact, last.foot == foot {
            let interval = time - last.time
            if interval < Self.chatterInterval {
                dropped += 1
                return
            }
            if interval <= Self.strideInterval {
                added += 1
                cleaned.append((last.time + time) / 2)
            }
        }
        cleaned.append(time)
        lastContact = (time, foot)
    }
}
