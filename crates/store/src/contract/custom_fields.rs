//! The [`CustomFieldStore`](crate::CustomFieldStore) part of the contract.

/// Expands this part's cases; called by [`store_contract_tests!`](crate::store_contract_tests).
#[macro_export]
macro_rules! custom_field_contract_tests {
    ($backend:path) => {
        $crate::store_contract_tests!(@cases_in custom_fields $backend;
        );
    };
}
