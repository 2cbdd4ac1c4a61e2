#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Something a tree ensemble reads: input `i` of a fixed list.
package protocol TreeInput {
    func input(_ i: Int) -> Double
}

/// A gradient-boosted tree ensemble (scikit-learn's `HistGradientBoostingClassifier`) read from the text
/// table `scripts/research/activity/train_activity.py` writes, evaluated without allocating.
///
/// The table, one record a line: `ensemble <classes> <inputs>`, `baseline <score>…`, then per tree `t`
/// followed by its nodes in sklearn's order — `s <input> <threshold> <left> <right>` (a split: go left when the
/// input is ≤ the threshold or is NaN; children numbered within the tree) or `l <score>` (a leaf). Tree `i` adds to
/// class `i % classes`; with one class the ensemble is binary and its score is the log-odds of that class.
///
/// The nodes are held in 13 bytes each, as the agent keeps the model for its whole run: sklearn numbers a tree's
/// nodes depth first, left subtree first, so a split's left child is the next node (the table is checked for it)
/// and only the right one is stored; a split's threshold and a leaf's score share one number.
package struct ActivityTrees: Sendable {
    package let classCount: Int
    package let inputCount: Int
    let baseline: [Double]
    let roots: [Int32]
    /// The input a split reads, or -1 for a leaf.
    let nodeInput: [Int8]
    /// A split's threshold, a leaf's score.
    let nodeNumber: [Double]
    /// A split's right child (its left child is the node after it).
    let nodeRight: [Int32]

    package struct FormatError: Error, CustomStringConvertible {
        package let line: Int
        package let text: String
        package var description: String {
            "activity model table, line \(line): cannot read '\(text)' — regenerate it with "
                + "scripts/research/activity/train_activity.py"
        }
    }

    package init(table: String) throws {
        var classes = 0
        var inputs = 0
        var baseline: [Double] = []
        var roots: [Int32] = []
        var input: [Int8] = []
        var number: [Double] = []
        var right: [Int32] = []
        var treeStart = 0
        var lineNumber = 0
        // The model lives for the whole run: its arrays are sized exactly (a node is an `s` or `l` line) and the
        // text is walked a line at a time, not split into an array of every line — that array and the arrays'
        // growth were half a megabyte of the agent's heap at start-up, pages the allocator kept.
        let nodes = Self.nodeLines(in: table)
        input.reserveCapacity(nodes)
        number.reserveCapacity(nodes)
        right.reserveCapacity(nodes)
        var rest = table[...]
        while !rest.isEmpty {
            let end = rest.utf8.firstIndex(of: UInt8(ascii: "\n")) ?? rest.endIndex
            let line = rest[..<end]
            rest = end == rest.endIndex ? rest[end...] : rest[rest.index(after: end)...]
            if line.isEmpty { continue }
            lineNumber += 1
            let f = line.split(separator: " ")
            func fail() -> FormatError { FormatError(line: lineNumber, text: String(line)) }
            guard let kind = f.first else { continue }
            switch kind {
            case "ensemble":
                guard f.count == 3, let c = Int(f[1]), let n = Int(f[2]), c > 0, n > 0 else { throw fail() }
                (classes, inputs) = (c, n)
            case "baseline":
                baseline = f.dropFirst().compactMap { Double(String($0)) }
                guard baseline.count == f.count - 1 else { throw fail() }
            case "t":
                treeStart = input.count
                roots.append(Int32(treeStart))
            case "s":
                // The left child must be the next node (depth-first numbering), as only the right one is kept.
                guard f.count == 5, let i = Int8(f[1]), Int(i) < inputs, i >= 0, let t = Double(String(f[2])),
                    let l = Int(f[3]), let r = Int32(f[4]), !roots.isEmpty, treeStart + l == input.count + 1
                else { throw fail() }
                input.append(i)
                number.append(t)
                right.append(Int32(treeStart) + r)
            case "l":
                guard f.count == 2, let v = Double(String(f[1])), !roots.isEmpty else { throw fail() }
                input.append(-1)
                number.append(v)
                right.append(0)
            default:
                throw fail()
            }
        }
        guard classes > 0, baseline.count == classes, !roots.isEmpty, roots.count % classes == 0 else {
            throw FormatError(line: lineNumber, text: "(a header, baseline or tree is missing)")
        }
        for i in input.indices where input[i] >= 0 {
            // Past the left child (the next node) and inside the table: so the next node exists too.
            guard right[i] > i + 1, right[i] < input.count else {
                throw FormatError(line: i, text: "(a child beyond the table)")
            }
        }
        classCount = classes
        inputCount = inputs
        self.baseline = baseline
        self.roots = roots
        nodeInput = input
        nodeNumber = number
        nodeRight = right
    }

    /// How many nodes the table holds: its lines that start with `s ` or `l `.
    private static func nodeLines(in table: String) -> Int {
        var count = 0
        var atLineStart = true
        var previous: UInt8 = 0
        for byte in table.utf8 {
            if atLineStart, byte == UInt8(ascii: "s") || byte == UInt8(ascii: "l") {
                previous = byte
                atLineStart = false
                continue
            }
            if previous != 0, byte == UInt8(ascii: " ") { count += 1 }
            previous = 0
            atLineStart = byte == UInt8(ascii: "\n")
        }
        return count
    }

    /// The raw score of class `c` (log-odds for a binary ensemble).
    package func score<Input: TreeInput>(class c: Int, _ x: Input) -> Double {
        var s = baseline[c]
        var tree = c
        while tree < roots.count {
            var node = Int(roots[tree])
            while nodeInput[node] >= 0 {
                let v = x.input(Int(nodeInput[node]))
                // NaN goes left, as the training script's trees were grown with no missing values.
                node = !(v > nodeNumber[node]) ? node + 1 : Int(nodeRight[node])
            }
            s += nodeNumber[node]
            tree += classCount
        }
        return s
    }

    /// The binary ensemble's probability of its class.
    package func probability<Input: TreeInput>(_ x: Input) -> Double {
        1 / (1 + exp(-score(class: 0, x)))
    }

    /// Number of nodes (for the bench and the docs).
    package var nodeCount: Int { nodeInput.count }
}

extension ActivityFeatures: TreeInput {
    package func input(_ i: Int) -> Double { self[i] }
}
