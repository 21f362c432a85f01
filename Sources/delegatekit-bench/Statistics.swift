/// The middle value (the mean of the two middle ones for an even count).
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

extension Double {
    /// `12.3`, `1.08`, `—` for not measured.
    func formatted(_ digits: Int = 1) -> String {
        guard isFinite else { return "—" }
        var text = String(self.rounded(toPlaces: digits))
        if digits == 0, text.hasSuffix(".0") { text.removeLast(2) }
        return text
    }

    func rounded(toPlaces digits: Int) -> Double {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        return (self * scale).rounded() / scale
    }
}
