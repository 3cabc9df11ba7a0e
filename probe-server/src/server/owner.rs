//! Owner tokens: the bearer capability that lists a client's own unlisted probes, kept only as a hash.
//!
//! There are no accounts. `POST /api/v1/probes` returns a token (the one the
//! client sent in `X-H123-Owner`, or a new random one); `GET /api/v1/probes`
//! with that header lists the probes made under it besides the public ones.
//! The store keeps the token's SHA-256, so a stolen database lists nothing.

use sha2::{Digest, Sha256};

/// The request header that carries an owner token.
pub const OWNER_HEADER: &str = "x-h123-owner";

/// Shortest token accepted from a client (22 base64url characters: 132 bits).
pub const MIN_TOKEN_LEN: usize = 22;

/// Longest token accepted from a client.
pub const MAX_TOKEN_LEN: usize = 128;

/// A new random token: 256 bits as 43 base64url characters.
///
/// # Errors
/// When the operating system's random source fails.
pub fn new_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(crate::store::base64url(&bytes))
}

/// Whether a client-chosen token is acceptable: 22 to 128 base64url characters.
pub fn is_valid_token(token: &str) -> bool {
    (MIN_TOKEN_LEN..=MAX_TOKEN_LEN).contains(&token.len())
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// What the store keeps of a token: its SHA-256 in lowercase hex.
pub fn token_hash(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        out.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_random_and_hashed() {
        let a = new_token().unwrap();
        assert_eq!(a.len(), 43);
        assert!(is_valid_token(&a));
        assert_ne!(a, new_token().unwrap());
        assert!(!is_valid_token("short"));
        assert!(!is_valid_token(&"a".repeat(129)));
        assert!(!is_valid_token("aaaaaaaaaaaaaaaaaaaaaaaaa/"));
        assert_eq!(
            token_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
