//! A cap on deliveries in flight per webhook within a process, so one slow receiver cannot
//! occupy every worker while other receivers wait.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use tidemark_domain::WebhookId;

/// Deliveries one webhook may have in flight in one process.
pub const PER_WEBHOOK: usize = 4;

#[derive(Debug)]
pub struct WebhookSlots {
    per_webhook: usize,
    in_flight: Mutex<HashMap<WebhookId, usize>>,
}

impl Default for WebhookSlots {
    fn default() -> Self {
        Self::new(PER_WEBHOOK)
    }
}

impl WebhookSlots {
    pub fn new(per_webhook: usize) -> Self {
        Self {
            per_webhook,
            in_flight: Mutex::default(),
        }
    }

    /// A slot for one delivery to `webhook`, or `None` when all of its slots are taken.
    pub fn try_acquire(&self, webhook: WebhookId) -> Option<Slot<'_>> {
        let mut in_flight = self
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let count = in_flight.entry(webhook).or_default();
        if *count >= self.per_webhook {
            return None;
        }
        *count += 1;
        Some(Slot {
            slots: self,
            webhook,
        })
    }
}

/// A taken slot, given back when dropped.
#[derive(Debug)]
pub struct Slot<'a> {
    slots: &'a WebhookSlots,
    webhook: WebhookId,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        let mut in_flight = self
            .slots
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = in_flight.get_mut(&self.webhook) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                in_flight.remove(&self.webhook);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tidemark_domain::SequentialIds;

    #[test]
    fn a_webhook_gets_no_more_slots_than_its_cap_and_others_are_unaffected() {
        let ids = SequentialIds::default();
        let (slow, other) = (WebhookId::new(&ids), WebhookId::new(&ids));
        let slots = WebhookSlots::new(2);

        let first = slots.try_acquire(slow);
        let second = slots.try_acquire(slow);

        assert!(first.is_some() && second.is_some());
        assert!(slots.try_acquire(slow).is_none());
        assert!(slots.try_acquire(other).is_some());
        drop(first);
        assert!(
            slots.try_acquire(slow).is_some(),
            "a finished delivery frees its slot"
        );
    }
}
