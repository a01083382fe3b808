//! Per-thread search state, reused from one route to the next.
//!
//! Allocating and clearing a score per node for every route cost more than the whole
//! search on short routes. Each slot carries the number of the search that last wrote
//! it, so starting a search is one increment instead of clearing the table.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

const NO_PARENT: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    search: u32,
    parent: u32,
    best: f64,
    closed: bool,
}

/// Scores of one search; a slot not written by the current search reads as unvisited.
#[derive(Debug, Default)]
pub(super) struct Scratch {
    slots: Vec<Slot>,
    search: u32,
    /// Open set: (f-score bits, node). Non-negative f64s order like their bit patterns.
    pub(super) open: BinaryHeap<Reverse<(u64, u32)>>,
}

impl Scratch {
    /// Forgets the previous search, for a network of `nodes` nodes.
    pub(super) fn start(&mut self, nodes: usize) {
        if self.slots.len() < nodes {
            self.slots.resize(nodes, Slot::default());
        }
        self.search = self.search.wrapping_add(1);
        if self.search == 0 {
            // Wrapped: old numbers could match again, so clear them once.
            self.slots.fill(Slot::default());
            self.search = 1;
        }
        self.open.clear();
    }

    fn slot(&mut self, v: u32) -> &mut Slot {
        let search = self.search;
        let slot = &mut self.slots[v as usize];
        if slot.search != search {
            *slot = Slot {
                search,
                parent: NO_PARENT,
                best: f64::INFINITY,
                closed: false,
            };
        }
        slot
    }

    pub(super) fn best(&self, v: u32) -> f64 {
        let slot = self.slots[v as usize];
        if slot.search == self.search {
            slot.best
        } else {
            f64::INFINITY
        }
    }

    pub(super) fn is_closed(&self, v: u32) -> bool {
        let slot = self.slots[v as usize];
        slot.search == self.search && slot.closed
    }

    /// Closes `v`; false if it already was.
    pub(super) fn close(&mut self, v: u32) -> bool {
        !std::mem::replace(&mut self.slot(v).closed, true)
    }

    pub(super) fn improve(&mut self, v: u32, best: f64, parent: u32) {
        let slot = self.slot(v);
        slot.best = best;
        slot.parent = parent;
    }

    pub(super) fn parent(&self, v: u32) -> Option<u32> {
        let slot = self.slots[v as usize];
        (slot.search == self.search && slot.parent != NO_PARENT).then_some(slot.parent)
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Runs `f` with this thread's scratch space.
pub(super) fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut scratch) => f(&mut scratch),
        // Only reachable if a search started another on the same thread.
        Err(_) => f(&mut Scratch::default()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_search_forgets_the_scores_of_the_last_one() {
        let mut s = Scratch::default();
        s.start(3);
        s.improve(1, 5.0, 0);
        assert!(s.close(1));
        assert!(!s.close(1));
        assert_eq!(
            (s.best(1), s.parent(1), s.is_closed(1)),
            (5.0, Some(0), true)
        );
        s.start(3);
        assert_eq!(
            (s.best(1), s.parent(1), s.is_closed(1)),
            (f64::INFINITY, None, false)
        );
    }

    #[test]
    fn the_search_counter_wrapping_round_clears_old_slots() {
        let mut s = Scratch::default();
        s.start(2);
        s.improve(0, 1.0, 1);
        s.search = u32::MAX;
        s.slots[0].search = 1;
        s.start(2);
        assert_eq!(s.search, 1);
        assert_eq!(s.best(0), f64::INFINITY);
    }
}
