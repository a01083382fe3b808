//! The error a setting that fails validation stops start-up with. Apart from the settings
//! themselves, so that what validates a part of them (`crate::limits`) needs only this.

/// A setting that failed validation, named as the operator writes it.
#[derive(Debug, thiserror::Error)]
#[error("invalid setting {setting}: {reason}")]
pub struct ConfigError {
    pub setting: String,
    pub reason: String,
}
