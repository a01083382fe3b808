//! Sea routes between two points over a maritime network, for maps and estimated
//! positions (not for navigation).
//!
//! The network is searoute-py's (Apache-2.0), itself from Eurostat SeaRoute (EUPL-1.2)
//! and the ORNL global shipping lanes; see `data/ATTRIBUTION.md`. It ships in
//! `data/marnet.bin` in the compact form of [`format`](mod@format), made by
//! `examples/generate_marnet.rs`.
//!
//! A route snaps each end to the nearest network node (great-circle distance, through
//! an R-tree), runs A* between them with edge lengths as costs, and joins each end to its
//! node by a straight segment. The A* estimate is the larger of the great-circle distance
//! to the goal and landmark bounds (see `landmarks.rs`), both admissible. Lengths follow
//! searoute-py (`append_orig_dest=True`) to well under 1% with its default of avoiding
//! the Northwest Passage; `bench/searoute/` compares the two.
//!
//! ```
//! use tidemark_geo::searoute::{Passage, RouteOptions, SeaRouter};
//!
//! let router = SeaRouter::embedded();
//! let rotterdam = (4.05, 51.95);
//! let shanghai = (121.8, 31.2);
//! let route = router.route(rotterdam, shanghai, &RouteOptions::default())?;
//! assert!(route.passages().contains(&Passage::Suez));
//! let halfway = route.point_at_fraction(0.5);
//! assert!((-180.0..=180.0).contains(&halfway.lon));
//! # Ok::<(), tidemark_geo::searoute::RouteError>(())
//! ```

pub mod format;
mod geodesy;
mod landmarks;
mod passage;
mod route;
mod scratch;

use std::cmp::Reverse;
use std::fmt;
use std::sync::LazyLock;

use petgraph::Directed;
use petgraph::csr::Csr;
use rstar::RTree;
use rstar::primitives::GeomWithData;
use serde::{Deserialize, Serialize};

pub use format::{EdgeKind, FormatError, NetworkData};
pub use geodesy::{EARTH_RADIUS_KM, KM_PER_NM, haversine_km};
pub use passage::{Passage, UnknownPassage};
pub use route::{RoutePosition, SeaRoute};

use geodesy::{chord_km, unit_vector, unwrap_longitude};
use landmarks::Landmarks;

const MARNET_BIN: &[u8] = include_bytes!("../../data/marnet.bin");

/// Landmarks for the A* bounds: more prune better but cost one Dijkstra each at load
/// and memory per node. Measured on the 50 bench pairs: 4 → 27k nodes expanded in all,
/// 8 → 19k, 16 → 17k; eight keep the load near 15 ms.
const LANDMARKS: usize = 8;

static EMBEDDED: LazyLock<SeaRouter> =
    LazyLock::new(|| SeaRouter::load_embedded().expect("embedded network file is well-formed"));

/// Which passages a route may not use. Deserializing `{}` gives the default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RouteOptions {
    /// Passages to avoid. The default avoids [`Passage::Northwest`], as searoute-py
    /// does; a list given here replaces that default.
    pub avoid: Vec<Passage>,
}

impl Default for RouteOptions {
    fn default() -> Self {
        Self {
            avoid: vec![Passage::Northwest],
        }
    }
}

impl RouteOptions {
    /// Options that allow every passage, the Northwest Passage included.
    #[must_use]
    pub fn allowing_all() -> Self {
        Self { avoid: Vec::new() }
    }

    /// These options, also avoiding `passage`.
    #[must_use]
    pub fn avoiding(mut self, passage: Passage) -> Self {
        if !self.avoid.contains(&passage) {
            self.avoid.push(passage);
        }
        self
    }

    fn mask(&self) -> u16 {
        self.avoid.iter().fold(0, |m, p| m | p.bit())
    }
}

/// Which end of a route a value belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Endpoint {
    /// The start.
    From,
    /// The destination.
    To,
}

