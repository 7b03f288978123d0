public import Foundation

/// Salesforce's date-time text, as its REST API writes it (`2026-11-24T10:00:00.000+0000`: UTC,
/// milliseconds, the offset without a colon) and as SOQL takes it in a literal
/// (`2026-11-24T10:00:00Z`, `…+01:00`, `…-0800`, with or without milliseconds) — the Mobile SDK's
/// `getIsoStringFromMillis` and `getMillisFromIsoString`, on milliseconds since 1970.
///
/// ```swift
/// SalesforceDateTime.string(fromMillis: 1_795_514_400_000)     // "2026-11-24T10:00:00.000+0000"
/// SalesforceDateTime.millis(from: "2026-11-24T11:00:00+01:00")  // 1_795_514_400_000
/// ```
public enum SalesforceDateTime {
    /// The text Salesforce writes for an instant: UTC, milliseconds, `+0000`.
    public static func string(fromMillis millis: Int64) -> String {
        let days = floorDivide(millis, 86_400_000)
        let inDay = millis - days * 86_400_000
        let (year, month, day) = civil(fromDays: days)
        let hour = inDay / 3_600_000, minute = inDay / 60_000 % 60, second = inDay / 1000 % 60, milli = inDay % 1000
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(hour, 2) + ":" + pad(minute, 2) + ":" + pad(second, 2)
            + "." + pad(milli, 3) + "+0000"
    }

    /// The text Salesforce writes for a date.
    public static func string(from date: Date) -> String {
        string(fromMillis: millis(of: date))
    }

    /// Milliseconds since 1970 of a date (rounded down to the millisecond).
    public static func millis(of date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// The date of milliseconds since 1970.
    public static func date(fromMillis millis: Int64) -> Date {
        Date(timeIntervalSince1970: Double(millis) / 1000)
    }

    /// Milliseconds since 1970 of a date-time text: `yyyy-MM-ddTHH:mm:ss`, optionally `.SSS`
    /// (one to three digits), then `Z`, `±HH:mm` or `±HHmm`. `nil` for any other text.
    public static func millis(from text: String) -> Int64? {
        let bytes = Array(text.utf8)
        func number(_ start: Int, _ count: Int) -> Int64? {
            guard start + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[start..<start + count] {
                guard (48...57).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            return value
        }
        func byte(_ index: Int, is expected: Character) -> Bool { index < bytes.count && bytes[index] == expected.asciiValue }
        guard let year = number(0, 4), byte(4, is: "-"), let month = number(5, 2), byte(7, is: "-"), let day = number(8, 2),
              byte(10, is: "T"), let hour = number(11, 2), byte(13, is: ":"), let minute = number(14, 2), byte(16, is: ":"),
              let second = number(17, 2), (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              hour < 24, minute < 60, second < 60 else { return nil }
        var index = 19
        var milli: Int64 = 0
        if byte(index, is: ".") {
            var digits = 0
            index += 1
            while index < bytes.count, (48...57).contains(bytes[index]) {
                guard digits < 3 else { return nil }
                milli = milli * 10 + Int64(bytes[index] - 48)
                digits += 1
                index += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<3 { milli *= 10 }
        }
        var offset: Int64 = 0
        if byte(index, is: "Z") {
            index += 1
        } else if byte(index, is: "+") || byte(index, is: "-") {
            let sign: Int64 = byte(index, is: "-") ? -1 : 1
            guard let hours = number(index + 1, 2), hours < 24 else { return nil }
            index += 3
            if byte(index, is: ":") { index += 1 }
            guard let minutes = number(index, 2), minutes < 60 else { return nil }
            index += 2
            offset = sign * (hours * 60 + minutes) * 60_000
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }
        let days = days(fromCivil: year, month, day)
        return days * 86_400_000 + ((hour * 60 + minute) * 60 + second) * 1000 + milli - offset
    }

    // MARK: Calendar arithmetic (proleptic Gregorian, UTC)

    private static func floorDivide(_ value: Int64, _ divisor: Int64) -> Int64 {
        value >= 0 ? value / divisor : -((-value + divisor - 1) / divisor)
    }

    private static func isLeap(_ year: Int64) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a civil date.
    private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let shifted = month <= 2 ? year - 1 : year
        let era = floorDivide(shifted, 400)
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date of days since 1970-01-01.
    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let shifted = days + 719_468
        let era = floorDivide(shifted, 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
