//! A monitor's status badge for a README or a dashboard: the protocol on the left, its last
//! run's total (or what went wrong) on the right, coloured by how that run went. What it says,
//! its colour and its sizes are here; the SVG is the Leptos component
//! `h123_frontend::pages::monitor::badge`.

use crate::format;
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
    pub fn fill(self) -> &'static str {
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

/// Where a badge reading `label | value` puts its halves, in pixels.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct BadgeLayout {
    /// The left half's width (the label's).
    pub left: u32,
    /// The right half's width (the value's).
    pub right: u32,
    /// The label's centre.
    pub label_x: u32,
    /// The value's centre.
    pub value_x: u32,
}

impl BadgeLayout {
    /// The halves wide enough for `label` and `value` at 11 px: about 6.5 px a character, plus
    /// 6 px of padding each side.
    pub fn of(label: &str, value: &str) -> Self {
        let width = |text: &str| 12 + (text.chars().count() as u32 * 13).div_ceil(2);
        let (left, right) = (width(label), width(value));
        BadgeLayout {
            left,
            right,
            label_x: left / 2,
            value_x: left + right / 2,
        }
    }

    /// The whole badge's width.
    pub fn width(self) -> u32 {
        self.left + self.right
    }
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
    fn a_badge_is_wide_enough_for_its_words() {
        let narrow = BadgeLayout::of("h3", "1 ms");
        let wide = BadgeLayout::of("h3", "a much longer value");
        assert_eq!(narrow.left, wide.left, "the same label");
        assert!(wide.width() > narrow.width() + 50);
        assert_eq!(narrow.value_x, narrow.left + narrow.right / 2);
    }
}
