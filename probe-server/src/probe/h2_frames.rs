//! An HTTP/2 frame-boundary scanner over a byte stream, to timestamp frames.
//!
//! hyper exposes no frame hooks, so the timed I/O wrapper feeds every byte it
//! moves through a scanner that finds the 9-byte frame headers (RFC 9113
//! section 4.1) and reports them. Payloads are skipped, never copied.

/// The connection preface a client sends before its first frame.
const CLIENT_PREFACE_LEN: usize = 24;
/// Size of a frame header.
const HEADER_LEN: usize = 9;
/// Frame type DATA.
pub const TYPE_DATA: u8 = 0x0;
/// Frame type HEADERS.
pub const TYPE_HEADERS: u8 = 0x1;
/// Flag END_STREAM on DATA and HEADERS.
pub const FLAG_END_STREAM: u8 = 0x1;

/// A frame header seen in the stream.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FrameHead {
    /// Payload length.
    pub length: u32,
    /// Frame type.
    pub kind: u8,
    /// Flags.
    pub flags: u8,
    /// Stream identifier (reserved bit cleared).
    pub stream: u32,
}

impl FrameHead {
    /// Whether this frame ends its stream from the sender's side.
    pub fn ends_stream(&self) -> bool {
        matches!(self.kind, TYPE_DATA | TYPE_HEADERS) && self.flags & FLAG_END_STREAM != 0
    }
}

/// Finds frame headers in one direction of an HTTP/2 connection.
#[derive(Debug, Default)]
pub struct FrameScanner {
    preface_left: usize,
    header: [u8; HEADER_LEN],
    header_len: usize,
    payload_left: usize,
}

impl FrameScanner {
    /// A scanner for the server-to-client direction.
    pub fn inbound() -> Self {
        FrameScanner::default()
    }

    /// A scanner for the client-to-server direction of a new connection,
    /// which starts with the connection preface.
    pub fn outbound() -> Self {
        FrameScanner {
            preface_left: CLIENT_PREFACE_LEN,
            ..FrameScanner::default()
        }
    }

    /// Feeds the next bytes; `on_frame` is called for each header completed.
    pub fn feed(&mut self, mut bytes: &[u8], mut on_frame: impl FnMut(FrameHead)) {
        let skip = self.preface_left.min(bytes.len());
        self.preface_left -= skip;
        bytes = &bytes[skip..];
        while !bytes.is_empty() {
            if self.payload_left > 0 {
                let n = self.payload_left.min(bytes.len());
                self.payload_left -= n;
                bytes = &bytes[n..];
                continue;
            }
            let n = (HEADER_LEN - self.header_len).min(bytes.len());
            self.header[self.header_len..self.header_len + n].copy_from_slice(&bytes[..n]);
            self.header_len += n;
            bytes = &bytes[n..];
            if self.header_len == HEADER_LEN {
                let h = self.header;
                let head = FrameHead {
                    length: u32::from_be_bytes([0, h[0], h[1], h[2]]),
                    kind: h[3],
                    flags: h[4],
                    stream: u32::from_be_bytes([h[5], h[6], h[7], h[8]]) & 0x7fff_ffff,
                };
                self.header_len = 0;
                self.payload_left = head.length as usize;
                on_frame(head);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
        let len = payload.len() as u32;
        let mut out = len.to_be_bytes()[1..].to_vec();
        out.push(kind);
        out.push(flags);
        out.extend_from_slice(&stream.to_be_bytes());
        out.extend_from_slice(payload);
        out
    }

    fn scan(scanner: &mut FrameScanner, chunks: &[&[u8]]) -> Vec<FrameHead> {
        let mut seen = Vec::new();
        for chunk in chunks {
            scanner.feed(chunk, |f| seen.push(f));
        }
        seen
    }

    #[test]
    fn finds_frames_split_at_every_byte() {
        let mut bytes = frame(0x4, 0, 0, &[0; 18]); // SETTINGS
        bytes.extend(frame(TYPE_HEADERS, 0x4, 1, &[1, 2, 3]));
        bytes.extend(frame(TYPE_DATA, FLAG_END_STREAM, 1, b"hello"));
        let chunks: Vec<&[u8]> = bytes.chunks(1).collect();
        let seen = scan(&mut FrameScanner::inbound(), &chunks);
        assert_eq!(seen.len(), 3);
        assert_eq!(seen[1].kind, TYPE_HEADERS);
        assert_eq!(seen[1].stream, 1);
        assert!(!seen[1].ends_stream());
        assert!(seen[2].ends_stream());
        assert_eq!(seen[2].length, 5);
    }

    #[test]
    fn outbound_skips_the_preface() {
        let mut bytes = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
        bytes.extend(frame(TYPE_HEADERS, 0x5, 3, &[0; 40]));
        let seen = scan(&mut FrameScanner::outbound(), &[&bytes[..10], &bytes[10..]]);
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].stream, 3);
        assert!(seen[0].ends_stream());
    }

    #[test]
    fn reserved_stream_bit_is_ignored() {
        let bytes = frame(TYPE_DATA, 0, 0x8000_0005, &[]);
        let seen = scan(&mut FrameScanner::inbound(), &[&bytes]);
        assert_eq!(seen[0].stream, 5);
    }
}
