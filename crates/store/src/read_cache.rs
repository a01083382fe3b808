//! A bounded in-process cache of reads by id, kept true by whoever learns of changes: each
//! change evicts its id.
//!
//! A read that started before a change committed must not put the old rows back after the
//! change's eviction: every eviction bumps a generation and is remembered (the last
//! [`RECENT_EVICTIONS`] of them), and a read's result is cached only when its id was not
//! evicted since the generation the reader saw before reading. Evictions of other ids do
//! not stop it, so a busy database does not keep the cache empty. Nothing is cached or
//! served while the cache is not listening (its owner cannot hear changes), and entries
//! expire after their TTL as a backstop.
//!
//! PostgreSQL's store hears changes from the database (`LISTEN`); SQLite's, which is the
//! only writer of its file, evicts after each of its own commits that may change a read.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use uuid::Uuid;

/// Evictions remembered for readers in flight; a reader that started before the oldest
/// of them does not cache what it read.
pub const RECENT_EVICTIONS: usize = 1024;

/// Values by shipment id (the payload of the notifications).
#[derive(Debug)]
pub struct ReadCache<V> {
    capacity: usize,
    ttl: Duration,
    state: Mutex<State<V>>,
}

#[derive(Debug)]
struct State<V> {
    entries: HashMap<Uuid, Entry<V>>,
    generation: u64,
    /// `(generation, id)` of the latest evictions, oldest first.
    recent: VecDeque<(u64, Uuid)>,
    /// Readers whose ticket is older than this may have missed an eviction: the latest
    /// generation that left `recent`, or the latest switch of `listening`.
    forgotten_before: u64,
    listening: bool,
}

#[derive(Debug)]
struct Entry<V> {
    value: V,
    expires_at: Instant,
}

/// What a reader learns before going to the database: the generation to hand back to
/// [`ReadCache::insert`], or that caching is off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket(u64);

