//! The compact on-disk form of the maritime network (`data/marnet.bin`).
//!
//! Layout, all integers LEB128 varints unless noted:
//!
//! ```text
//! b"TMNET" magic, u8 version (1)
//! node_count, then per node: zigzag(Δlon), zigzag(Δlat) in micro-degrees from the previous node
//! edge_count, then per edge (sorted by (a, b), a < b): a − previous a, b − a
//! tagged_count, then per tagged edge: index − previous tagged index, u8 kind code
//! ```
//!
//! Micro-degrees keep every source coordinate distinct (the source has at most six
//! decimals), and node order follows the source lines, so most deltas fit one or two
//! bytes. Edge lengths are not stored: they are recomputed from the coordinates on load.

use std::fmt;

use super::passage::Passage;

const MAGIC: &[u8; 5] = b"TMNET";
const VERSION: u8 = 1;

/// What an edge of the network is, beyond its two ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EdgeKind {
    /// An ordinary lane.
    Plain,
    /// A zero-length link joining a node at longitude 180 to its twin at −180.
    AntimeridianLink,
    /// A lane through a named passage that routes may avoid.
    Passage(Passage),
}

impl EdgeKind {
    const fn code(self) -> u8 {
        match self {
            Self::Plain => 0,
            Self::AntimeridianLink => 1,
            Self::Passage(p) => 2 + p as u8,
        }
    }

    fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(Self::Plain),
            1 => Some(Self::AntimeridianLink),
            n => Passage::ALL
                .get(usize::from(n - 2))
                .copied()
                .map(Self::Passage),
        }
    }
}

/// One undirected edge between two node indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EdgeRecord {
    /// One end (index into [`NetworkData::nodes`]).
    pub a: u32,
    /// The other end.
    pub b: u32,
    /// What the edge is.
    pub kind: EdgeKind,
}

/// The network as plain data: node coordinates and edges.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NetworkData {
    /// `[lon, lat]` in micro-degrees. Longitudes may lie a little beyond ±180°, as in
    /// the source, where lines near the Bering Strait continue past the antimeridian.
    pub nodes: Vec<[i32; 2]>,
    /// Undirected edges; no self-loops, no duplicates.
    pub edges: Vec<EdgeRecord>,
}

/// The bytes are not a network file this code can read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError(&'static str);

impl FormatError {
    pub(crate) const fn new(reason: &'static str) -> Self {
        Self(reason)
    }
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed network file: {}", self.0)
    }
}

impl std::error::Error for FormatError {}

impl NetworkData {
    /// Encodes into the compact form. Edges are written in canonical order (a < b,
    /// sorted), so decoding gives them back in that order, not necessarily as given.
    ///
    /// # Errors
    ///
    /// If an edge is a self-loop, repeats another edge or names a missing node.
    pub fn to_bytes(&self) -> Result<Vec<u8>, FormatError> {
        let mut out = Vec::with_capacity(self.nodes.len() * 4 + self.edges.len() * 3);
        out.extend_from_slice(MAGIC);
        out.push(VERSION);

        write_varint(&mut out, self.nodes.len() as u64);
        let mut prev = [0i64; 2];
        for node in &self.nodes {
            for (axis, prev) in node.iter().zip(prev.iter_mut()) {
                let value = i64::from(*axis);
                write_varint(&mut out, zigzag(value - *prev));
                *prev = value;
            }
        }

        let node_count = self.nodes.len();
        let mut edges: Vec<EdgeRecord> = Vec::with_capacity(self.edges.len());
        for e in &self.edges {
            let (a, b) = (e.a.min(e.b), e.a.max(e.b));
            if a == b {
                return Err(FormatError("self-loop edge"));
            }
            if b as usize >= node_count {
                return Err(FormatError("edge names a missing node"));
            }
            edges.push(EdgeRecord { a, b, kind: e.kind });
        }
        edges.sort_by_key(|e| (e.a, e.b));
        if edges
            .windows(2)
            .any(|w| (w[0].a, w[0].b) == (w[1].a, w[1].b))
        {
            return Err(FormatError("duplicate edge"));
        }

        write_varint(&mut out, edges.len() as u64);
        let mut prev_a = 0u32;
        for e in &edges {
            write_varint(&mut out, u64::from(e.a - prev_a));
            write_varint(&mut out, u64::from(e.b - e.a));
            prev_a = e.a;
        }

        let tagged: Vec<(usize, &EdgeRecord)> = edges
            .iter()
            .enumerate()
            .filter(|(_, e)| e.kind != EdgeKind::Plain)
            .collect();
        write_varint(&mut out, tagged.len() as u64);
        let mut prev_index = 0usize;
        for (index, e) in tagged {
            write_varint(&mut out, (index - prev_index) as u64);
            out.push(e.kind.code());
            prev_index = index;
        }
        Ok(out)
    }

    /// Decodes the compact form, checking every index.
    ///
    /// # Errors
    ///
    /// If the bytes are truncated, have the wrong magic or version, or are inconsistent.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, FormatError> {
        let mut r = Reader { bytes, pos: 0 };
        if r.take(MAGIC.len())? != MAGIC {
            return Err(FormatError("bad magic"));
        }
        if r.byte()? != VERSION {
            return Err(FormatError("unsupported version"));
        }

