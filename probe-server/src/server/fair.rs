//! Running slots shared fairly: a few slots kept for clients with nothing running, and a freed
//! slot to the waiting client holding the fewest, round-robin among equals.
//!
//! A plain semaphore serves waiters first come, first served, so four
//! clients that each queue many long probes hold every slot while a fifth
//! client's one-attempt probe waits behind all of them. Here each client
//! has its own queue; when a slot frees, the client with the fewest running
//! probes among those waiting gets it (ties go to the least recently served,
//! round-robin), so a client never gains a slot beyond its share while
//! another waits. Granting alone still lets a newcomer wait a whole slow
//! probe for the next turnover, so the last `reserved` slots go only to a
//! client with no probe running: clients already running fill the others,
//! and a newcomer starts at once while fewer than `reserved` other
//! newcomers hold them.

use super::client::ClientKey;
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::oneshot;

/// The running slots of the server.
#[derive(Clone)]
pub struct FairSlots {
    inner: Arc<Mutex<State>>,
}

struct State {
    capacity: usize,
    /// Slots only a client with no probe running may take.
    reserved: usize,
    running: usize,
    per_client: HashMap<ClientKey, usize>,
    /// Clients with waiting probes, in the order they started waiting.
    turn: VecDeque<ClientKey>,
    /// Slots granted so far; numbers the grants.
    grants: u64,
    /// The grant number of each client's latest slot, while it runs or waits.
    last_served: HashMap<ClientKey, u64>,
    waiting: HashMap<ClientKey, VecDeque<oneshot::Sender<Slot>>>,
}

/// A held running slot; released when dropped.
pub struct Slot {
    inner: Option<Arc<Mutex<State>>>,
    client: ClientKey,
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot")
            .field("client", &self.client)
            .finish()
    }
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl FairSlots {
    /// `capacity` slots (at least one), the last `reserved` of them (at
    /// most a quarter) for clients with no probe running.
    pub fn new(capacity: usize, reserved: usize) -> Self {
        let capacity = capacity.max(1);
        FairSlots {
            inner: Arc::new(Mutex::new(State {
                capacity,
                reserved: reserved.min(capacity / 4),
                running: 0,
                per_client: HashMap::new(),
                turn: VecDeque::new(),
                grants: 0,
                last_served: HashMap::new(),
                waiting: HashMap::new(),
            })),
        }
    }

    /// Waits for a slot for `client`.
    ///
    /// # Cancel safety
    /// Dropping the future gives up the place in the queue; a slot granted
    /// meanwhile is released at once.
    pub async fn acquire(&self, client: ClientKey) -> Slot {
        let (receiver, grants) = {
            let mut state = lock(&self.inner);
            // Those waiting may not take a free slot (they run probes and
            // only reserved slots are left); a client running none may.
            let first = state.turn.is_empty() || !state.per_client.contains_key(&client);
            if first && state.may_take(client) {
                state.take(client);
                return Slot {
                    inner: Some(self.inner.clone()),
                    client,
                };
            }
            let (sender, receiver) = oneshot::channel();
            let queue = state.waiting.entry(client).or_default();
            let first = queue.is_empty();
            queue.push_back(sender);
            if first {
                state.turn.push_back(client);
            }
            (receiver, dispatch(&mut state, &self.inner))
        };
        send_all(grants);
        match receiver.await {
            Ok(slot) => slot,
            // The sender is never dropped unsent while the slots exist.
            Err(_) => std::future::pending().await,
        }
    }

    /// Probes running now.
    pub fn running(&self) -> usize {
        lock(&self.inner).running
    }

    /// Probes waiting for a slot now.
    pub fn waiting(&self) -> usize {
        lock(&self.inner).waiting.values().map(VecDeque::len).sum()
    }
}

impl State {
    fn take(&mut self, client: ClientKey) {
        self.running += 1;
        self.grants += 1;
        *self.per_client.entry(client).or_insert(0) += 1;
        self.last_served.insert(client, self.grants);
    }

    /// Whether `client` may take a free slot now: any when it runs no
    /// probe, else one beyond the reserved.
    fn may_take(&self, client: ClientKey) -> bool {
        let free = self.capacity.saturating_sub(self.running);
        free > 0 && (!self.per_client.contains_key(&client) || free > self.reserved)
    }

    fn give_back(&mut self, client: ClientKey) {
        self.running = self.running.saturating_sub(1);
        if let Some(n) = self.per_client.get_mut(&client) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.per_client.remove(&client);
                if !self.waiting.contains_key(&client) {
                    self.last_served.remove(&client);
                }
            }
        }
    }

    /// The waiting client that should get the next slot: fewest running,
    /// then least recently served (round-robin), then longest waiting.
    fn next_client(&self) -> Option<(usize, ClientKey)> {
        self.turn
            .iter()
            .enumerate()
            .min_by_key(|(i, c)| {
                (
                    self.per_client.get(c).copied().unwrap_or(0),
                    self.last_served.get(c).copied().unwrap_or(0),
                    *i,
                )
            })
            .map(|(i, c)| (i, *c))
    }
}

/// A slot granted under the lock, sent to its waiter after the lock is released.
type Grant = (oneshot::Sender<Slot>, Slot);

