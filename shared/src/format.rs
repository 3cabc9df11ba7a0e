//! Human formatting of durations, shared by the CLI and the web UI.

use crate::schema::Micros;

/// `text` cut to `max` characters, the last one an ellipsis when cut.
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
        s.push('…');
        s
    }
}

/// Formats a duration with about three significant digits: `0.42 ms`,
/// `7.05 ms`, `12.3 ms`, `250 ms`, `1.25 s`, `12.5 s`, `125 s`.
///
/// Rounding is done in integers (half up), and a value that rounds up to the
/// next unit boundary moves to the coarser format, so `9.996 ms` reads
/// `10.0 ms` and `999.6 ms` reads `1.00 s`.
pub fn ms(d: Micros) -> String {
    let us = d.0;
    // (unit in µs, decimals shown, suffix), finest first.
    const FORMATS: [(u64, u32, &str); 6] = [
        (1_000, 2, "ms"),
        (1_000, 1, "ms"),
        (1_000, 0, "ms"),
        (1_000_000, 2, "s"),
        (1_000_000, 1, "s"),
        (1_000_000, 0, "s"),
    ];
    for (i, (unit, decimals, suffix)) in FORMATS.into_iter().enumerate() {
        let scale = 10u64.pow(decimals);
        let step = unit / scale; // µs per last displayed digit
        let n = us.saturating_add(step / 2) / step;
        // Each format covers values below 10, 100, 1000 of its unit.
        let limit = 10u64.pow(i as u32 % 3 + 1) * scale;
        if n < limit || i == FORMATS.len() - 1 {
            return fixed(n, decimals, suffix);
        }
    }
    unreachable!("the last format always matches")
}

/// Formats a signed difference in microseconds like [`ms`], with a sign:
/// `+1.25 ms`, `-0.40 ms`, `±0.00 ms` for zero.
pub fn signed_ms(delta_us: i64) -> String {
    let sign = match delta_us.signum() {
        1 => "+",
        -1 => "-",
        _ => "±",
    };
    format!("{sign}{}", ms(Micros(delta_us.unsigned_abs())))
}

/// A rate per second with about three significant digits and thousands
/// separators: `0`, `4.25`, `42.5`, `425`, `4,250`, `42,500`.
pub fn rate(per_sec: f64) -> String {
    if !per_sec.is_finite() || per_sec <= 0.0 {
        return "0".into();
    }
    if per_sec < 9.995 {
        return format!("{per_sec:.2}");
    }
    if per_sec < 99.95 {
        return format!("{per_sec:.1}");
    }
    count(per_sec.round() as u64)
}

/// A whole number with thousands separators: `7`, `4,250`, `1,234,567`.
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Bytes per second in decimal units with about three significant digits:
/// `0 B/s`, `512 B/s`, `1.50 kB/s`, `12.3 MB/s`, `1.25 GB/s`.
pub fn byte_rate(per_sec: f64) -> String {
    if !per_sec.is_finite() || per_sec <= 0.0 {
        return "0 B/s".into();
    }
    let units = ["B/s", "kB/s", "MB/s", "GB/s", "TB/s"];
    let mut value = per_sec;
    let mut unit = 0;
    while value >= 999.5 && unit < units.len() - 1 {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        return format!("{} B/s", value.round());
    }
    let text = if value < 9.995 {
        format!("{value:.2}")
    } else if value < 99.95 {
        format!("{value:.1}")
    } else {
        format!("{value:.0}")
    };
    format!("{text} {}", units[unit])
}

fn fixed(n: u64, decimals: u32, suffix: &str) -> String {
    if decimals == 0 {
        return format!("{n} {suffix}");
    }
    let scale = 10u64.pow(decimals);
    format!(
        "{}.{:0width$} {suffix}",
        n / scale,
        n % scale,
        width = decimals as usize
    )
}

/// The canonical reason phrase of common status codes; empty otherwise
/// (HTTP/2 and HTTP/3 carry none on the wire).
pub fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "",
    }
}

/// A status with its reason phrase when it has a common one, e.g. `404 Not Found` or `418`.
pub fn status(status: u16) -> String {
    match reason_phrase(status) {
        "" => status.to_string(),
        reason => format!("{status} {reason}"),
    }
}

/// A moment as the reader's clock shows it, to the minute: `2026-12-03 09:15 UTC+1` for
/// `unix_ms` at `offset_minutes` east of UTC (west is negative).
pub fn wall_clock(unix_ms: u64, offset_minutes: i32) -> String {
    let shifted = unix_ms.saturating_add_signed(i64::from(offset_minutes) * 60_000);
    let (year, month, day) = civil_from_days(shifted / 86_400_000);
    let minute = shifted % 86_400_000 / 60_000;
    let sign = if offset_minutes < 0 { '-' } else { '+' };
    let zone = match (
        offset_minutes.unsigned_abs() / 60,
        offset_minutes.unsigned_abs() % 60,
    ) {
        (0, 0) => "UTC".to_owned(),
        (hours, 0) => format!("UTC{sign}{hours}"),
        (hours, minutes) => format!("UTC{sign}{hours}:{minutes:02}"),
    };
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} {zone}",
        minute / 60,
        minute % 60
    )
}

/// The minute of `unix_ms` as an HTML `<time>` element's `datetime`: `2023-11-14T22:13Z`.
pub fn datetime_minute(unix_ms: u64) -> String {
    let (year, month, day) = civil_from_days(unix_ms / 86_400_000);
    let minute = unix_ms % 86_400_000 / 60_000;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}Z",
        minute / 60,
        minute % 60
    )
}

