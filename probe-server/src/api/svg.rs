//! The waterfall as a standalone SVG picture (`GET /api/v1/probes/{id}/waterfall.svg`) and the
//! link preview's picture, drawn by the result page's Leptos components
//! (`h123_frontend::pages::result::picture`: the same layout as the page's waterfalls, a group per
//! vantage, the owner's browser measurement under the server's rows) as files.

use h123_frontend::pages::render_picture;
use h123_frontend::pages::result::picture;
use h123_shared::api::ProbeRecord;

pub use picture::preview::{HEIGHT, WIDTH};

/// `record`'s waterfall as an SVG document.
pub fn render(record: &ProbeRecord) -> String {
    render_picture(|| picture::picture(record))
}

/// `record`'s waterfall as a [`WIDTH`]×[`HEIGHT`] SVG document for a link preview.
pub fn preview(record: &ProbeRecord) -> String {
    render_picture(|| picture::preview::picture(record))
}
