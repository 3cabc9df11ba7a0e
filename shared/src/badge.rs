//! A monitor's status badge for a README or a dashboard: the protocol on the left, its last
//! run's total (or what went wrong) on the right, coloured by how that run went, as SVG.

use crate::format;
use crate::markup::escape;
use crate::monitor::{MonitorPoint, PointState};

/// How a badge's right half is coloured.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Tone {
    /// The last run answered within its thresholds.
    Good,
    /// It answered but breached a threshold, or answered an HTTP error.
    Warn,
    /// It failed, or the protocol was not measured.
    Bad,
    /// No run yet.
    Unknown,
}

impl Tone {
    /// The fill, dark enough for white text (WCAG AA at 11 px bold).
    fn fill(self) -> &'static str {
        match self {
            Tone::Good => "#1a7f37",
            Tone::Warn => "#9a6700",
            Tone::Bad => "#cf222e",
            Tone::Unknown => "#57606a",
        }
    }
}

/// The value and tone of a badge for the protocol's `latest` point.
pub fn of_latest(latest: Option<&MonitorPoint>) -> (String, Tone) {
    let Some(point) = latest else {
        return ("no runs".into(), Tone::Unknown);
    };
    match (point.state, point.figures.total) {
        (PointState::Ok, Some(total)) if point.breached.is_empty() => {
            (format::ms(total), Tone::Good)
        }
        (PointState::Ok, Some(total)) => (format!("{} over", format::ms(total)), Tone::Warn),
        (PointState::HttpError, _) => (
            point
                .status
                .map_or_else(|| "HTTP error".into(), |s| format!("HTTP {s}")),
            Tone::Warn,
        ),
        (PointState::Skipped, _) => ("not offered".into(), Tone::Bad),
        _ => ("failing".into(), Tone::Bad),
    }
}

/// A badge reading `label | value`, its right half in `tone`'s colour.
pub fn svg(label: &str, value: &str, tone: Tone) -> String {
    // About 6.5 px a character at 11 px, plus 6 px of padding each side.
    let width = |text: &str| 12 + (text.chars().count() as u32 * 13).div_ceil(2);
    let (left, right) = (width(label), width(value));
    let total = left + right;
    let (label, value) = (escape(label), escape(value));
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{total}" height="20" role="img" aria-label="{label}: {value}"><title>{label}: {value}</title><rect width="{left}" height="20" rx="3" fill="#24292f"/><rect x="{left}" width="{right}" height="20" rx="3" fill="{fill}"/><g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" font-weight="bold" text-anchor="middle"><text x="{lx}" y="14">{label}</text><text x="{rx}" y="14">{value}</text></g></svg>"##,
        fill = tone.fill(),
        lx = left / 2,
        rx = left + right / 2,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::monitor::{Figures, missed_point};
    use crate::schema::{Micros, Protocol};

    fn point(state: PointState, breached: bool) -> MonitorPoint {
        MonitorPoint {
            protocol: Some(Protocol::H3),
            state,
            status: Some(503),
            figures: Figures {
                total: Some(Micros(42_000)),
                ..Figures::default()
            },
            breached: if breached {
                vec!["total".into()]
            } else {
                Vec::new()
            },
            ..missed_point(0, 0)
        }
    }

    #[test]
    fn the_last_run_picks_the_words_and_the_colour() {
        assert_eq!(of_latest(None), ("no runs".into(), Tone::Unknown));
        let ok = point(PointState::Ok, false);
        assert_eq!(of_latest(Some(&ok)), ("42.0 ms".into(), Tone::Good));
        let over = point(PointState::Ok, true);
        assert_eq!(of_latest(Some(&over)), ("42.0 ms over".into(), Tone::Warn));
        let error = point(PointState::HttpError, false);
        assert_eq!(of_latest(Some(&error)), ("HTTP 503".into(), Tone::Warn));
        let failed = point(PointState::Failed, false);
        assert_eq!(of_latest(Some(&failed)), ("failing".into(), Tone::Bad));
    }

    #[test]
    fn a_badge_is_escaped_svg_wide_enough_for_its_words() {
        let badge = svg("h3", "<42 ms>", Tone::Good);
        assert!(badge.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(badge.contains("&lt;42 ms&gt;") && !badge.contains("<42"));
        assert!(badge.contains("#1a7f37"));
        let narrow = svg("h3", "1 ms", Tone::Good);
        let wide = svg("h3", "a much longer value", Tone::Good);
        let width = |s: &str| -> u32 {
            s.split("width=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        assert!(width(&wide) > width(&narrow) + 50);
    }
}
