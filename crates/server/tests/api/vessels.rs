//! Vessels, their positions and future positions, over HTTP.
