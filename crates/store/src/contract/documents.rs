//! The [`DocumentStore`](crate::DocumentStore) part of the contract.

/// Expands this part's cases; called by [`store_contract_tests!`](crate::store_contract_tests).
#[macro_export]
macro_rules! document_contract_tests {
    ($backend:path) => {
        $crate::store_contract_tests!(@cases_in documents $backend;
        );
    };
}
