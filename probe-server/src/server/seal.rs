//! Sealing an agent job's options for the shared queue: ChaCha20-Poly1305
//! under a key derived from the agent's token digest, which only the
//! instances' configuration holds, with the job id as associated data (a
//! sealed blob opens only as the job it was made for).

use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use sha2::{Digest, Sha256};

/// The key one agent's jobs are sealed under.
pub struct JobKey(LessSafeKey);

impl JobKey {
    /// The key for the agent whose token has SHA-256 `token_digest`.
    pub fn for_agent(token_digest: &[u8; 32]) -> Self {
        let mut derive = Sha256::new();
        derive.update(b"h123 agent job options v1\0");
        derive.update(token_digest);
        let bytes: [u8; 32] = derive.finalize().into();
        // A 32-byte key is always a valid ChaCha20-Poly1305 key.
        let key = UnboundKey::new(&CHACHA20_POLY1305, &bytes).unwrap_or_else(|_| unreachable!());
        JobKey(LessSafeKey::new(key))
    }

    /// `plain` sealed for job `job_id`: a random nonce, then the ciphertext and its tag.
    ///
    /// # Errors
    /// When the random source fails.
    pub fn seal(&self, job_id: &str, plain: &[u8]) -> Result<Vec<u8>, getrandom::Error> {
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce)?;
        let mut sealed = plain.to_vec();
        self.0
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(job_id.as_bytes()),
                &mut sealed,
            )
            .unwrap_or_else(|_| unreachable!("sealing fails only past 256 GiB"));
        let mut out = nonce.to_vec();
        out.append(&mut sealed);
        Ok(out)
    }

    /// What [`JobKey::seal`] sealed for job `job_id`, or `None` when `sealed`
    /// was made under another key, for another job, or altered.
    pub fn open(&self, job_id: &str, sealed: &[u8]) -> Option<Vec<u8>> {
        let (nonce, body) = sealed.split_at_checked(NONCE_LEN)?;
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut body = body.to_vec();
        let plain = self
            .0
            .open_in_place(nonce, Aad::from(job_id.as_bytes()), &mut body)
            .ok()?;
        Some(plain.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_blob_opens_only_with_its_key_and_job() {
        let key = JobKey::for_agent(&[7; 32]);
        let sealed = key.seal("job1", b"Authorization: secret").unwrap();
        assert!(
            !sealed.windows(6).any(|w| w == b"secret"),
            "the plain text is not in the blob"
        );
        assert_eq!(
            key.open("job1", &sealed).as_deref(),
            Some(&b"Authorization: secret"[..])
        );
        assert_eq!(key.open("job2", &sealed), None, "another job");
        assert_eq!(
            JobKey::for_agent(&[8; 32]).open("job1", &sealed),
            None,
            "another agent"
        );
        let mut altered = sealed.clone();
        *altered.last_mut().unwrap() ^= 1;
        assert_eq!(key.open("job1", &altered), None, "altered");
        assert_eq!(key.open("job1", &sealed[..5]), None, "truncated");
        assert_ne!(
            key.seal("job1", b"x").unwrap(),
            key.seal("job1", b"x").unwrap(),
            "fresh nonces"
        );
    }
}
