//! Reassembly of multi-sentence AIS messages, keyed by (channel, sequential message id,
//! fragment count). Memory is bounded: at most [`MAX_PENDING`] messages in flight, each
//! dropped once it is [`MAX_AGE_LINES`] lines old, and fragments must arrive in order.

use super::sentence::Sentence;

/// Messages in flight at once. The sequential id has ten values per channel, so a
/// conforming source never needs more than twenty; the rest is slack for odd channels.
pub(super) const MAX_PENDING: usize = 32;
/// A message whose next fragment has not come within this many lines is abandoned.
/// Fragments of one message are sent back to back, so this only clears leftovers.
pub(super) const MAX_AGE_LINES: u64 = 500;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key {
    channel: Option<u8>,
    sequence_id: Option<u8>,
    fragment_count: u8,
}

impl Key {
    fn of(sentence: &Sentence<'_>) -> Self {
        Self {
            channel: sentence.channel,
            sequence_id: sentence.sequence_id,
            fragment_count: sentence.fragment_count,
        }
    }
}

#[derive(Debug)]
struct Pending {
    key: Key,
    next_number: u8,
    payload: Vec<u8>,
    received_at: Option<i64>,
    started_at_line: u64,
}

impl Pending {
    /// Fragments held so far (all count as dropped if the message is abandoned).
    fn held(&self) -> u64 {
        u64::from(self.next_number - 1)
    }
}

/// A reassembled message.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Complete {
    pub payload: Vec<u8>,
    pub fill_bits: u8,
    pub received_at: Option<i64>,
}

#[derive(Debug, Default)]
pub(super) struct Fragments {
    pending: Vec<Pending>,
}

impl Fragments {
    /// Adds one fragment of a multi-sentence message (`fragment_count > 1`), read at line
    /// number `line`. Returns the whole message when this fragment completes it; adds every
    /// fragment it discards to `dropped`.
    pub(super) fn push(
        &mut self,
        sentence: &Sentence<'_>,
        line: u64,
        dropped: &mut u64,
    ) -> Option<Complete> {
        self.pending.retain(|p| {
            let fresh = line.saturating_sub(p.started_at_line) <= MAX_AGE_LINES;
            if !fresh {
                *dropped += p.held();
            }
            fresh
        });

        let key = Key::of(sentence);
        let found = self.pending.iter().position(|p| p.key == key);
        if sentence.fragment_number == 1 {
            let index = match found {
                Some(index) => {
                    // The id was reused before the previous message finished.
                    *dropped += self.pending[index].held();
                    index
                }
                None if self.pending.len() >= MAX_PENDING => {
                    let oldest = self.oldest();
                    *dropped += self.pending[oldest].held();
                    oldest
                }
                None => {
                    self.pending.push(Pending {
                        key,
                        next_number: 1,
                        payload: Vec::new(),
                        received_at: None,
                        started_at_line: line,
                    });
                    self.pending.len() - 1
                }
            };
            let slot = &mut self.pending[index];
            slot.key = key;
            slot.next_number = 2;
            slot.payload.clear();
            slot.payload.extend_from_slice(sentence.payload);
            slot.received_at = sentence.received_at;
            slot.started_at_line = line;
            return None;
        }

        let Some(index) = found else {
            // Its first fragment was never seen (or was already dropped).
            *dropped += 1;
            return None;
        };
        if self.pending[index].next_number != sentence.fragment_number {
            *dropped += self.pending.swap_remove(index).held() + 1;
            return None;
        }
        let slot = &mut self.pending[index];
        slot.payload.extend_from_slice(sentence.payload);
        slot.next_number += 1;
        slot.received_at = slot.received_at.or(sentence.received_at);
        if sentence.fragment_number < sentence.fragment_count {
            return None;
        }
        let done = self.pending.swap_remove(index);
        Some(Complete {
            payload: done.payload,
            fill_bits: sentence.fill_bits,
            received_at: done.received_at,
        })
    }

    /// Fragments currently held for messages not yet complete.
    pub(super) fn held(&self) -> u64 {
        self.pending.iter().map(Pending::held).sum()
    }

    fn oldest(&self) -> usize {
        self.pending
            .iter()
            .enumerate()
            .min_by_key(|(_, p)| p.started_at_line)
            .map_or(0, |(index, _)| index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fragment(count: u8, number: u8, id: u8, channel: u8, payload: &[u8]) -> Sentence<'_> {
        Sentence {
            fragment_count: count,
            fragment_number: number,
            sequence_id: Some(id),
            channel: Some(channel),
            payload,
            fill_bits: if number == count { 2 } else { 0 },
            received_at: None,
        }
    }

    #[test]
    fn interleaved_messages_on_two_channels_are_both_reassembled() {
        let mut buffer = Fragments::default();
        let mut dropped = 0;
        assert_eq!(
            buffer.push(&fragment(2, 1, 6, b'B', b"b1"), 1, &mut dropped),
            None
        );
        assert_eq!(
            buffer.push(&fragment(2, 1, 2, b'A', b"a1"), 2, &mut dropped),
            None
        );
        let a = buffer.push(&fragment(2, 2, 2, b'A', b"a2"), 3, &mut dropped);
        let b = buffer.push(&fragment(2, 2, 6, b'B', b"b2"), 4, &mut dropped);
        assert_eq!(a.map(|c| c.payload), Some(b"a1a2".to_vec()));
        assert_eq!(b.map(|c| c.payload), Some(b"b1b2".to_vec()));
        assert_eq!(dropped, 0);
        assert_eq!(buffer.held(), 0);
    }

    #[test]
    fn a_fragment_without_its_first_part_is_dropped() {
        let mut buffer = Fragments::default();
        let mut dropped = 0;
        assert_eq!(
            buffer.push(&fragment(2, 2, 1, b'B', b"x"), 1, &mut dropped),
            None
        );
        assert_eq!(dropped, 1);
    }

    #[test]
    fn an_out_of_order_fragment_drops_the_whole_message() {
        let mut buffer = Fragments::default();
        let mut dropped = 0;
        buffer.push(&fragment(3, 1, 1, b'A', b"1"), 1, &mut dropped);
        assert_eq!(
            buffer.push(&fragment(3, 3, 1, b'A', b"3"), 2, &mut dropped),
            None
        );
        assert_eq!(
            buffer.push(&fragment(3, 2, 1, b'A', b"2"), 3, &mut dropped),
            None
        );
        assert_eq!(dropped, 3);
        assert_eq!(buffer.held(), 0);
    }

    #[test]
    fn a_stale_message_is_abandoned() {
        let mut buffer = Fragments::default();
        let mut dropped = 0;
        buffer.push(&fragment(2, 1, 1, b'A', b"1"), 1, &mut dropped);
        let late = buffer.push(
            &fragment(2, 2, 1, b'A', b"2"),
            2 + MAX_AGE_LINES,
            &mut dropped,
        );
        assert_eq!(late, None);
        assert_eq!(dropped, 2);
    }

    #[test]
    fn the_buffer_never_holds_more_than_its_limit() {
        let mut buffer = Fragments::default();
        let mut dropped = 0;
        for line in 0..1000u64 {
            let id = u8::try_from(line % 100).expect("small");
            buffer.push(&fragment(2, 1, id, b'A', b"first"), line, &mut dropped);
            assert!(buffer.pending.len() <= MAX_PENDING);
        }
        assert_eq!(dropped + buffer.held(), 1000);
    }
}
