//! Documents' parts of `App`: the bytes in object storage ([`storage`]), signed links and
//! upload ids ([`signing`]), and the child process that reads files under OS limits
//! ([`isolate`]).

pub mod isolate;
pub mod signing;
pub mod storage;
