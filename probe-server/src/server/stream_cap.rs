//! Event streams held open: at most so many per client and so many over all clients, each
//! place held by its stream's response body until the stream ends or its reader leaves.

use super::client::ClientKey;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The open streams' places.
#[derive(Debug)]
pub struct StreamCaps {
    per_client: usize,
    total: usize,
    open: Mutex<Open>,
}

#[derive(Debug, Default)]
struct Open {
    by_client: HashMap<ClientKey, usize>,
    total: usize,
}

/// Why a stream was refused a place.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Refused {
    /// The client holds its most streams already (the cap, for the message).
    Client(usize),
    /// The server holds its most streams over all clients.
    Server,
}

/// One open stream's place, given back when dropped.
#[derive(Debug)]
pub struct StreamPlace {
    caps: Arc<StreamCaps>,
    client: ClientKey,
}

impl StreamCaps {
    /// Places for `per_client` streams per client and `total` in all (zeros raised to 1).
    pub fn new(per_client: usize, total: usize) -> Arc<Self> {
        Arc::new(StreamCaps {
            per_client: per_client.max(1),
            total: total.max(1),
            open: Mutex::new(Open::default()),
        })
    }

    /// A place for one more stream of `client`, if it and the server have one.
    ///
    /// # Errors
    /// [`Refused`] says whose cap is reached.
    pub fn open(self: &Arc<Self>, client: ClientKey) -> Result<StreamPlace, Refused> {
        let mut open = self.lock();
        if open.total >= self.total {
            return Err(Refused::Server);
        }
        let held = open.by_client.entry(client).or_default();
        if *held >= self.per_client {
            return Err(Refused::Client(self.per_client));
        }
        *held += 1;
        open.total += 1;
        Ok(StreamPlace {
            caps: self.clone(),
            client,
        })
    }

    /// Streams open now, over all clients.
    pub fn open_now(&self) -> usize {
        self.lock().total
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Open> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for StreamPlace {
    fn drop(&mut self) {
        let mut open = self.caps.lock();
        open.total -= 1;
        if let Some(held) = open.by_client.get_mut(&self.client) {
            *held -= 1;
            if *held == 0 {
                open.by_client.remove(&self.client);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    fn client(last: u8) -> ClientKey {
        ClientKey::new(IpAddr::from([192, 0, 2, last]), 64)
    }

    #[test]
    fn a_client_and_the_server_each_hold_at_most_their_cap() {
        let caps = StreamCaps::new(2, 3);
        let a1 = caps.open(client(1)).unwrap();
        let _a2 = caps.open(client(1)).unwrap();
        assert_eq!(caps.open(client(1)).unwrap_err(), Refused::Client(2));
        let _b1 = caps.open(client(2)).unwrap();
        assert_eq!(caps.open(client(3)).unwrap_err(), Refused::Server);
        assert_eq!(caps.open_now(), 3);
        drop(a1);
        assert_eq!(caps.open_now(), 2);
        let _c1 = caps.open(client(3)).expect("a place was given back");
    }
}
