//! `h123 probe`'s exit codes: the table and the rule live in
//! `h123_shared::exit`, beside the outcome they follow, so the CLI's code,
//! its first line, the API's analysis and the page tell one story.

pub use h123_shared::exit::{Exit, HELP};
