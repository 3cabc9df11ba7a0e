//! The phase colours every picture of a waterfall uses: the web page's stylesheet (its light
//! scheme, `frontend/site/style.css`) and the SVG export draw phases in the same colours.

use crate::schema::Phase;

/// Text colour for dark ink on a light fill.
const DARK_INK: &str = "#111827";
/// Text colour for light ink on a dark fill.
const LIGHT_INK: &str = "#ffffff";

/// The fill colour of a phase: the Okabe-Ito palette, told apart with common colour-vision
/// deficiencies (`--dns`, `--connect`, ... in the stylesheet's light scheme).
pub fn fill(phase: Phase) -> &'static str {
    match phase {
        Phase::Dns => "#e69f00",
        Phase::Connect => "#56b4e9",
        Phase::Proxy => "#8c6bb1",
        Phase::Tls => "#009e73",
        Phase::Quic => "#cc79a7",
        Phase::Send => "#f0e442",
        Phase::Wait => "#0072b2",
        Phase::Receive => "#d55e00",
    }
}

/// The text colour that reads best on a phase's fill: dark or light, whichever contrasts more.
pub fn ink(phase: Phase) -> &'static str {
    let fill = luminance(fill(phase));
    if contrast(fill, luminance(DARK_INK)) >= contrast(fill, luminance(LIGHT_INK)) {
        DARK_INK
    } else {
        LIGHT_INK
    }
}

/// WCAG relative luminance of a `#rrggbb` colour.
fn luminance(hex: &str) -> f64 {
    let channel = |i: usize| {
        let c = f64::from(u8::from_str_radix(&hex[1 + 2 * i..3 + 2 * i], 16).unwrap_or(0)) / 255.0;
        if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2)
}

/// WCAG contrast ratio of two luminances.
fn contrast(a: f64, b: f64) -> f64 {
    (a.max(b) + 0.05) / (a.min(b) + 0.05)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_phase_has_its_own_fill_and_readable_ink() {
        let fills: Vec<&str> = Phase::ALL.into_iter().map(fill).collect();
        for (i, f) in fills.iter().enumerate() {
            assert!(!fills[..i].contains(f), "{f} used twice");
        }
        for phase in Phase::ALL {
            let ratio = contrast(luminance(fill(phase)), luminance(ink(phase)));
            assert!(ratio >= 4.0, "{phase:?}: contrast {ratio:.2}");
        }
        assert_eq!(ink(Phase::Send), DARK_INK, "dark ink on yellow");
        assert_eq!(ink(Phase::Wait), LIGHT_INK, "light ink on blue");
    }
}
