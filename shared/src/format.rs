//! Human formatting of durations, shared by the CLI and the web UI.

use crate::schema::Micros;

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
