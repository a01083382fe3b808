//! The [`VesselStore`](crate::VesselStore) part of the contract.

/// Expands this part's cases; called by [`store_contract_tests!`](crate::store_contract_tests).
#[macro_export]
macro_rules! vessel_contract_tests {
    ($backend:path) => {
        $crate::store_contract_tests!(@cases_in vessels $backend;
        );
    };
}