/// Hands free slots to waiting clients, fairest first; the caller sends
/// them with [`send_all`] once it has released the lock.
fn dispatch(state: &mut State, inner: &Arc<Mutex<State>>) -> Vec<Grant> {
    let mut grants = Vec::new();
    while state.running < state.capacity {
        let Some((position, client)) = state.next_client() else {
            break;
        };
        // The fairest waiter runs probes: so do all, and none may take a reserved slot.
        if !state.may_take(client) {
            break;
        }
        let Some(queue) = state.waiting.get_mut(&client) else {
            state.turn.remove(position);
            continue;
        };
        let Some(sender) = queue.pop_front() else {
            state.waiting.remove(&client);
            state.turn.remove(position);
            continue;
        };
        // The client goes to the back of the turn if it still waits.
        state.turn.remove(position);
        if state.waiting.get(&client).is_some_and(|q| !q.is_empty()) {
            state.turn.push_back(client);
        } else {
            state.waiting.remove(&client);
        }
        if sender.is_closed() {
            // That waiter gave up: its place goes to the next.
            if !state.waiting.contains_key(&client) && !state.per_client.contains_key(&client) {
                state.last_served.remove(&client);
            }
            continue;
        }
        state.take(client);
        let slot = Slot {
            inner: Some(inner.clone()),
            client,
        };
        grants.push((sender, slot));
    }
    grants
}

/// Sends granted slots; one whose waiter has just gone is dropped here,
/// outside the lock, which releases it to the next waiter.
fn send_all(grants: Vec<Grant>) {
    for (sender, slot) in grants {
        let _ = sender.send(slot);
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take() {
            let grants = {
                let mut state = lock(&inner);
                state.give_back(self.client);
                dispatch(&mut state, &inner)
            };
            send_all(grants);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    fn client(n: u8) -> ClientKey {
        ClientKey::new(IpAddr::from([127, 0, 0, n]), 64)
    }

    #[tokio::test]
    async fn a_newcomer_gets_the_next_free_slot_before_busy_clients() {
        let slots = FairSlots::new(2, 0);
        let a1 = slots.acquire(client(1)).await;
        let a2 = slots.acquire(client(1)).await;
        // Client 1 queues two more, then client 2 one.
        let s = slots.clone();
        let a3 = tokio::spawn(async move { s.acquire(client(1)).await });
        let s = slots.clone();
        let a4 = tokio::spawn(async move { s.acquire(client(1)).await });
        tokio::task::yield_now().await;
        let s = slots.clone();
        let b1 = tokio::spawn(async move { s.acquire(client(2)).await });
        while slots.waiting() < 3 {
            tokio::task::yield_now().await;
        }
        drop(a1);
        let b1 = b1.await.unwrap();
        assert_eq!(b1.client, client(2), "the newcomer goes first");
        assert_eq!(slots.waiting(), 2);
        drop(a2);
        let a3 = a3.await.unwrap();
        assert_eq!(slots.running(), 2);
        drop(b1);
        drop(a3);
        let _a4 = a4.await.unwrap();
        assert_eq!((slots.running(), slots.waiting()), (1, 0));
    }

    #[tokio::test]
    async fn the_reserved_slots_wait_for_clients_running_nothing() {
        let slots = FairSlots::new(8, 2);
        let mut held = Vec::new();
        for n in [1, 1, 1, 2, 2, 2] {
            held.push(slots.acquire(client(n)).await);
        }
        // Six run; client 1's next waits although two slots are free.
        let s = slots.clone();
        let queued = tokio::spawn(async move { s.acquire(client(1)).await });
        while slots.waiting() < 1 {
            tokio::task::yield_now().await;
        }
        assert_eq!(slots.running(), 6);
        let newcomer = slots.acquire(client(3)).await;
        assert_eq!(slots.running(), 7, "a newcomer starts at once");
        held.push(newcomer);
        drop(held.remove(0));
        tokio::task::yield_now().await;
        assert_eq!(slots.waiting(), 1, "the freed slot is a reserved one");
        drop(held.remove(0));
        let queued = queued.await.unwrap();
        assert_eq!(
            queued.client,
            client(1),
            "a slot past the reserve goes to the waiter"
        );
        assert_eq!((slots.running(), slots.waiting()), (6, 0));
    }

    #[tokio::test]
    async fn equal_clients_take_turns_and_a_dropped_waiter_frees_its_place() {
        let slots = FairSlots::new(1, 0);
        let held = slots.acquire(client(9)).await;
        let mut waiters = Vec::new();
        for n in [1, 1, 2, 2, 3] {
            let s = slots.clone();
            waiters.push(tokio::spawn(async move { s.acquire(client(n)).await }));
            while slots.waiting() < waiters.len() {
                tokio::task::yield_now().await;
            }
        }
        // One waiter of client 2 gives up.
        waiters.remove(3).abort();
        let mut order = Vec::new();
        drop(held);
        let mut pending: Vec<_> = waiters;
        while !pending.is_empty() {
            let mut next = None;
            for (i, w) in pending.iter().enumerate() {
                if w.is_finished() {
                    next = Some(i);
                    break;
                }
            }
            match next {
                Some(i) => {
                    let slot = pending.remove(i).await.unwrap();
                    order.push(slot.client);
                    drop(slot);
                }
                None => tokio::task::yield_now().await,
            }
        }
        assert_eq!(order, [client(1), client(2), client(3), client(1)]);
        assert_eq!((slots.running(), slots.waiting()), (0, 0));
    }
}
