//! Webhooks: the catalogue of events, signing, the guard against deliveries to private
//! addresses, and validation of what users register.

pub mod address;
pub mod catalogue;
pub mod deliver;
pub mod egress;
pub mod example;
pub mod headers;
pub mod manage;
pub mod payload;
pub mod signing;
