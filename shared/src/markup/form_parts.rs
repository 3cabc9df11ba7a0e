//! Parts both of the home page's forms draw: a checkbox per protocol and the network picker.

use crate::Protocol;
use crate::network::NAMED_PROFILES;
use std::fmt::Write as _;

/// The network picker's note when no profile is chosen.
pub const NETWORK_NOTE: &str =
    "Delay, loss and rate limits applied to every protocol alike, both ways.";

/// One checkbox per protocol, all ticked, with the form name `name`.
pub fn protocol_toggles(out: &mut String, name: &str) {
    for p in Protocol::ALL {
        let _ = write!(
            out,
            r#"<label class="toggle"><input type="checkbox" name="{name}" value="{}" checked>{}</label>"#,
            p.as_str(),
            p.http_version()
        );
    }
}

/// The network picker whose select has the id `id` (the figures field and the note take it as a
/// prefix): none, a named profile, or figures typed in (hidden until "custom" is chosen).
pub fn network_picker(out: &mut String, id: &str) {
    let _ = write!(
        out,
        r#"<div class="field network-field"><label for="{id}">Network</label><select id="{id}" aria-describedby="{id}-note"><option value="none">this server's own path</option>"#
    );
    for p in NAMED_PROFILES {
        let _ = write!(out, r#"<option value="{0}">{0}</option>"#, p.name);
    }
    let _ = write!(
        out,
        concat!(
            r#"<option value="custom">custom figures…</option></select>"#,
            r#"<input id="{id}-figures" type="text" spellcheck="false" aria-label="Network figures" aria-describedby="{id}-note" aria-invalid="false" placeholder="rtt=100ms,loss=2%,down=10mbit,up=2mbit" hidden>"#,
            r#"<p id="{id}-note" class="field-note">{note}</p></div>"#,
        ),
        id = id,
        note = NETWORK_NOTE,
    );
}
