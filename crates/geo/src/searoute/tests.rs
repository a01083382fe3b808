use super::*;

const ROTTERDAM: (f64, f64) = (4.442447, 51.904383);
const SHANGHAI: (f64, f64) = (121.497113, 31.400091);
const LOS_ANGELES: (f64, f64) = (-118.283333, 33.716667);
const NEW_YORK: (f64, f64) = (-74.017681, 40.705475);
const NINGBO: (f64, f64) = (121.559404, 29.871877);
const SAVANNAH: (f64, f64) = (-81.09974, 32.086579);
const SINGAPORE: (f64, f64) = (103.832461, 1.239207);

fn router() -> &'static SeaRouter {
    SeaRouter::embedded()
}

fn route(from: (f64, f64), to: (f64, f64), options: &RouteOptions) -> SeaRoute {
    router()
        .route(from, to, options)
        .expect("the network connects these ports")
}

fn options_avoiding(passages: &[Passage]) -> RouteOptions {
    passages
        .iter()
        .fold(RouteOptions::default(), |o, &p| o.avoiding(p))
}

/// Whether some network node sits at `p`, longitudes compared modulo 360°.
fn is_network_node(p: [f64; 2]) -> bool {
    let hit = router()
        .tree
        .nearest_neighbor(&unit_vector(p))
        .expect("the network has nodes");
    let node = router().nodes[hit.data as usize].lon_lat;
    let dlon = (node[0] - p[0]).rem_euclid(360.0);
    let same_lon = !(1e-9..=360.0 - 1e-9).contains(&dlon);
    same_lon && (node[1] - p[1]).abs() < 1e-9
}

#[test]
fn the_embedded_network_has_the_nodes_and_edges_of_searoute_py() {
    assert_eq!(router().node_count(), 9_708);
    assert_eq!(router().edge_count(), 15_970);
}

#[test]
fn rotterdam_to_shanghai_goes_through_suez_by_default() {
    let r = route(ROTTERDAM, SHANGHAI, &RouteOptions::default());
    assert!(r.passages().contains(&Passage::Suez), "{:?}", r.passages());
    assert!(r.passages().contains(&Passage::BabElMandeb));
    assert!(!r.passages().contains(&Passage::CapeOfGoodHope));
}

#[test]
fn rotterdam_to_shanghai_avoiding_suez_takes_the_shorter_panama_route_of_this_network() {
    // In this network Panama (25,033 km) beats the Cape of Good Hope; searoute-py agrees.
    let r = route(ROTTERDAM, SHANGHAI, &options_avoiding(&[Passage::Suez]));
    assert!(!r.passages().contains(&Passage::Suez));
    assert!(
        r.passages().contains(&Passage::Panama),
        "{:?}",
        r.passages()
    );
}

#[test]
fn rotterdam_to_shanghai_avoiding_suez_and_panama_rounds_the_cape_of_good_hope() {
    let options = options_avoiding(&[Passage::Suez, Passage::Panama]);
    let r = route(ROTTERDAM, SHANGHAI, &options);
    assert!(
        r.passages().contains(&Passage::CapeOfGoodHope),
        "{:?}",
        r.passages()
    );
    assert!(
        r.points()
            .iter()
            .any(|p| p[1] < -34.0 && (15.0..30.0).contains(&p[0])),
        "no point south of Africa"
    );
    let via_suez = route(ROTTERDAM, SHANGHAI, &RouteOptions::default());
    assert!(r.length_km() > via_suez.length_km() + 5_000.0);
}

#[test]
fn rotterdam_to_singapore_avoiding_suez_rounds_the_cape_of_good_hope() {
    let r = route(ROTTERDAM, SINGAPORE, &options_avoiding(&[Passage::Suez]));
    assert!(
        r.passages().contains(&Passage::CapeOfGoodHope),
        "{:?}",
        r.passages()
    );
}

#[test]
fn shanghai_to_los_angeles_crosses_the_antimeridian_without_jumping_across_the_map() {
    let r = route(SHANGHAI, LOS_ANGELES, &RouteOptions::default());
    let points = r.points();
    let biggest_step = points
        .windows(2)
        .map(|w| (w[1][0] - w[0][0]).abs())
        .fold(0.0, f64::max);
    assert!(
        biggest_step < 30.0,
        "a step of {biggest_step}° of longitude"
    );
    assert!(points.iter().any(|p| p[0] > 180.0), "never crossed 180°");
    let last = points.last().expect("non-empty");
    assert!((last[0] - (LOS_ANGELES.0 + 360.0)).abs() < 1e-9);
    assert_eq!(r.split_at_antimeridian().len(), 2);
    // Under 6,000 nm: the route crosses the Pacific, not the other way round the world.
    assert!(r.length_nm() < 6_000.0, "{} nm", r.length_nm());
}

