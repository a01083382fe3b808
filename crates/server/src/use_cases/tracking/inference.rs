//! Number → carrier for the API: the domain's inference
//! (`tidemark_domain::carriers::inference`) with each candidate's name from the
//! shipping-line reference.

use tidemark_domain::carriers::inference::{self, InferError, Inference};

use crate::parts::core::Core;

/// A candidate line, named.
#[derive(Clone, Debug, PartialEq)]
pub struct LineGuess {
    pub scac: String,
    pub name: String,
    /// From 0 to 1.
    pub confidence: f64,
}

/// What is known about a number.
#[derive(Clone, Debug, PartialEq)]
pub struct NumberInference {
    pub inference: Inference,
    /// The inference's candidates with their names.
    pub candidates: Vec<LineGuess>,
}

impl NumberInference {
    /// The line chosen without asking, if any.
    pub fn selected(&self) -> Option<&LineGuess> {
        self.inference
            .selected()
            .and_then(|chosen| self.candidates.iter().find(|c| c.scac == chosen.scac))
    }
}

/// Infers the type and carrier of `number`.
pub fn infer(core: &Core, number: &str) -> Result<NumberInference, InferError> {
    let inference = inference::infer(number)?;
    let candidates = inference
        .candidates
        .iter()
        .filter_map(|candidate| {
            // The prefix table names only lines of the reference (a test checks it).
            let line = core.reference.shipping_line(&candidate.scac)?;
            Some(LineGuess {
                scac: line.scac.clone(),
                name: line.name.clone(),
                confidence: candidate.confidence,
            })
        })
        .collect();
    Ok(NumberInference {
        inference,
        candidates,
    })
}

#[cfg(test)]
mod tests {
    use tidemark_geo::reference::ReferenceData;

    #[test]
    fn every_line_the_prefix_table_names_is_in_the_shipping_line_reference() {
        let reference = ReferenceData::embedded();

        let unknown: Vec<&str> = tidemark_domain::carriers::inference::inferable_scacs()
            .into_iter()
            .filter(|scac| reference.shipping_line(scac).is_none())
            .collect();

        assert!(unknown.is_empty(), "{unknown:?}");
    }
}
