extension WorldMagneticModel {
    /// How far a compass heading can be trusted where the horizontal field is weak (near the magnetic poles).
    ///
    /// Thresholds from the WMM technical report's blackout zones around the magnetic poles, after the military
    /// specification MIL-PRF-89500B: the "blackout zone" where H < 2000 nT, in which compasses are unreliable,
    /// and the "caution zone" where 2000 ≤ H < 6000 nT, in which their accuracy degrades. A fixed magnetometer error
    /// becomes a larger heading error as H shrinks, and local disturbances dominate.
    package enum HeadingUsability: Sendable, Hashable, CaseIterable {
        /// H ≥ 6000 nT: magnetic heading at its usual accuracy.
        case normal
        /// 2000 ≤ H < 6000 nT: report a widened heading accuracy.
        case degraded
        /// H < 2000 nT: do not derive heading from the magnetometer.
        case unusable

        /// The caution-zone boundary, nT.
        package static let degradedBelowNanotesla = 6000.0
        /// The blackout-zone boundary, nT.
        package static let unusableBelowNanotesla = 2000.0

        package init(horizontalNanotesla: Double) {
            if !(horizontalNanotesla >= Self.unusableBelowNanotesla) {
                // NaN lands here too: an unknown field is no basis for a heading.
                self = .unusable
            } else if horizontalNanotesla < Self.degradedBelowNanotesla {
                self = .degraded
            } else {
                self = .normal
            }
        }
    }
}