#[test]
fn rotterdam_to_new_york_crosses_the_atlantic_through_no_named_passage() {
    let r = route(ROTTERDAM, NEW_YORK, &RouteOptions::default());
    assert!(r.passages().is_empty(), "{:?}", r.passages());
    assert!(
        (3_200.0..3_500.0).contains(&r.length_nm()),
        "{} nm",
        r.length_nm()
    );
}

#[test]
fn route_lengths_are_within_one_percent_of_python_searoute() {
    // Measured with PyPI searoute 1.6.0 (networkx 3.6.1, Python 3.11):
    // searoute(origin, destination, append_orig_dest=True, restrictions=[...])["properties"]["length"]
    type Case = ((f64, f64), (f64, f64), &'static [Passage], f64);
    let cases: [Case; 7] = [
        (ROTTERDAM, SHANGHAI, &[], 19_625.519),
        (ROTTERDAM, SHANGHAI, &[Passage::Suez], 25_033.178),
        (SHANGHAI, LOS_ANGELES, &[], 10_671.067),
        (ROTTERDAM, NEW_YORK, &[], 6_154.742),
        (NINGBO, SAVANNAH, &[], 19_171.378),
        (NINGBO, SAVANNAH, &[Passage::Panama], 23_713.659),
        (ROTTERDAM, SINGAPORE, &[Passage::Suez], 21_990.632),
    ];
    for (from, to, avoid, python_km) in cases {
        let km = route(from, to, &options_avoiding(avoid)).length_km();
        let diff = (km - python_km).abs() / python_km;
        assert!(diff < 0.01, "{from:?} -> {to:?}: {km} km vs {python_km} km");
    }
}

#[test]
fn every_route_point_is_a_network_node_except_the_two_ends() {
    for (from, to) in [
        (ROTTERDAM, SHANGHAI),
        (SHANGHAI, LOS_ANGELES),
        (NINGBO, SAVANNAH),
    ] {
        let r = route(from, to, &RouteOptions::default());
        let points = r.points();
        assert_eq!(points[0], [from.0, from.1]);
        let last = points[points.len() - 1];
        assert!((last[0] - to.0).rem_euclid(360.0) < 1e-9 && last[1] == to.1);
        for &p in &points[1..points.len() - 1] {
            assert!(is_network_node(p), "{p:?} is not a network node");
        }
    }
}

#[test]
fn the_first_and_last_legs_go_straight_to_the_nearest_network_node() {
    let r = route(ROTTERDAM, NEW_YORK, &RouteOptions::default());
    let points = r.points();
    let first_node = points[1];
    let nearest = router()
        .tree
        .nearest_neighbor(&unit_vector([ROTTERDAM.0, ROTTERDAM.1]))
        .expect("the network has nodes");
    assert_eq!(router().nodes[nearest.data as usize].lon_lat, first_node);
}

#[test]
fn a_route_and_its_reverse_have_the_same_length() {
    let there = route(NINGBO, SAVANNAH, &RouteOptions::default());
    let back = route(SAVANNAH, NINGBO, &RouteOptions::default());
    assert!((there.length_km() - back.length_km()).abs() < 1e-6);
}

#[test]
fn avoided_passages_are_never_used() {
    let avoid = [
        Passage::Suez,
        Passage::Panama,
        Passage::Malacca,
        Passage::Gibraltar,
    ];
    let r = route(SINGAPORE, NEW_YORK, &options_avoiding(&avoid));
    for p in avoid {
        assert!(!r.passages().contains(&p), "{:?}", r.passages());
    }
}

#[test]
fn cutting_every_way_between_two_oceans_is_no_route() {
    let avoid = [
        Passage::Suez,
        Passage::Panama,
        Passage::CapeOfGoodHope,
        Passage::CapeHorn,
        Passage::Bering,
    ];
    let result = router().route(ROTTERDAM, SHANGHAI, &options_avoiding(&avoid));
    assert_eq!(result, Err(RouteError::NoRoute));
}

#[test]
fn nan_infinite_and_out_of_range_coordinates_are_errors() {
    let ok = SHANGHAI;
    for bad in [
        (f64::NAN, 10.0),
        (10.0, f64::NAN),
        (f64::INFINITY, 0.0),
        (180.5, 0.0),
        (-181.0, 0.0),
        (0.0, 90.01),
        (0.0, -91.0),
    ] {
        let from_err = router().route(bad, ok, &RouteOptions::default());
        assert!(
            matches!(
                from_err,
                Err(RouteError::InvalidCoordinate {
                    endpoint: Endpoint::From,
                    ..
                })
            ),
            "{bad:?}: {from_err:?}"
        );
        let to_err = router().route(ok, bad, &RouteOptions::default());
        assert!(
            matches!(
                to_err,
                Err(RouteError::InvalidCoordinate {
                    endpoint: Endpoint::To,
                    ..
                })
            ),
            "{bad:?}: {to_err:?}"
        );
    }
}

#[test]
fn the_poles_and_the_antimeridian_itself_are_valid_inputs() {
    for p in [(180.0, 0.0), (-180.0, -10.0), (0.0, 90.0), (0.0, -90.0)] {
        assert!(
            router()
                .route(p, SHANGHAI, &RouteOptions::default())
                .is_ok(),
            "{p:?}"
        );
    }
}

#[test]
fn a_route_from_a_point_to_itself_has_zero_length() {
    let r = route(SHANGHAI, SHANGHAI, &RouteOptions::default());
    assert_eq!(r.length_km(), 0.0);
    assert_eq!(r.points(), &[[SHANGHAI.0, SHANGHAI.1]]);
}

#[test]
fn positions_along_a_real_route_run_from_start_to_end_with_valid_headings() {
    let r = route(SHANGHAI, LOS_ANGELES, &RouteOptions::default());
    let start = r.point_at_fraction(0.0);
    assert_eq!((start.lon, start.lat), SHANGHAI);
    let end = r.point_at_fraction(1.0);
    assert!((end.lon - LOS_ANGELES.0).abs() < 1e-9 && (end.lat - LOS_ANGELES.1).abs() < 1e-9);
    let mut crossed = false;
    for i in 0..=100 {
        let p = r.point_at_fraction(f64::from(i) / 100.0);
        assert!(
            (-180.0..=180.0).contains(&p.lon) && (0.0..360.0).contains(&p.heading),
            "{p:?}"
        );
        // Just past 180° the wrapped longitude is near −180.
        crossed |= p.lon < -150.0;
    }
    assert!(crossed);
    // Halfway across the Pacific the ship heads roughly east.
    let mid = r.point_at_fraction(0.5);
    assert!((30.0..150.0).contains(&mid.heading), "{mid:?}");
}

#[test]
fn a_point_at_a_distance_lies_that_far_along_the_route() {
    let r = route(ROTTERDAM, NEW_YORK, &RouteOptions::default());
    let p = r.point_at_km(1_000.0);
    // The first 1,000 km go down the Channel: still within 1,000 km of Rotterdam.
    let crow = haversine_km([ROTTERDAM.0, ROTTERDAM.1], [p.lon, p.lat]);
    assert!(crow <= 1_000.0 + 1e-6 && crow > 500.0, "{crow} km");
}

#[test]
fn the_default_options_avoid_only_the_northwest_passage() {
    assert_eq!(RouteOptions::default().avoid, vec![Passage::Northwest]);
    assert!(RouteOptions::allowing_all().avoid.is_empty());
    let twice = RouteOptions::default()
        .avoiding(Passage::Suez)
        .avoiding(Passage::Suez);
    assert_eq!(twice.avoid, vec![Passage::Northwest, Passage::Suez]);
}

#[test]
fn options_deserialize_from_our_and_searoute_names_and_default_when_empty() {
    let options: RouteOptions =
        serde_json::from_str(r#"{"avoid": ["suez", "babalmandab"]}"#).expect("parses");
    assert_eq!(options.avoid, vec![Passage::Suez, Passage::BabElMandeb]);
    let empty: RouteOptions = serde_json::from_str("{}").expect("parses");
    assert_eq!(empty, RouteOptions::default());
}

#[test]
fn a_garbage_network_file_is_an_error() {
    assert!(SeaRouter::from_bytes(b"not a network").is_err());
}

fn two_node_network(edges: &[(u32, u32)]) -> NetworkData {
    NetworkData {
        nodes: vec![[0, 0], [1_000_000, 0]],
        edges: edges
            .iter()
            .map(|&(a, b)| format::EdgeRecord {
                a,
                b,
                kind: EdgeKind::Plain,
            })
            .collect(),
    }
}

#[test]
fn a_network_with_a_repeated_self_looping_or_dangling_edge_is_an_error_not_a_panic() {
    for edges in [&[(0, 1), (1, 0)][..], &[(1, 1)], &[(0, 2)]] {
        assert!(
            SeaRouter::from_data(&two_node_network(edges)).is_err(),
            "{edges:?}"
        );
    }
}

#[test]
fn a_tiny_network_routes_along_its_one_edge() {
    let router = SeaRouter::from_data(&two_node_network(&[(0, 1)])).expect("valid");
    let r = router
        .route((0.0, 0.5), (1.0, 0.5), &RouteOptions::default())
        .expect("connected");
    assert_eq!(
        r.points(),
        &[[0.0, 0.5], [0.0, 0.0], [1.0, 0.0], [1.0, 0.5]]
    );
}

#[test]
fn an_empty_network_has_no_route() {
    let router = SeaRouter::from_data(&NetworkData::default()).expect("valid");
    let result = router.route((0.0, 0.0), (1.0, 1.0), &RouteOptions::default());
    assert_eq!(result, Err(RouteError::NoRoute));
}

/// Edges of searoute-py's network files as sorted coordinate pairs (micro-degrees) with
/// their kind, the last tag given winning, as searoute-py builds its graph.
fn source_edges() -> std::collections::HashMap<[[i32; 2]; 2], EdgeKind> {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/reference/searoute"
    );
    let mut edges = std::collections::HashMap::new();
    for file in ["marnet_searoute.geojson", "segment.geojson"] {
        let text = std::fs::read_to_string(format!("{dir}/{file}")).expect("source readable");
        let json: serde_json::Value = serde_json::from_str(&text).expect("source is JSON");
        for feature in json["features"].as_array().expect("features") {
            let kind = match feature["properties"]["passage"].as_str() {
                None => None,
                Some("segment" | "segment2") => Some(EdgeKind::Plain),
                Some("pacific_ocean") => Some(EdgeKind::AntimeridianLink),
                Some(tag) => Some(EdgeKind::Passage(
                    Passage::from_searoute_name(tag).expect("known tag"),
                )),
            };
            let coords = &feature["geometry"]["coordinates"];
            let lines: Vec<&serde_json::Value> = match feature["geometry"]["type"].as_str() {
                Some("LineString") => vec![coords],
                _ => coords.as_array().expect("lines").iter().collect(),
            };
            for line in lines {
                let points: Vec<[i32; 2]> = line
                    .as_array()
                    .expect("points")
                    .iter()
                    .map(|c| {
                        let axis = |i: usize| (c[i].as_f64().expect("number") * 1e6).round() as i32;
                        [axis(0), axis(1)]
                    })
                    .collect();
                for w in points.windows(2) {
                    if w[0] == w[1] {
                        continue;
                    }
                    let key = [w[0].min(w[1]), w[0].max(w[1])];
                    let slot = edges.entry(key).or_insert(EdgeKind::Plain);
                    if let Some(kind) = kind {
                        *slot = kind;
                    }
                }
            }
        }
    }
    edges
}

#[test]
fn the_embedded_network_is_searoute_py_network_with_the_one_documented_correction() {
    let data = NetworkData::from_bytes(MARNET_BIN).expect("embedded network decodes");
    let embedded: std::collections::HashMap<[[i32; 2]; 2], EdgeKind> = data
        .edges
        .iter()
        .map(|e| {
            let (a, b) = (data.nodes[e.a as usize], data.nodes[e.b as usize]);
            ([a.min(b), a.max(b)], e.kind)
        })
        .collect();
    let mut expected = source_edges();
    // See examples/generate_marnet.rs: a lane round the Cape the source left untagged.
    let cape = [[20_000_000, -40_000_000], [22_000_000, -35_000_000]];
    assert_eq!(
        expected.insert(cape, EdgeKind::Passage(Passage::CapeOfGoodHope)),
        Some(EdgeKind::Plain)
    );
    assert_eq!(embedded.len(), data.edges.len(), "an edge is stored twice");
    assert_eq!(embedded, expected);
}