impl<V: Clone> ReadCache<V> {
    pub fn new(capacity: usize, ttl: Duration) -> Self {
        Self {
            capacity,
            ttl,
            state: Mutex::new(State {
                entries: HashMap::new(),
                generation: 0,
                recent: VecDeque::with_capacity(RECENT_EVICTIONS),
                forgotten_before: 0,
                listening: false,
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State<V>> {
        // The state is left consistent at every step, so a panic elsewhere does not spoil it.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The cached value for `id`, when there is a fresh one.
    pub fn get(&self, id: Uuid, now: Instant) -> Option<V> {
        let state = self.state();
        if !state.listening {
            return None;
        }
        state
            .entries
            .get(&id)
            .filter(|entry| entry.expires_at > now)
            .map(|entry| entry.value.clone())
    }

    /// Taken before reading the database; `None` while nothing may be cached.
    pub fn ticket(&self) -> Option<Ticket> {
        let state = self.state();
        (state.listening && self.capacity > 0).then_some(Ticket(state.generation))
    }

    /// Caches `value` for `id`, unless `id` was (or may have been) evicted since `ticket`
    /// was taken (the value may predate that change) or the cache is full of entries still
    /// fresh.
    pub fn insert(&self, ticket: Ticket, id: Uuid, value: V, now: Instant) {
        let mut state = self.state();
        let evicted_since =
            |&(generation, evicted): &(u64, Uuid)| generation > ticket.0 && evicted == id;
        if !state.listening
            || ticket.0 < state.forgotten_before
            || state.recent.iter().rev().any(evicted_since)
        {
            return;
        }
        if state.entries.len() >= self.capacity {
            state.entries.retain(|_, entry| entry.expires_at > now);
            if state.entries.len() >= self.capacity {
                return;
            }
        }
        let expires_at = now + self.ttl;
        state.entries.insert(id, Entry { value, expires_at });
    }

    /// Forgets `id`: it changed, or may have.
    pub fn evict(&self, id: Uuid) {
        let mut state = self.state();
        state.generation += 1;
        state.entries.remove(&id);
        if state.recent.len() == RECENT_EVICTIONS
            && let Some((generation, _)) = state.recent.pop_front()
        {
            state.forgotten_before = generation;
        }
        let generation = state.generation;
        state.recent.push_back((generation, id));
    }

    /// Starts or stops caching; either way, everything cached so far is forgotten (while
    /// the listener was away, changes may have gone unheard).
    pub fn set_listening(&self, listening: bool) {
        self.state_forgetting_all().listening = listening;
    }

    /// Forgets every entry, and every read in flight may not cache what it read.
    pub fn forget_all(&self) {
        drop(self.state_forgetting_all());
    }

    fn state_forgetting_all(&self) -> std::sync::MutexGuard<'_, State<V>> {
        let mut state = self.state();
        state.generation += 1;
        state.forgotten_before = state.generation;
        state.recent.clear();
        state.entries.clear();
        state
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.state().entries.len()
    }

    pub fn contains(&self, id: Uuid) -> bool {
        self.state().entries.contains_key(&id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTL: Duration = Duration::from_secs(60);

    fn listening_cache(capacity: usize) -> ReadCache<&'static str> {
        let cache = ReadCache::new(capacity, TTL);
        cache.set_listening(true);
        cache
    }

    fn id(n: u128) -> Uuid {
        Uuid::from_u128(n)
    }

    #[test]
    fn nothing_is_cached_or_served_until_the_listener_is_subscribed() {
        let cache = ReadCache::new(10, TTL);
        let now = Instant::now();
        assert_eq!(cache.ticket(), None);
        cache.set_listening(true);
        let ticket = cache.ticket().expect("listening");
        cache.insert(ticket, id(1), "first", now);
        assert_eq!(cache.get(id(1), now), Some("first"));
    }

    #[test]
    fn a_lost_listener_turns_the_cache_off_and_forgets_every_entry() {
        let cache = listening_cache(10);
        let now = Instant::now();
        let ticket = cache.ticket().expect("listening");
        cache.insert(ticket, id(1), "first", now);
        cache.set_listening(false);
        assert_eq!(cache.get(id(1), now), None);
        assert_eq!(cache.ticket(), None);
        cache.set_listening(true);
        assert_eq!(cache.get(id(1), now), None);
    }

    #[test]
    fn an_eviction_removes_the_entry() {
        let cache = listening_cache(10);
        let now = Instant::now();
        let ticket = cache.ticket().expect("listening");
        cache.insert(ticket, id(1), "first", now);
        cache.insert(ticket, id(2), "second", now);
        cache.evict(id(1));
        assert_eq!(cache.get(id(1), now), None);
        assert_eq!(cache.get(id(2), now), Some("second"));
    }

    #[test]
    fn a_read_that_started_before_an_eviction_is_not_cached() {
        let cache = listening_cache(10);
        let now = Instant::now();
        let ticket = cache.ticket().expect("listening");
        // The change commits and its notification arrives while the old rows are read.
        cache.evict(id(1));
        cache.insert(ticket, id(1), "old rows", now);
        assert_eq!(cache.get(id(1), now), None);
    }

    #[test]
    fn a_read_is_cached_when_only_other_shipments_were_evicted_meanwhile() {
        let cache = listening_cache(10);
        let now = Instant::now();
        let ticket = cache.ticket().expect("listening");
        cache.evict(id(2));
        cache.insert(ticket, id(1), "first", now);
        assert_eq!(cache.get(id(1), now), Some("first"));
    }

    #[test]
    fn a_read_older_than_every_remembered_eviction_is_not_cached() {
        let cache = listening_cache(10);
        let now = Instant::now();
        let ticket = cache.ticket().expect("listening");
        for n in 0..=RECENT_EVICTIONS {
            cache.evict(id(1000 + n as u128));
        }
        cache.insert(ticket, id(1), "first", now);
        assert_eq!(cache.get(id(1), now), None);

        let fresh = cache.ticket().expect("listening");
        cache.insert(fresh, id(1), "first", now);
        assert_eq!(cache.get(id(1), now), Some("first"));
    }

    #[test]
    fn a_read_from_before_the_listener_reconnected_is_not_cached() {
        let cache = listening_cache(10);
        let now = Instant::now();
        let ticket = cache.ticket().expect("listening");
        cache.set_listening(false);
        cache.set_listening(true);
        cache.insert(ticket, id(1), "first", now);
        assert_eq!(cache.get(id(1), now), None);
    }

    #[test]
    fn entries_expire_after_the_ttl() {
        let cache = listening_cache(10);
        let now = Instant::now();
        let ticket = cache.ticket().expect("listening");
        cache.insert(ticket, id(1), "first", now);
        assert_eq!(
            cache.get(id(1), now + TTL - Duration::from_millis(1)),
            Some("first")
        );
        assert_eq!(cache.get(id(1), now + TTL), None);
    }

    #[test]
    fn a_full_cache_makes_room_only_by_dropping_expired_entries() {
        let cache = listening_cache(2);
        let now = Instant::now();
        let ticket = cache.ticket().expect("listening");
        cache.insert(ticket, id(1), "first", now);
        cache.insert(ticket, id(2), "second", now + Duration::from_secs(30));
        cache.insert(ticket, id(3), "third", now + Duration::from_secs(40));
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.get(id(3), now), None);

        let later = now + TTL + Duration::from_secs(1);
        cache.insert(ticket, id(3), "third", later);
        assert_eq!(cache.get(id(3), later), Some("third"));
        assert_eq!(cache.get(id(2), later), Some("second"));
        assert_eq!(cache.len(), 2);
    }

    #[test]
    fn a_zero_capacity_cache_never_caches() {
        let cache = listening_cache(0);
        assert_eq!(cache.ticket(), None);
    }
}
