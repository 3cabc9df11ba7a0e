//! The waterfall drawn for a link preview: a [`WIDTH`]×[`HEIGHT`] picture (the size link
//! previews show as a large card) that reads at thumbnail size. The URL and the verdict in large
//! type, then the same rows, axis and legend as [`super::picture`] draws, scaled to fill the
//! rest. A probe across vantages is its whole waterfall, which the rasteriser fits.

use super::{INK, PLOT_X, ROW_H, TOP, axis, draw_rows, legend};
use h123_shared::Protocol;
use h123_shared::api::{ProbeRecord, ProbeStatus};
use h123_shared::format::shorten;
use h123_shared::waterfall::{fitted_span, layout_on};
use leptos::prelude::*;

/// The picture's width, in pixels.
pub const WIDTH: u32 = 1200;
/// The picture's height, in pixels.
pub const HEIGHT: u32 = 630;

/// The most characters of the verdict a line holds at its size.
const VERDICT_LINE: usize = 78;

/// `record` as a [`WIDTH`]×[`HEIGHT`] picture (a probe across vantages: its whole waterfall).
pub fn picture(record: &ProbeRecord) -> AnyView {
    if !record.vantages.is_empty() {
        return super::picture(record);
    }
    let (w, h) = (f64::from(WIDTH), f64::from(HEIGHT));
    let waterfall = layout_on(&record.result, fitted_span([&record.result]));
    let verdict = record.result.analysis.as_ref();
    let status = match (record.status, verdict) {
        (ProbeStatus::Done, Some(a)) => a.outcome.label(),
        (status, _) => status.as_str(),
    };
    let what = format!(
        "h123 · {} · {} attempt(s) · {status}",
        Protocol::versions(&record.options.protocols),
        waterfall.rows.len()
    );
    let mut y = 100.0;
    let verdict_lines = verdict
        .map(|a| wrap(&a.verdict.summary, VERDICT_LINE, 2))
        .unwrap_or_default()
        .into_iter()
        .map(|text| {
            y += 36.0;
            view! { <text x="40" y=y font-size="26" font-weight="bold" fill=INK>{text}</text> }
        })
        .collect_view();
    // The rows, axis and legend as the full picture draws them, from its axis labels (`TOP` -
    // 30) to under its legend, scaled into what is left: at most the rows that fit at full size,
    // the first ones of each protocol alike.
    let top = y + 22.0;
    let room = h - 16.0 - top;
    let fit = ((room - 70.0) / ROW_H).floor().max(1.0) as usize;
    let rows = first_rows(&waterfall.rows, |r| r.protocol, fit);
    let hidden = waterfall.rows.len() - rows.len();
    let plot_bottom = TOP + ROW_H * rows.len().max(1) as f64;
    let (from, to) = (TOP - 30.0, plot_bottom + 40.0);
    let scale = (room / (to - from)).min(w / super::WIDTH);
    let transform = format!(
        "translate({:.1} {:.1}) scale({scale:.4})",
        (w - super::WIDTH * scale) / 2.0,
        top - from * scale
    );
    let empty = waterfall.rows.is_empty().then(|| {
        view! { <text x=PLOT_X y=TOP + 17.0 fill="#6b7280">"no attempt finished"</text> }
    });
    let more = (hidden > 0).then(|| {
        view! {
            <text x=super::WIDTH - 16.0 y=plot_bottom + 30.0 text-anchor="end" fill="#4b5563">{format!("and {hidden} more attempt(s) in the full waterfall")}</text>
        }
    });
    view! {
        <svg xmlns="http://www.w3.org/2000/svg" width=w height=h viewBox=format!("0 0 {w} {h}") font-family="DejaVu Sans, Helvetica, Arial, sans-serif" font-size="12">
            <rect width="100%" height="100%" fill="#ffffff"></rect>
            <rect width="100%" height="8" fill="#1d4ed8"></rect>
            <text x="40" y="62" font-size="34" font-weight="bold" fill=INK>{shorten(&record.options.url, 52)}</text>
            <text x="40" y="100" font-size="22" fill="#4b5563">{what}</text>
            {verdict_lines}
            <g transform=transform>
                {axis(&waterfall.ticks, plot_bottom)}
                {empty}
                {draw_rows(&rows, TOP)}
                {legend(plot_bottom + 20.0)}
                {more}
            </g>
        </svg>
    }
    .into_any()
}
/// At most `fit` of `rows`: all of them when they fit, else the first ones of each protocol, as
/// many per protocol (at least one).
fn first_rows<R: Clone>(rows: &[R], protocol: impl Fn(&R) -> Protocol, fit: usize) -> Vec<R> {
    if rows.len() <= fit {
        return rows.to_vec();
    }
    let mut protocols: Vec<Protocol> = rows.iter().map(&protocol).collect();
    protocols.dedup();
    let each = (fit / protocols.len().max(1)).max(1);
    let mut seen: Vec<(Protocol, usize)> = Vec::new();
    rows.iter()
        .filter(|row| {
            let of = protocol(row);
            let count = match seen.iter_mut().find(|(p, _)| *p == of) {
                Some((_, n)) => n,
                None => {
                    seen.push((of, 0));
                    &mut seen.last_mut().expect("just pushed").1
                }
            };
            *count += 1;
            *count <= each
        })
        .cloned()
        .collect()
}

/// `text` in lines of at most `width` characters, broken between words, at most `lines` of
/// them (the last ending in an ellipsis when the text goes on).
fn wrap(text: &str, width: usize, lines: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    for word in text.split_whitespace() {
        let len = current.chars().count();
        if len > 0 && len + 1 + word.chars().count() > width {
            out.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(word);
    }
    if !current.is_empty() {
        out.push(current);
    }
    if out.len() > lines {
        out.truncate(lines);
        if let Some(last) = out.last_mut() {
            *last = shorten(&format!("{last} …"), width);
        }
    }
    out.into_iter().map(|l| shorten(&l, width)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_wraps_between_words_into_two_lines_at_most() {
        assert_eq!(wrap("a bb ccc", 4, 2), vec!["a bb", "ccc"]);
        let long = wrap("one two three four five six", 9, 2);
        assert_eq!(long.len(), 2);
        assert_eq!(long[0], "one two");
        assert!(
            long[1].ends_with('…') && long[1].chars().count() <= 9,
            "{long:?}"
        );
        assert_eq!(wrap("", 10, 2), Vec::<String>::new());
    }

    #[test]
    fn too_many_rows_keep_the_first_of_each_protocol_alike() {
        let rows: Vec<(Protocol, u32)> = [Protocol::H1, Protocol::H2]
            .into_iter()
            .flat_map(|p| (1..=5).map(move |n| (p, n)))
            .collect();
        let keep = |fit| first_rows(&rows, |r| r.0, fit);
        assert_eq!(keep(10), rows, "all fit");
        let h = |n| (Protocol::H1, n);
        let t = |n| (Protocol::H2, n);
        assert_eq!(keep(7), [h(1), h(2), h(3), t(1), t(2), t(3)]);
        assert_eq!(keep(1), [h(1), t(1)], "one per protocol at least");
    }
}