        let node_count = r.count()?;
        let mut nodes = Vec::with_capacity(node_count);
        let mut prev = [0i64; 2];
        for _ in 0..node_count {
            let mut node = [0i32; 2];
            for (slot, prev) in node.iter_mut().zip(prev.iter_mut()) {
                *prev += unzigzag(r.varint()?);
                *slot = i32::try_from(*prev).map_err(|_| FormatError("coordinate overflow"))?;
            }
            nodes.push(node);
        }

        let edge_count = r.count()?;
        let mut edges = Vec::with_capacity(edge_count);
        let mut a = 0u64;
        for _ in 0..edge_count {
            a += r.varint()?;
            let gap = r.varint()?;
            if gap == 0 {
                return Err(FormatError("self-loop edge"));
            }
            let b = a + gap;
            if b >= node_count as u64 {
                return Err(FormatError("edge names a missing node"));
            }
            // Both fit: b < node_count, which came from a usize bounded by the input length.
            let (a32, b32) = (
                u32::try_from(a).map_err(|_| FormatError("node index overflow"))?,
                u32::try_from(b).map_err(|_| FormatError("node index overflow"))?,
            );
            edges.push(EdgeRecord {
                a: a32,
                b: b32,
                kind: EdgeKind::Plain,
            });
        }

        let tagged_count = r.count()?;
        let mut index = 0u64;
        for _ in 0..tagged_count {
            index += r.varint()?;
            let kind = EdgeKind::from_code(r.byte()?).ok_or(FormatError("unknown edge kind"))?;
            let edge = usize::try_from(index)
                .ok()
                .and_then(|i| edges.get_mut(i))
                .ok_or(FormatError("tag names a missing edge"))?;
            edge.kind = kind;
        }
        if r.pos != bytes.len() {
            return Err(FormatError("trailing bytes"));
        }
        Ok(Self { nodes, edges })
    }
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

fn write_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], FormatError> {
        let end = self.pos.checked_add(n).ok_or(FormatError("truncated"))?;
        let slice = self
            .bytes
            .get(self.pos..end)
            .ok_or(FormatError("truncated"))?;
        self.pos = end;
        Ok(slice)
    }

    fn byte(&mut self) -> Result<u8, FormatError> {
        let b = *self.bytes.get(self.pos).ok_or(FormatError("truncated"))?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> Result<u64, FormatError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(FormatError("varint too long"))
    }

    /// A count of items that each take at least one byte, so it cannot exceed what is
    /// left; this keeps a corrupt count from reserving huge vectors.
    fn count(&mut self) -> Result<usize, FormatError> {
        let n = self.varint()?;
        let left = (self.bytes.len() - self.pos) as u64;
        if n > left {
            return Err(FormatError("count exceeds remaining bytes"));
        }
        usize::try_from(n).map_err(|_| FormatError("count overflow"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> NetworkData {
        NetworkData {
            nodes: vec![
                [180_000_000, 40_000_000],
                [-180_000_000, 40_000_000],
                [32_500_000, 30_000_000],
                [190_849_800, -65_962_200],
            ],
            edges: vec![
                EdgeRecord {
                    a: 0,
                    b: 1,
                    kind: EdgeKind::AntimeridianLink,
                },
                EdgeRecord {
                    a: 0,
                    b: 2,
                    kind: EdgeKind::Plain,
                },
                EdgeRecord {
                    a: 2,
                    b: 3,
                    kind: EdgeKind::Passage(Passage::Bering),
                },
                EdgeRecord {
                    a: 1,
                    b: 3,
                    kind: EdgeKind::Passage(Passage::Suez),
                },
            ],
        }
    }

    #[test]
    fn encoding_then_decoding_gives_the_network_back_in_canonical_order() {
        let data = sample();
        let bytes = data.to_bytes().expect("encodes");
        let back = NetworkData::from_bytes(&bytes).expect("decodes");
        assert_eq!(back.nodes, data.nodes);
        let mut expected = data.edges;
        expected.sort_by_key(|e| (e.a, e.b));
        assert_eq!(back.edges, expected);
    }

    #[test]
    fn every_truncation_of_a_valid_file_is_an_error_not_a_panic() {
        let bytes = sample().to_bytes().expect("encodes");
        for len in 0..bytes.len() {
            assert!(NetworkData::from_bytes(&bytes[..len]).is_err(), "len {len}");
        }
    }

    #[test]
    fn a_file_with_the_wrong_magic_is_rejected() {
        let mut bytes = sample().to_bytes().expect("encodes");
        bytes[0] = b'X';
        assert_eq!(
            NetworkData::from_bytes(&bytes),
            Err(FormatError("bad magic"))
        );
    }

    #[test]
    fn a_self_loop_cannot_be_encoded() {
        let mut data = sample();
        data.edges.push(EdgeRecord {
            a: 1,
            b: 1,
            kind: EdgeKind::Plain,
        });
        assert!(data.to_bytes().is_err());
    }

    #[test]
    fn every_edge_kind_code_round_trips() {
        let kinds = [EdgeKind::Plain, EdgeKind::AntimeridianLink]
            .into_iter()
            .chain(Passage::ALL.map(EdgeKind::Passage));
        for kind in kinds {
            assert_eq!(EdgeKind::from_code(kind.code()), Some(kind));
        }
        assert_eq!(EdgeKind::from_code(200), None);
    }
}
