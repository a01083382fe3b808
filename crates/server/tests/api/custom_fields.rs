//! Custom fields: definitions, options and values, over HTTP.
