/// "Did you mean …" for keys and choices: the optimal-string-alignment distance (Levenshtein plus adjacent
/// transpositions, so `qso` is one edit from `qos`), compared case-insensitively with `-` and `_` equal.
enum EditDistance {
    /// The candidate closest to `word`, if it is close enough to be a plausible typo: at most a third of the
    /// word's length in edits (at least one), or one is a prefix of the other (`rate` → `rate_hz`).
    static func closest(to word: String, among candidates: [String]) -> String? {
        let target = normalized(word)
        guard !target.isEmpty else { return nil }
        let limit = max(1, target.count / 3)
        var best: (candidate: String, distance: Int)? = nil
        for candidate in candidates {
            let other = normalized(candidate)
            var distance = between(target, other)
            if distance > limit, min(other.count, target.count) >= 2,
                other.hasPrefix(target) || target.hasPrefix(other)
            {
                distance = limit
            }
            if distance <= limit, distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        return best?.candidate
    }

    static func between(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        // Three rows suffice for OSA: the current, the previous and the one before (for transpositions).
        var beforePrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], beforePrevious[j - 2] + 1)
                }
            }
            (beforePrevious, previous, current) = (previous, current, beforePrevious)
        }
        return previous[b.count]
    }

    private static func normalized(_ word: String) -> String {
        String(word.lowercased().map { $0 == "-" ? "_" : $0 })
    }
}