/// Why no route was computed.
#[derive(Debug, Clone, PartialEq)]
pub enum RouteError {
    /// A coordinate is NaN, infinite, or outside longitude −180…180 / latitude −90…90.
    InvalidCoordinate {
        /// Which end.
        endpoint: Endpoint,
        /// The longitude given.
        lon: f64,
        /// The latitude given.
        lat: f64,
    },
    /// The avoided passages cut every way between the two points.
    NoRoute,
}

impl fmt::Display for RouteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidCoordinate { endpoint, lon, lat } => {
                let which = match endpoint {
                    Endpoint::From => "start",
                    Endpoint::To => "destination",
                };
                write!(f, "invalid {which} coordinate (lon {lon}, lat {lat})")
            }
            Self::NoRoute => f.write_str("no sea route avoids the given passages"),
        }
    }
}

impl std::error::Error for RouteError {}

#[derive(Debug, Clone, Copy)]
struct Node {
    /// As in the source: longitudes may lie a little beyond ±180°.
    lon_lat: [f64; 2],
    unit: [f64; 3],
}

#[derive(Debug, Clone, Copy)]
struct Edge {
    km: f64,
    kind: EdgeKind,
}

impl Edge {
    fn allowed(self, avoid_mask: u16) -> bool {
        match self.kind {
            EdgeKind::Passage(p) => avoid_mask & p.bit() == 0,
            EdgeKind::Plain | EdgeKind::AntimeridianLink => true,
        }
    }
}

type Indexed = GeomWithData<[f64; 3], u32>;

/// The network as a compressed sparse row graph holding each edge in both directions:
/// a node's neighbours and edges are two contiguous slices, which searches walk much
/// faster than a linked adjacency list. Node weights live in `SeaRouter::nodes`.
type Graph = Csr<(), Edge, Directed, u32>;

/// The maritime network, ready to route. Immutable and `Sync`: share one.
#[derive(Debug)]
pub struct SeaRouter {
    nodes: Vec<Node>,
    graph: Graph,
    /// Nodes by unit vector, so the Euclidean nearest is the great-circle nearest and
    /// the poles and the antimeridian need no special case.
    tree: RTree<Indexed>,
    landmarks: Landmarks,
}

