//! "Compare with…" on a finished result as markup: a field for another result's permalink or id
//! (that one is A, before; this one B, after). The page's script reads and marks it on submit.

/// The form, with its field (`#compare-with`) and the alert where a refused entry says why
/// (`#compare-with-problem`).
pub const FORM: &str = r#"<form class="compare-with"><label for="compare-with">Compare with another result</label><input id="compare-with" type="text" placeholder="https://…/r/… or an id" aria-describedby="compare-with-problem"><button type="submit">Compare</button><span id="compare-with-problem" class="field-problem" role="alert"></span></form>"#;
