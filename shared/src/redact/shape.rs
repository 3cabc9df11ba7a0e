//! Credential-looking names, by shape: a query parameter or header whose name says it carries a
//! key, a token, a signature, a password or a secret, whatever the service calls it.
//!
//! Names are folded before they are judged (ASCII letters and digits only, lowercase, `%XX`
//! decoded), so `X-Api-Key`, `api_key`, `apiKey` and `api%5Fkey` are one name. The rule errs on
//! the side of hiding: an `Idempotency-Key` is hidden too, and its owner may keep it by name
//! ([`crate::schema::ProbeOptions::keep_secret`]).

/// Folded names that are credentials on their own (`sig`, `auth`, ...).
pub const SECRET_NAMES: &[&str] = &["sig", "auth", "pass", "pwd", "jwt", "sid", "hmac"];

/// Folded words that make any name holding them a credential's (`access_token`, `client_secret`, ...).
pub const SECRET_WORDS: &[&str] = &[
    "token",
    "secret",
    "passw",
    "passphrase",
    "signature",
    "credential",
    "apikey",
    "session",
];

/// Folded endings that make a name a credential's (`X-Api-Key`, `*-Key`, `x-goog-sig`, `oauth`).
pub const SECRET_ENDINGS: &[&str] = &["key", "sig", "auth"];

/// Whether a query parameter or header named `name` looks like it carries a credential.
pub fn looks_secret(name: &str) -> bool {
    let folded = fold(name);
    !folded.is_empty()
        && (SECRET_NAMES.contains(&folded.as_str())
            || SECRET_WORDS.iter().any(|word| folded.contains(word))
            || SECRET_ENDINGS.iter().any(|end| folded.ends_with(end)))
}

/// Whether `name` is among the names `keep` lists (case-insensitive, exact).
pub fn is_kept(name: &str, keep: &[String]) -> bool {
    let name = percent_decoded(name.trim());
    keep.iter().any(|k| k.trim().eq_ignore_ascii_case(&name))
}

/// `name` percent-decoded, then reduced to lowercase ASCII letters and digits.
fn fold(name: &str) -> String {
    percent_decoded(name)
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// `text` with each `%XX` escape decoded (lossily, as UTF-8).
fn percent_decoded(text: &str) -> String {
    String::from_utf8_lossy(&crate::uri::percent_decoded(text)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_names_are_found_by_shape() {
        for name in [
            "api_key",
            "apikey",
            "apiKey",
            "api%5Fkey",
            "token",
            "access_token",
            "refresh-token",
            "sig",
            "signature",
            "X-Amz-Signature",
            "password",
            "secret",
            "client_secret",
            "X-Api-Key",
            "X-Auth-Token",
            "Private-Token",
            "X-Goog-Api-Key",
            "sessionid",
            "oauth",
        ] {
            assert!(looks_secret(name), "{name}");
        }
        for name in [
            "q",
            "page",
            "author",
            "accept",
            "user-agent",
            "keep-alive",
            "x-request-id",
            "lang",
            "",
        ] {
            assert!(!looks_secret(name), "{name}");
        }
    }

    #[test]
    fn kept_names_match_exactly_whatever_their_case() {
        let keep = vec!["X-Api-Key".to_owned(), "api_key".to_owned()];
        assert!(is_kept("x-api-key", &keep));
        assert!(is_kept("API_KEY", &keep));
        assert!(is_kept("api%5Fkey", &keep));
        assert!(!is_kept("apikey", &keep));
        assert!(!is_kept("token", &keep));
    }
}
