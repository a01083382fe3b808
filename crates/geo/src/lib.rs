//! Geography: ports and time zones, sea routing, AIS decoding, GeoJSON. Depends on `domain` only.

pub mod ais;
pub mod future;
pub mod map;
mod place_names;
mod place_zones;
pub mod reference;
pub mod searoute;
