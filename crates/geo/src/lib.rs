//! Geography: ports and time zones, sea routing, AIS decoding, GeoJSON. Depends on `domain` only.

pub mod reference;
