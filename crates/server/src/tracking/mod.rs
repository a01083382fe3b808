//! Use cases of tracking: accepting tracking requests (and, next, following them with the
//! carriers). Shared by the API and the workers.

pub mod requests;
