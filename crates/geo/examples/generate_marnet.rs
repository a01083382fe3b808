//! Builds `crates/geo/data/marnet.bin` from searoute-py's network files.
//!
//! ```text
//! cargo run -p tidemark-geo --example generate_marnet -- \
//!     ../shared/reference/searoute/marnet_searoute.geojson \
//!     ../shared/reference/searoute/segment.geojson \
//!     crates/geo/data/marnet.bin
//! ```
//!
//! Every (Multi)LineString vertex becomes a node (identical coordinates, to the
//! micro-degree, are one node) and every pair of consecutive vertices an edge, as
//! searoute-py builds its graph. An edge drawn twice keeps the last `passage` tag given
//! for it. `segment.geojson` adds the lines along ±180° and the zero-length
//! `pacific_ocean` links between them that let routes cross the antimeridian.
//!
//! One correction is applied (see [`EXTRA_TAGS`]): searoute-py tags the lanes south of
//! South Africa `south_africa` but leaves one of them, (20°E 40°S)–(22°E 35°S), untagged,
//! so forbidding the passage there still let routes round the Cape of Good Hope.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::error::Error;
use std::{env, fs};

use serde_json::Value;
use tidemark_geo::searoute::format::{EdgeKind, EdgeRecord, NetworkData};
use tidemark_geo::searoute::{Passage, SeaRouter};

/// Edges, given by their ends `[lon, lat]`, that get a passage tag the source lacks.
const EXTRA_TAGS: &[([f64; 2], [f64; 2], Passage)] =
    &[([20.0, -40.0], [22.0, -35.0], Passage::CapeOfGoodHope)];

#[derive(Default)]
struct Builder {
    data: NetworkData,
    node_ids: HashMap<[i32; 2], u32>,
    /// Edge (a < b) → position in `data.edges`.
    edge_ids: HashMap<(u32, u32), usize>,
    vertices: usize,
}

impl Builder {
    fn node(&mut self, coord: &Value) -> Result<u32, Box<dyn Error>> {
        let pair = coord.as_array().ok_or("coordinate is not an array")?;
        let axis = |i: usize| -> Result<i32, Box<dyn Error>> {
            let v = pair
                .get(i)
                .and_then(Value::as_f64)
                .ok_or("coordinate is not a number")?;
            // Source coordinates have at most six decimals, so this is exact.
            Ok((v * 1e6).round() as i32)
        };
        let key = [axis(0)?, axis(1)?];
        self.vertices += 1;
        let next = u32::try_from(self.data.nodes.len())?;
        Ok(*self.node_ids.entry(key).or_insert_with(|| {
            self.data.nodes.push(key);
            next
        }))
    }

    fn line(&mut self, coords: &Value, kind: Option<EdgeKind>) -> Result<(), Box<dyn Error>> {
        let coords = coords.as_array().ok_or("line is not an array")?;
        let mut prev: Option<u32> = None;
        for c in coords {
            let n = self.node(c)?;
            if let Some(p) = prev
                && p != n
            {
                let key = (p.min(n), p.max(n));
                match self.edge_ids.entry(key) {
                    Entry::Occupied(slot) => {
                        if let Some(kind) = kind {
                            self.data.edges[*slot.get()].kind = kind;
                        }
                    }
                    Entry::Vacant(slot) => {
                        slot.insert(self.data.edges.len());
                        self.data.edges.push(EdgeRecord {
                            a: key.0,
                            b: key.1,
                            kind: kind.unwrap_or(EdgeKind::Plain),
                        });
                    }
                }
            }
            prev = Some(n);
        }
        Ok(())
    }

    fn tag(&mut self, a: [f64; 2], b: [f64; 2], passage: Passage) -> Result<(), Box<dyn Error>> {
        let id = |p: [f64; 2]| {
            let key = [(p[0] * 1e6).round() as i32, (p[1] * 1e6).round() as i32];
            self.node_ids
                .get(&key)
                .copied()
                .ok_or_else(|| format!("no node at {p:?}"))
        };
        let (a, b) = (id(a)?, id(b)?);
        let index = *self
            .edge_ids
            .get(&(a.min(b), a.max(b)))
            .ok_or("no such edge to tag")?;
        self.data.edges[index].kind = EdgeKind::Passage(passage);
        Ok(())
    }

    fn feature_collection(&mut self, path: &str) -> Result<(), Box<dyn Error>> {
        let json: Value = serde_json::from_str(&fs::read_to_string(path)?)?;
        let features = json["features"].as_array().ok_or("no features array")?;
        for feature in features {
            let kind = match feature["properties"]["passage"].as_str() {
                None => None,
                Some("segment" | "segment2") => Some(EdgeKind::Plain),
                Some("pacific_ocean") => Some(EdgeKind::AntimeridianLink),
                Some(tag) => Some(EdgeKind::Passage(
                    Passage::from_searoute_name(tag)
                        .ok_or_else(|| format!("unknown passage tag {tag:?}"))?,
                )),
            };
            let geometry = &feature["geometry"];
            match geometry["type"].as_str() {
                Some("LineString") => self.line(&geometry["coordinates"], kind)?,
                Some("MultiLineString") => {
                    for line in geometry["coordinates"]
                        .as_array()
                        .ok_or("bad MultiLineString")?
                    {
                        self.line(line, kind)?;
                    }
                }
                other => return Err(format!("unexpected geometry {other:?}").into()),
            }
        }
        Ok(())
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = env::args().skip(1).collect();
    let [marnet, segment, output] = args.as_slice() else {
        return Err(
            "usage: generate_marnet <marnet_searoute.geojson> <segment.geojson> <out.bin>".into(),
        );
    };
    let mut builder = Builder::default();
    builder.feature_collection(marnet)?;
    builder.feature_collection(segment)?;
    for &(a, b, passage) in EXTRA_TAGS {
        builder.tag(a, b, passage)?;
    }
    let bytes = builder.data.to_bytes()?;

    // Check the file reads back into the same network before writing it.
    let back = NetworkData::from_bytes(&bytes)?;
    if back.nodes != builder.data.nodes || back.edges.len() != builder.data.edges.len() {
        return Err("round trip changed the network".into());
    }
    let router = SeaRouter::from_bytes(&bytes)?;
    fs::write(output, &bytes)?;
    let tagged = back
        .edges
        .iter()
        .filter(|e| e.kind != EdgeKind::Plain)
        .count();
    println!(
        "{} vertices -> {} nodes, {} edges ({tagged} tagged); {} bytes written to {output}",
        builder.vertices,
        router.node_count(),
        router.edge_count(),
        bytes.len()
    );
    Ok(())
}
