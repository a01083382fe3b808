//! Geography: ports and time zones, sea routing, AIS decoding, GeoJSON. Depends on `domain` only.

pub mod ais;
pub mod future;
pub mod map;
pub mod reference;
pub mod searoute;
