//! Webhooks without a database: Terminal49's catalogue of events (`catalogue`), signing in
//! Terminal49's and the Standard Webhooks' schemes (`signing`), the guard that keeps
//! deliveries away from private and reserved addresses (`address`), and validation of the
//! URL and headers users register (`headers`).

pub mod address;
pub mod catalogue;
pub mod headers;
pub mod signing;
