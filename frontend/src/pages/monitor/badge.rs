//! A monitor's status badge as an SVG picture (`/badge/{id}/{protocol}.svg`): the protocol on the
//! left, its last run's words on the right in the tone's colour (`shared::badge`). Drawn with
//! `pages::render_picture`, so the words are escaped by the view.

use h123_shared::badge::{BadgeLayout, Tone};
use leptos::prelude::*;

/// A badge reading `label | value`, its right half in `tone`'s colour.
pub fn badge(label: String, value: String, tone: Tone) -> impl IntoView + use<> {
    let at = BadgeLayout::of(&label, &value);
    let words = format!("{label}: {value}");
    let title = words.clone();
    view! {
        <svg xmlns="http://www.w3.org/2000/svg" width=at.width() height="20" role="img" aria-label=words>
            <title>{title}</title>
            <rect width=at.left height="20" rx="3" fill="#24292f"></rect>
            <rect x=at.left width=at.right height="20" rx="3" fill=tone.fill()></rect>
            <g fill="#fff" font-family="Verdana,DejaVu Sans,sans-serif" font-size="11" font-weight="bold" text-anchor="middle">
                <text x=at.label_x y="14">{label}</text>
                <text x=at.value_x y="14">{value}</text>
            </g>
        </svg>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pages::render_picture;

    #[test]
    fn a_badge_is_escaped_svg_in_its_tone() {
        let svg = render_picture(|| badge("h3".into(), "<42 ms>".into(), Tone::Good));
        assert!(
            svg.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg" width=""#),
            "{svg}"
        );
        assert!(
            svg.contains("&lt;42 ms&gt;") && !svg.contains("<42"),
            "{svg}"
        );
        assert!(svg.contains("#1a7f37"), "{svg}");
        assert!(
            !svg.contains("<!>"),
            "an SVG file has no hydration markers: {svg}"
        );
        let at = BadgeLayout::of("h3", "<42 ms>");
        assert!(
            svg.contains(&format!(r#" width="{}""#, at.width())),
            "{svg}"
        );
    }
}