/// Proleptic Gregorian (year, month, day) of a day count since 1970-01-01
/// (Howard Hinnant's `civil_from_days`, for non-negative counts).
pub(crate) fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// Unix seconds of a UTC time written `YYYY-MM-DDTHH:MM:SS[.fff]Z` (as
/// certificate validity is kept; a fraction is dropped), or `None` when it
/// is not written so.
pub fn unix_seconds_of_rfc3339(text: &str) -> Option<i64> {
    let number = |range: std::ops::Range<usize>| -> Option<i64> {
        let digits = text.get(range)?;
        digits
            .bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| digits.parse().ok())?
    };
    let fraction = text.get(19..text.len().saturating_sub(1)).unwrap_or("x");
    let fraction_ok = fraction.is_empty()
        || (fraction.len() > 1
            && fraction.starts_with('.')
            && fraction[1..].bytes().all(|b| b.is_ascii_digit()));
    let shape = text.len() >= 20
        && fraction_ok
        && text.as_bytes()[4] == b'-'
        && text.as_bytes()[7] == b'-'
        && text.as_bytes()[10] == b'T'
        && text.ends_with('Z');
    if !shape {
        return None;
    }
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    // Howard Hinnant's `days_from_civil`.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hour * 3_600 + minute * 60 + second)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_cut_to_its_characters_with_an_ellipsis() {
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("abcd", 3), "ab…");
        assert_eq!(shorten("ééé€", 3), "éé…", "characters, not bytes");
    }

    #[test]
    fn rfc3339_times_read_back_as_unix_seconds() {
        assert_eq!(
            unix_seconds_of_rfc3339("2023-11-14T22:13:20Z"),
            Some(1_700_000_000)
        );
        assert_eq!(unix_seconds_of_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            unix_seconds_of_rfc3339("2023-11-14T22:13:20.250Z"),
            Some(1_700_000_000)
        );
        assert_eq!(unix_seconds_of_rfc3339("2023-11-14T22:13:20.Z"), None);
        assert_eq!(
            unix_seconds_of_rfc3339("2024-02-29T00:00:00Z"),
            Some(1_709_164_800)
        );
        assert_eq!(unix_seconds_of_rfc3339("2023-13-01T00:00:00Z"), None);
        assert_eq!(unix_seconds_of_rfc3339("yesterday"), None);
    }

    #[test]
    fn wall_clocks_shift_by_the_offset_across_days() {
        // 2023-11-14T22:13:20Z.
        let t = 1_700_000_000_123;
        assert_eq!(wall_clock(t, 0), "2023-11-14 22:13 UTC");
        assert_eq!(wall_clock(t, 60), "2023-11-14 23:13 UTC+1");
        assert_eq!(wall_clock(t, 120), "2023-11-15 00:13 UTC+2");
        assert_eq!(wall_clock(t, 330), "2023-11-15 03:43 UTC+5:30");
        assert_eq!(wall_clock(t, -300), "2023-11-14 17:13 UTC-5");
        assert_eq!(wall_clock(t, -570), "2023-11-14 12:43 UTC-9:30");
        // A leap day; before the epoch the clock stops at it (no record is that old).
        assert_eq!(wall_clock(951_782_400_000, 0), "2000-02-29 00:00 UTC");
        assert_eq!(wall_clock(0, -60), "1970-01-01 00:00 UTC-1");
    }

    #[test]
    fn picks_precision_by_magnitude() {
        let cases = [
            (0, "0.00 ms"),
            (4, "0.00 ms"),
            (5, "0.01 ms"),
            (420, "0.42 ms"),
            (7_049, "7.05 ms"),
            (12_345, "12.3 ms"),
            (250_000, "250 ms"),
            (1_250_000, "1.25 s"),
            (12_540_000, "12.5 s"),
            (125_000_000, "125 s"),
            (u64::MAX, "18446744073709 s"),
        ];
        for (us, want) in cases {
            assert_eq!(ms(Micros(us)), want, "{us} µs");
        }
    }

    #[test]
    fn rounding_up_moves_to_the_coarser_format() {
        assert_eq!(ms(Micros(9_994)), "9.99 ms");
        assert_eq!(ms(Micros(9_996)), "10.0 ms");
        assert_eq!(ms(Micros(99_960)), "100 ms");
        assert_eq!(ms(Micros(999_600)), "1.00 s");
        assert_eq!(ms(Micros(9_996_000)), "10.0 s");
    }

    #[test]
    fn signed_differences() {
        assert_eq!(signed_ms(1_250), "+1.25 ms");
        assert_eq!(signed_ms(-400), "-0.40 ms");
        assert_eq!(signed_ms(0), "±0.00 ms");
        assert_eq!(signed_ms(i64::MIN), "-9223372036855 s");
    }

    #[test]
    fn rates_have_three_digits_and_separators() {
        let cases = [
            (0.0, "0"),
            (f64::NAN, "0"),
            (4.254, "4.25"),
            (9.996, "10.0"),
            (42.46, "42.5"),
            (99.96, "100"),
            (425.4, "425"),
            (4_250.0, "4,250"),
            (1_234_567.0, "1,234,567"),
        ];
        for (x, want) in cases {
            assert_eq!(rate(x), want, "{x}");
        }
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(u64::MAX), "18,446,744,073,709,551,615");
    }

    #[test]
    fn byte_rates_use_decimal_units() {
        let cases = [
            (0.0, "0 B/s"),
            (512.0, "512 B/s"),
            (999.4, "999 B/s"),
            (999.6, "1.00 kB/s"),
            (1_500.0, "1.50 kB/s"),
            (12_340_000.0, "12.3 MB/s"),
            (1_250_000_000.0, "1.25 GB/s"),
        ];
        for (x, want) in cases {
            assert_eq!(byte_rate(x), want, "{x}");
        }
    }
}
