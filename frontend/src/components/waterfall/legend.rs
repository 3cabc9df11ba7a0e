//! The phase legend, and the fill patterns that tell phases apart without colour.

use h123_shared::Phase;
use leptos::prelude::*;

/// One pattern per phase (wait stays solid), referenced as `url(#pat-<phase>)`.
const PATTERNS: &str = r#"<defs>
<pattern id="pat-dns" width="6" height="6" patternUnits="userSpaceOnUse"><circle cx="3" cy="3" r="1.3"/></pattern>
<pattern id="pat-connect" width="6" height="6" patternUnits="userSpaceOnUse"><path d="M-1,7 L7,-1"/></pattern>
<pattern id="pat-proxy" width="6" height="6" patternUnits="userSpaceOnUse"><path d="M0,3 H6 M3,0 V6"/></pattern>
<pattern id="pat-tls" width="6" height="6" patternUnits="userSpaceOnUse"><path d="M-1,-1 L7,7"/></pattern>
<pattern id="pat-quic" width="6" height="6" patternUnits="userSpaceOnUse"><path d="M-1,7 L7,-1 M-1,-1 L7,7"/></pattern>
<pattern id="pat-send" width="6" height="6" patternUnits="userSpaceOnUse"><path d="M0,3 H6"/></pattern>
<pattern id="pat-wait" width="6" height="6" patternUnits="userSpaceOnUse"></pattern>
<pattern id="pat-receive" width="6" height="6" patternUnits="userSpaceOnUse"><path d="M3,0 V6"/></pattern>
</defs>"#;

/// The hidden SVG that holds the patterns every bar refers to.
#[component]
pub fn PatternDefs() -> impl IntoView {
    view! { <svg class="pattern-defs" aria-hidden="true" width="0" height="0" inner_html=PATTERNS></svg> }
}

/// A swatch, as drawn in the bars, with the phase name.
#[component]
pub fn Legend() -> impl IntoView {
    view! {
        <ul class="legend" aria-label="Phases">
            {Phase::ALL
                .into_iter()
                .map(|phase| {
                    let name = phase.as_str();
                    view! {
                        <li title=phase.meaning()>
                            <svg class="swatch" width="18" height="12" aria-hidden="true">
                                <rect class=format!("fill phase-{name}") width="18" height="12"></rect>
                                <rect fill=format!("url(#pat-{name})") width="18" height="12"></rect>
                            </svg>
                            {name}
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
}
