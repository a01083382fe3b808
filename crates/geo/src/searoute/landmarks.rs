//! Landmark lower bounds for A* ("ALT": A*, landmarks, triangle inequality).
//!
//! The great-circle distance is a weak estimate for routes that must detour (Asia to
//! Europe through Suez), so A* then explores most of the network. With the exact network
//! distances `d(L, ·)` from a few landmarks L, `|d(L, goal) − d(L, v)|` is a lower bound
//! of `d(v, goal)` by the triangle inequality, and a far tighter one.
//!
//! Distances are taken on the network less the edges of a base set of forbidden
//! passages (the default, Northwest). Forbidding more passages only removes edges, which
//! can only lengthen distances, so the bounds stay valid (and consistent) for every
//! option set that forbids at least the base set; the router uses them only then. The
//! base set matters: with the Northwest Passage open, Europe and Asia are close over
//! the Arctic and the bounds for the usual routes through Suez are much weaker.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::Graph;

/// Distances from each landmark to every node.
#[derive(Debug)]
pub(super) struct Landmarks {
    /// Passages (as in `RouteOptions::mask`) the distances were computed without.
    base_mask: u16,
    count: usize,
    /// Node-major: `distances[v * count + k]` is the distance from landmark k to node v,
    /// so one node's bounds share a cache line or two.
    distances: Vec<f64>,
}

impl Landmarks {
    /// Picks `count` landmarks spread out by "farthest" selection: each next landmark is
    /// the node farthest (by network distance) from those already chosen, which puts
    /// them at the network's extremities where they bound the most routes.
    pub(super) fn select(graph: &Graph, count: usize, base_mask: u16) -> Self {
        let n = graph.node_count();
        let mut distances = vec![0.0; n * count];
        if n == 0 {
            return Self {
                base_mask,
                count: 0,
                distances,
            };
        }
        // Distance from each node to the nearest chosen landmark. Start from the node of
        // highest degree, a hub of the main network rather than a stub cut off by the
        // base passages, whose landmarks would bound nothing else.
        let hub = (0..n as u32)
            .max_by_key(|&v| {
                let edges = graph.edges_slice(v);
                edges.iter().filter(|e| e.allowed(base_mask)).count()
            })
            .unwrap_or(0);
        let mut nearest = shortest_distances(graph, hub, base_mask);
        for k in 0..count {
            let landmark = farthest(&nearest);
            let from_landmark = shortest_distances(graph, landmark as u32, base_mask);
            for (v, &d) in from_landmark.iter().enumerate() {
                distances[v * count + k] = d;
                nearest[v] = if k == 0 { d } else { nearest[v].min(d) };
            }
        }
        Self {
            base_mask,
            count,
            distances,
        }
    }

    /// Whether the bounds hold for routes that forbid the passages of `mask`.
    pub(super) fn valid_for(&self, mask: u16) -> bool {
        mask & self.base_mask == self.base_mask
    }

    /// The landmark distances of node `v`.
    pub(super) fn row(&self, v: usize) -> &[f64] {
        &self.distances[v * self.count..(v + 1) * self.count]
    }

    /// A lower bound of the network distance from `v` to the node whose row is `goal`.
    pub(super) fn lower_bound(&self, v: usize, goal: &[f64]) -> f64 {
        self.row(v)
            .iter()
            .zip(goal)
            .map(|(a, b)| (a - b).abs())
            // Both distances are finite on a connected network; an unreachable node
            // gives inf − inf = NaN, which max ignores.
            .fold(0.0, f64::max)
    }
}

/// Index of the largest finite value.
fn farthest(distances: &[f64]) -> usize {
    distances
        .iter()
        .enumerate()
        .filter(|(_, d)| d.is_finite())
        .fold((0, f64::NEG_INFINITY), |best, (i, &d)| {
            if d > best.1 { (i, d) } else { best }
        })
        .0
}

/// Dijkstra from `source` over the network less the passages of `mask`. Nodes cut off
/// stay at infinity.
fn shortest_distances(graph: &Graph, source: u32, mask: u16) -> Vec<f64> {
    let mut dist = vec![f64::INFINITY; graph.node_count()];
    let mut heap: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::new();
    dist[source as usize] = 0.0;
    heap.push(Reverse((0.0f64.to_bits(), source)));
    while let Some(Reverse((bits, u))) = heap.pop() {
        let d_u = dist[u as usize];
        if f64::from_bits(bits) > d_u {
            continue;
        }
        let neighbours = graph.neighbors_slice(u);
        for (&v, edge) in neighbours.iter().zip(graph.edges_slice(u)) {
            if !edge.allowed(mask) {
                continue;
            }
            let d = d_u + edge.km;
            if d < dist[v as usize] {
                dist[v as usize] = d;
                heap.push(Reverse((d.to_bits(), v)));
            }
        }
    }
    dist
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::searoute::{Edge, EdgeKind, Passage};

    /// A path 0 - 1 - 2 - 3 with edges of 1, 2 and 3 km; the 2 km one may go through
    /// `middle`.
    fn path_graph_with(middle: EdgeKind) -> Graph {
        let edge = |km, kind| Edge { km, kind };
        let plain = EdgeKind::Plain;
        Graph::from_sorted_edges(&[
            (0, 1, edge(1.0, plain)),
            (1, 0, edge(1.0, plain)),
            (1, 2, edge(2.0, middle)),
            (2, 1, edge(2.0, middle)),
            (2, 3, edge(3.0, plain)),
            (3, 2, edge(3.0, plain)),
        ])
        .expect("sorted")
    }

    fn path_graph() -> Graph {
        path_graph_with(EdgeKind::Plain)
    }

    #[test]
    fn dijkstra_gives_the_network_distances() {
        let d = shortest_distances(&path_graph(), 0, 0);
        assert_eq!(d, vec![0.0, 1.0, 3.0, 6.0]);
    }

    #[test]
    fn dijkstra_skips_forbidden_passages() {
        let g = path_graph_with(EdgeKind::Passage(Passage::Suez));
        let d = shortest_distances(&g, 0, Passage::Suez.bit());
        assert_eq!(d, vec![0.0, 1.0, f64::INFINITY, f64::INFINITY]);
    }

    #[test]
    fn landmarks_go_to_the_ends_of_the_network() {
        let landmarks = Landmarks::select(&path_graph(), 2, 0);
        // From the hub (node 2, the last of the highest degree) the farthest node is 0;
        // the node farthest from 0 is 3.
        assert_eq!(landmarks.row(0), &[0.0, 6.0]);
        assert_eq!(landmarks.row(3), &[6.0, 0.0]);
    }

    #[test]
    fn bounds_hold_only_for_options_forbidding_the_base_passages() {
        let base = Passage::Northwest.bit();
        let landmarks = Landmarks::select(&path_graph(), 1, base);
        assert!(landmarks.valid_for(base));
        assert!(landmarks.valid_for(base | Passage::Suez.bit()));
        assert!(!landmarks.valid_for(0));
        assert!(!landmarks.valid_for(Passage::Suez.bit()));
    }

    #[test]
    fn the_bound_on_a_path_is_the_exact_distance() {
        let landmarks = Landmarks::select(&path_graph(), 2, 0);
        let goal = landmarks.row(1).to_vec();
        assert_eq!(landmarks.lower_bound(3, &goal), 5.0);
        assert_eq!(landmarks.lower_bound(1, &goal), 0.0);
    }
}