impl SeaRouter {
    /// The router over the embedded network, loaded on first use.
    #[must_use]
    pub fn embedded() -> &'static Self {
        &EMBEDDED
    }

    /// A fresh router over the embedded network; [`SeaRouter::embedded`] shares one.
    /// For measuring the load time.
    ///
    /// # Errors
    ///
    /// Never for the network shipped with the crate.
    pub fn load_embedded() -> Result<Self, FormatError> {
        Self::from_bytes(MARNET_BIN)
    }

    /// A router over a network in the compact form of [`format`](mod@format).
    ///
    /// # Errors
    ///
    /// If the bytes are not a valid network file.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, FormatError> {
        Self::from_data(&NetworkData::from_bytes(bytes)?)
    }

    /// A router over the given network.
    ///
    /// # Errors
    ///
    /// If an edge names a missing node, joins a node to itself or repeats another edge.
    pub fn from_data(data: &NetworkData) -> Result<Self, FormatError> {
        let nodes: Vec<Node> = data
            .nodes
            .iter()
            .map(|&[lon, lat]| {
                let lon_lat = [f64::from(lon) / 1e6, f64::from(lat) / 1e6];
                Node {
                    lon_lat,
                    unit: unit_vector(lon_lat),
                }
            })
            .collect();
        let n = nodes.len();
        if data.edges.iter().any(|e| e.a == e.b) {
            return Err(FormatError::new("self-loop edge"));
        }
        if data.edges.iter().any(|e| e.a.max(e.b) as usize >= n) {
            return Err(FormatError::new("edge names a missing node"));
        }

        // Both directions of every edge, grouped by source with a counting sort (sorting
        // all arcs was a tenth of the load time), then each short row sorted by target:
        // the order Csr::from_sorted_edges wants.
        let mut row_start = vec![0usize; n + 1];
        for e in &data.edges {
            row_start[e.a as usize + 1] += 1;
            row_start[e.b as usize + 1] += 1;
        }
        for i in 0..n {
            row_start[i + 1] += row_start[i];
        }
        let placeholder = (
            0,
            0,
            Edge {
                km: 0.0,
                kind: EdgeKind::Plain,
            },
        );
        let mut arcs = vec![placeholder; data.edges.len() * 2];
        let mut cursor = row_start.clone();
        for e in &data.edges {
            let km = match e.kind {
                // Its two ends are one place, written as 180° and −180°.
                EdgeKind::AntimeridianLink => 0.0,
                EdgeKind::Plain | EdgeKind::Passage(_) => {
                    haversine_km(nodes[e.a as usize].lon_lat, nodes[e.b as usize].lon_lat)
                }
            };
            let edge = Edge { km, kind: e.kind };
            for (from, to) in [(e.a, e.b), (e.b, e.a)] {
                arcs[cursor[from as usize]] = (from, to, edge);
                cursor[from as usize] += 1;
            }
        }
        for row in row_start.windows(2) {
            arcs[row[0]..row[1]].sort_unstable_by_key(|&(_, to, _)| to);
        }
        // Rows are now in order and sorted, so the only possible complaint is a repeat.
        let mut graph =
            Graph::from_sorted_edges(&arcs).map_err(|_| FormatError::new("duplicate edge"))?;
        // Trailing nodes without edges are not created by from_sorted_edges.
        while graph.node_count() < n {
            graph.add_node(());
        }
        let points = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| GeomWithData::new(n.unit, i as u32))
            .collect();
        Ok(Self {
            landmarks: Landmarks::select(&graph, LANDMARKS, RouteOptions::default().mask()),
            tree: RTree::bulk_load(points),
            graph,
            nodes,
        })
    }

    /// Number of nodes of the network.
    #[must_use]
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Number of (undirected) edges of the network.
    #[must_use]
    pub fn edge_count(&self) -> usize {
        self.graph.edge_count() / 2
    }

    /// The shortest sea route from `from` to `to`, each `(lon, lat)` in degrees.
    ///
    /// The route starts at `from`, goes straight to the network node nearest to it,
    /// follows the network, and goes straight from the node nearest to `to` to `to`.
    /// "Nearest" skips nodes whose every edge is avoided (inside a forbidden canal). A
    /// route from a point to itself is that one point.
    ///
    /// # Errors
    ///
    /// [`RouteError::InvalidCoordinate`] for a NaN, infinite or out-of-range coordinate;
    /// [`RouteError::NoRoute`] when the avoided passages cut every way.
    pub fn route(
        &self,
        from: (f64, f64),
        to: (f64, f64),
        options: &RouteOptions,
    ) -> Result<SeaRoute, RouteError> {
        let from = validate(from, Endpoint::From)?;
        let to = validate(to, Endpoint::To)?;
        if from == to {
            return Ok(SeaRoute::new(vec![from], Vec::new()));
        }
        let mask = options.mask();
        let start = self.snap(from, mask).ok_or(RouteError::NoRoute)?;
        let goal = self.snap(to, mask).ok_or(RouteError::NoRoute)?;
        let path = self.astar(start, goal, mask).ok_or(RouteError::NoRoute)?;

        let mut points: Vec<[f64; 2]> = Vec::with_capacity(path.len() + 2);
        let mut push = |p: [f64; 2]| {
            let p = match points.last() {
                Some(last) => [unwrap_longitude(last[0], p[0]), p[1]],
                None => p,
            };
            if points.last() != Some(&p) {
                points.push(p);
            }
        };
        push(from);
        let mut passages: Vec<Passage> = Vec::new();
        for &(node, via) in &path {
            push(self.nodes[node as usize].lon_lat);
            if let Some(EdgeKind::Passage(p)) = via
                && !passages.contains(&p)
            {
                passages.push(p);
            }
        }
        push(to);
        Ok(SeaRoute::new(points, passages))
    }

    /// The node nearest to `p` that has an edge the route may use.
    fn snap(&self, p: [f64; 2], mask: u16) -> Option<u32> {
        let usable = |n: u32| self.graph.edges_slice(n).iter().any(|e| e.allowed(mask));
        let query = unit_vector(p);
        // The nearest node nearly always qualifies; the ordered walk costs more.
        match self.tree.nearest_neighbor(&query) {
            Some(hit) if usable(hit.data) => Some(hit.data),
            _ => self
                .tree
                .nearest_neighbor_iter(&query)
                .map(|hit| hit.data)
                .find(|&n| usable(n)),
        }
    }

    /// A* from `start` to `goal`. Returns the nodes of the path, each with the kind of
    /// the edge that led to it (`None` for `start`).
    ///
    /// Scores live in a table indexed by node (see [`scratch`]) rather than the hash
    /// maps of petgraph's `astar`: the network is small, and this is several times faster.
    fn astar(&self, start: u32, goal: u32, mask: u16) -> Option<Vec<(u32, Option<EdgeKind>)>> {
        let n = self.nodes.len();
        let goal_unit = self.nodes[goal as usize].unit;
        let goal_row = self
            .landmarks
            .valid_for(mask)
            .then(|| self.landmarks.row(goal as usize));
        // Both bounds are admissible, so their maximum is; shaved a hair so that float
        // rounding can never make it overestimate.
        let heuristic = |v: u32| {
            let crow = chord_km(self.nodes[v as usize].unit, goal_unit);
            let network = goal_row.map_or(0.0, |row| self.landmarks.lower_bound(v as usize, row));
            crow.max(network) * (1.0 - 1e-9)
        };

        scratch::with_scratch(|s| {
            s.start(n);
            s.improve(start, 0.0, start);
            s.open.push(Reverse((heuristic(start).to_bits(), start)));
            while let Some(Reverse((_, u))) = s.open.pop() {
                if !s.close(u) {
                    continue;
                }
                if u == goal {
                    break;
                }
                let g_u = s.best(u);
                let neighbours = self.graph.neighbors_slice(u);
                for (&v, edge) in neighbours.iter().zip(self.graph.edges_slice(u)) {
                    if !edge.allowed(mask) || s.is_closed(v) {
                        continue;
                    }
                    let g_v = g_u + edge.km;
                    if g_v < s.best(v) {
                        s.improve(v, g_v, u);
                        s.open.push(Reverse(((g_v + heuristic(v)).to_bits(), v)));
                    }
                }
            }
            if std::env::var_os("TMDBG").is_some() {
                eprintln!(
                    "expanded {}",
                    (0..n as u32).filter(|&v| s.is_closed(v)).count()
                );
            }
            if !s.is_closed(goal) {
                return None;
            }

            let mut path = Vec::new();
            let mut node = goal;
            while node != start {
                let from = s.parent(node)?;
                let kind = self
                    .graph
                    .neighbors_slice(from)
                    .iter()
                    .zip(self.graph.edges_slice(from))
                    .find(|&(&v, e)| v == node && e.allowed(mask))
                    .map(|(_, e)| e.kind);
                path.push((node, kind));
                node = from;
            }
            path.push((start, None));
            path.reverse();
            Some(path)
        })
    }
}

fn validate((lon, lat): (f64, f64), endpoint: Endpoint) -> Result<[f64; 2], RouteError> {
    if (-180.0..=180.0).contains(&lon) && (-90.0..=90.0).contains(&lat) {
        Ok([lon, lat])
    } else {
        // NaN fails `contains` too.
        Err(RouteError::InvalidCoordinate { endpoint, lon, lat })
    }
}

#[cfg(test)]
mod tests;
